/**
 * The baseline: a claim bot the way most are written. One sequential loop: for each wallet, GET its
 * positions (every page), and for each claimable one POST claim, sign, send, wait for confirmation.
 * No pacing, no queue, no ledger; after a 429 it sleeps a fixed time and tries again.
 *
 * web3.js's `sendAndConfirmTransaction` confirms through a websocket signature subscription, and only
 * asks for the status over HTTP once that subscription is up. The local chain has no websocket, so it
 * would wait until the blockhash expires and then throw even for a landed transaction. The loop
 * therefore does what that helper amounts to over HTTP: `sendRawTransaction` (with preflight, the
 * default) and then `getSignatureStatuses` every 400 ms until confirmed (bounded).
 */
import { Connection, type Keypair, VersionedTransaction } from "@solana/web3.js";
import { REQUEST_KIND, type RequestEvent, type RequestKind } from "./protocol.js";

const CONFIRM_POLL_MS = 400;
const CONFIRM_TIMEOUT_MS = 60_000;
const PAGE_SIZE = 100;

interface RawPosition {
  readonly pubkey: string;
  readonly ownerPubkey: string;
  readonly claimable: boolean;
  readonly claimed: boolean;
}

interface RawPage {
  readonly data: RawPosition[];
  readonly pagination: { readonly end: number; readonly hasNext: boolean };
}

export interface NaiveBotOptions {
  readonly serviceUrl: string;
  readonly apiKey: string;
  readonly rpcUrl: string;
  readonly wallets: readonly string[];
  readonly keypairOf: (walletIndex: number) => Keypair;
  readonly retrySleepMs: number;
  /** Nothing is started after this (epoch ms); every loop checks it. */
  readonly deadlineMs: number;
}

export interface NaiveProgress {
  /** 1-based sweep in progress, and wallets finished in it. */
  sweep: number;
  walletsDone: number;
  errors: number;
  lastError?: string;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class NaiveBot {
  readonly events: RequestEvent[] = [];
  /** Position pubkey -> epoch ms its claim was seen confirmed. */
  readonly confirmedAt = new Map<string, number>();
  readonly progress: NaiveProgress = { sweep: 0, walletsDone: 0, errors: 0 };
  #stopped = false;
  readonly #connection: Connection;

  constructor(private readonly options: NaiveBotOptions) {
    this.#connection = new Connection(options.rpcUrl, { commitment: "confirmed" });
  }

  stop(): void {
    this.#stopped = true;
  }

  get #done(): boolean {
    return this.#stopped || Date.now() >= this.options.deadlineMs;
  }

  /** Sweeps until stopped or the deadline passes; `onWallet` runs after every wallet. */
  async run(onWallet: () => void): Promise<void> {
    while (!this.#done) {
      this.progress.sweep += 1;
      this.progress.walletsDone = 0;
      for (const [index, wallet] of this.options.wallets.entries()) {
        if (this.#done) return;
        try {
          await this.#wallet(index, wallet);
        } catch (error) {
          this.progress.errors += 1;
          this.progress.lastError = (error as Error).message;
        }
        this.progress.walletsDone += 1;
        onWallet();
      }
    }
  }

  async #wallet(index: number, wallet: string): Promise<void> {
    let start = 0;
    for (let page = 0; page < 100; page++) {
      const query = new URLSearchParams({
        ownerPubkey: wallet,
        start: String(start),
        end: String(start + PAGE_SIZE),
      });
      const body = (await this.#request(
        REQUEST_KIND.positions,
        index,
        `/prediction/v1/positions?${query}`,
      )) as RawPage;
      for (const position of body.data)
        if (position.claimable && !position.claimed) await this.#claim(index, position);
      if (!body.pagination.hasNext) return;
      start = Math.max(body.pagination.end, start + body.data.length);
    }
  }

  async #claim(index: number, position: RawPosition): Promise<void> {
    const built = (await this.#request(
      REQUEST_KIND.claim,
      index,
      `/prediction/v1/positions/${position.pubkey}/claim`,
      { ownerPubkey: position.ownerPubkey },
    )) as { transaction: string };
    const transaction = VersionedTransaction.deserialize(Buffer.from(built.transaction, "base64"));
    transaction.sign([this.options.keypairOf(index)]);
    const signature = await this.#connection.sendRawTransaction(transaction.serialize());
    const until = Date.now() + CONFIRM_TIMEOUT_MS;
    while (Date.now() < until && !this.#stopped) {
      const { value } = await this.#connection.getSignatureStatuses([signature]);
      const status = value[0];
      if (status?.err) throw new Error(`claim ${position.pubkey} failed on chain`);
      if (status?.confirmationStatus === "confirmed" || status?.confirmationStatus === "finalized") {
        this.confirmedAt.set(position.pubkey, Date.now());
        return;
      }
      await sleep(CONFIRM_POLL_MS);
    }
    throw new Error(`claim ${position.pubkey} not confirmed within ${CONFIRM_TIMEOUT_MS} ms`);
  }

  /** One call, retried after a fixed sleep while the service answers 429 (bounded by the deadline). */
  async #request(kind: RequestKind, wallet: number, path: string, body?: unknown): Promise<unknown> {
    for (;;) {
      const sentAt = Date.now();
      const response = await fetch(`${this.options.serviceUrl}${path}`, {
        method: body === undefined ? "GET" : "POST",
        headers: {
          "x-api-key": this.options.apiKey,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      this.events.push([sentAt, kind, wallet, response.status]);
      const text = await response.text();
      if (response.status === 429) {
        if (this.#done) throw new Error("stopped while rate limited");
        await sleep(this.options.retrySleepMs);
        continue;
      }
      if (!response.ok) throw new Error(`${path.split("?")[0]}: HTTP ${response.status}`);
      return JSON.parse(text) as unknown;
    }
  }
}
