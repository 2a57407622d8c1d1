import type { Connection, SignatureStatus, TransactionConfirmationStatus } from "@solana/web3.js";
import pino from "pino";
import { vi } from "vitest";
import {
  type SendAndConfirmInput,
  type SendOutcome,
  sendAndConfirm,
} from "../../../src/chain/send-and-confirm.js";
import { PermanentError } from "../../../src/core/errors.js";
import { createCaptureStream } from "../../../src/ops/capture-stream.js";

/**
 * A small stand-in for the RPC nodes sendAndConfirm talks to (outside the process, not ours). One
 * chain, seen through any number of nodes. The chain moves on by itself: every block-height read
 * moves it `heightStep` blocks, and every status read moves the clock (performance.now, which the
 * chain owns for the test) `stepMs` on. So a wait ends by the chain's rules, never by a timer.
 */

export const SIGNATURE = "5ignatureOfTheTransactionUnderTest";
export const BLOCKHASH = "BlockhashTheTransactionWasSignedWith";
export const BYTES = Uint8Array.from([1, 2, 3, 250, 251, 252]);
export const START_HEIGHT = 1_000;
export const LAST_VALID = 1_050;

export type Method = "send" | "status" | "height" | "blockhash";

export interface StatusRead {
  /** 1 for the first status read of the main node. */
  n: number;
  /** A search of the transaction history (the last check before `expired`). */
  history: boolean;
  /** Broadcasts any node accepted so far. */
  sends: number;
  /** The chain's (confirmed) block height now. */
  height: number;
}

export function status(
  confirmationStatus: TransactionConfirmationStatus | undefined,
  extra: Partial<SignatureStatus> = {},
): SignatureStatus {
  const base: SignatureStatus = { slot: 4_242, confirmations: 3, err: null, ...extra };
  return confirmationStatus === undefined ? base : { ...base, confirmationStatus };
}

/** A JSON-RPC error a node answers with; codes such as -32601 are for good, others pass. */
export function rpcError(message: string, code?: number): Error {
  return Object.assign(new Error(message), code === undefined ? {} : { code });
}

export class FakeNode {
  readonly calls: Record<Method, number> = { send: 0, status: 0, height: 0, blockhash: 0 };
  /** An error to throw on a method's n-th call (1-based), if any. */
  readonly faults: Partial<Record<Method, (n: number) => Error | undefined>> = {};
  readonly connection: Connection;

  constructor(
    readonly chain: FakeChain,
    readonly name: string,
  ) {
    this.connection = {
      sendRawTransaction: async (bytes: Uint8Array, options: unknown) => {
        this.enter("send");
        chain.sends.push({ node: name, at: chain.now, bytes: Uint8Array.from(bytes), options });
        return SIGNATURE;
      },
      getSignatureStatuses: async (signatures: string[], config?: { searchTransactionHistory?: boolean }) => {
        const n = this.enter("status");
        chain.reads += 1;
        if (chain.reads > chain.budget) {
          throw new PermanentError("fake node: read budget spent (a wait that does not end)");
        }
        chain.now += chain.stepMs;
        const history = config?.searchTransactionHistory === true;
        chain.statusReads.push({ node: name, history, at: chain.now, height: chain.height });
        const read = { n, history, sends: chain.sends.length, height: chain.height };
        const found = signatures[0] === SIGNATURE ? chain.status(read) : null;
        return { context: { slot: 1 }, value: [found] };
      },
      getBlockHeight: async (commitment?: string) => {
        this.enter("height");
        chain.height += chain.heightStep;
        chain.heightReads.push(commitment);
        // A processed view runs ahead of the confirmed one, a finalized one lags it.
        const offset = { processed: 2, confirmed: 0, finalized: -32 }[commitment ?? ""];
        if (offset === undefined) throw rpcError(`invalid commitment ${String(commitment)}`, -32602);
        return chain.height + offset;
      },
      isBlockhashValid: async (blockhash: string, config?: { commitment?: string }) => {
        this.enter("blockhash");
        chain.blockhashChecks.push({ blockhash, commitment: config?.commitment, height: chain.height });
        return { context: { slot: 1 }, value: blockhash === BLOCKHASH && chain.blockhashValid(chain.height) };
      },
    } as unknown as Connection;
  }

  private enter(method: Method): number {
    this.calls[method] += 1;
    const fault = this.faults[method]?.(this.calls[method]);
    if (fault) throw fault;
    return this.calls[method];
  }
}

export class FakeChain {
  /** The test's clock (performance.now), in ms. */
  now = 0;
  stepMs = 100;
  height = START_HEIGHT;
  heightStep = 1;
  /** Status reads allowed in all: a wait that never ends fails the test instead of hanging it. */
  budget = 400;
  reads = 0;
  readonly sends: { node: string; at: number; bytes: Uint8Array; options: unknown }[] = [];
  readonly statusReads: { node: string; history: boolean; at: number; height: number }[] = [];
  readonly heightReads: (string | undefined)[] = [];
  readonly blockhashChecks: { blockhash: string; commitment: unknown; height: number }[] = [];
  /** What a status read finds (default: nothing, a dropped transaction). */
  status: (read: StatusRead) => SignatureStatus | null = () => null;
  /** Whether the node still accepts the blockhash at this height. */
  blockhashValid: (height: number) => boolean = (height) => height <= LAST_VALID;
  readonly main: FakeNode;
  readonly logs = createCaptureStream();
  readonly logger = pino({ level: "debug" }, this.logs);

  constructor() {
    this.main = new FakeNode(this, "main");
    vi.spyOn(performance, "now").mockImplementation(() => this.now);
  }

  node(name: string): FakeNode {
    return new FakeNode(this, name);
  }

  sendTimes(node = "main"): number[] {
    return this.sends.filter((send) => send.node === node).map((send) => send.at);
  }

  /** Log records with this message. */
  logged(msg: string): Record<string, unknown>[] {
    return this.logs.records().filter((record) => record.msg === msg);
  }

  run(overrides: Partial<SendAndConfirmInput> = {}): Promise<SendOutcome> {
    return sendAndConfirm(this.input(overrides));
  }

  input(overrides: Partial<SendAndConfirmInput> = {}): SendAndConfirmInput {
    return {
      connection: this.main.connection,
      signedTransaction: BYTES,
      signature: SIGNATURE,
      recentBlockhash: BLOCKHASH,
      lastValidBlockHeight: LAST_VALID,
      pollIntervalMs: 1,
      rebroadcastIntervalMs: 250,
      logger: this.logger,
      ...overrides,
    };
  }
}

/** Statuses answered one per read, the last one repeated. */
export function inTurn(
  ...statuses: (SignatureStatus | null)[]
): (read: StatusRead) => SignatureStatus | null {
  return (read) => statuses[Math.min(read.n, statuses.length) - 1] ?? null;
}
