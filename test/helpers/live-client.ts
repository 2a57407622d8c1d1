import { Connection, type Keypair, VersionedTransaction } from "@solana/web3.js";

/**
 * A client written for the live service, as its own command-line client uses it (api-live, "How the
 * service's own command-line client uses it"): plain fetch, @solana/web3.js to sign, the service's field
 * names. It shares no code with Keeper's API client or schemas on purpose: pointed at the sandbox, it
 * shows the sandbox answers what a client of the live service expects.
 */

type Json = Record<string, unknown>;

/** A refusal of the service: HTTP status, the error `code` when it sent one, and its body. */
export class LiveServiceError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    readonly body: unknown,
    what: string,
  ) {
    super(`${what}: HTTP ${status}${code ? ` ${code}` : ""}: ${JSON.stringify(body)}`);
  }
}

export interface LiveClientOptions {
  readonly baseUrl: string;
  /** Without one the live service answers at its keyless limits. */
  readonly apiKey?: string;
  readonly wallet: Keypair;
  /** For the path other published guidance takes: claims sent straight to an RPC. */
  readonly rpcUrl?: string;
}

/** A USD amount or price as the service sends it: an integer string of micro-USD (650000 is $0.65). */
export function microUsd(value: unknown, field: string): bigint {
  if (typeof value !== "string" || !/^-?\d+$/.test(value))
    throw new Error(`${field}: expected an integer string of micro-USD, got ${JSON.stringify(value)}`);
  return BigInt(value);
}

/** `txMeta.lastValidBlockHeight`: the CLI declares a string, the reference an integer; both are taken. */
export function lastValidBlockHeightOf(txMeta: unknown): number {
  const value = (txMeta as Json | undefined)?.lastValidBlockHeight;
  if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) return value;
  if (typeof value === "string" && /^\d+$/.test(value) && Number.isSafeInteger(Number(value)))
    return Number(value);
  throw new Error(`txMeta.lastValidBlockHeight: expected an integer or a decimal string, got ${value}`);
}

/** An event's `beginAt`: a string of Unix seconds, or null for an event without a start. */
function beginAtOf(event: Json): number | null {
  if (event.beginAt === null || event.beginAt === undefined) return null;
  if (typeof event.beginAt !== "string" || !/^\d+$/.test(event.beginAt))
    throw new Error(
      `event ${event.eventId} beginAt: expected a string of Unix seconds, got ${JSON.stringify(event.beginAt)}`,
    );
  return Number(event.beginAt);
}

/** The CLI's rule for a claim candidate: not claimed, and the market's result is the position's side. */
export function isClaimCandidate(position: Json): boolean {
  const result = (position.marketMetadata as Json | undefined)?.result;
  return position.claimed !== true && result === (position.isYes === true ? "yes" : "no");
}

export interface EventListQuery {
  readonly provider?: string;
  readonly sortBy?: "volume" | "volume24hr" | "beginAt";
  readonly sortDirection?: "asc" | "desc";
  readonly filter?: "new" | "live" | "trending" | "upcoming";
  readonly includeMarkets?: boolean;
  readonly start?: number;
  readonly end?: number;
}

/** One transaction sent, what it did, and the signature the service (or the RPC) answered. */
export interface Sent {
  readonly kind: "open" | "close" | "claim";
  readonly positionPubkey: string;
  readonly signature: string;
}

export type ClaimOutcome =
  | { readonly status: "claimed"; readonly signature: string; readonly payoutMicroUsd: bigint }
  | { readonly status: "not_yet" }
  /** The market pays its winners by itself (Forecast, or one that needs no claim): nothing to send. */
  | { readonly status: "no_claim_required" }
  /** Not a claim candidate: not a winner, no result yet, or claimed already (by the service, maybe). */
  | { readonly status: "nothing_to_claim" };

export function createLiveClient(options: LiveClientOptions) {
  const owner = options.wallet.publicKey.toBase58();
  const base = `${options.baseUrl.replace(/\/$/, "")}/prediction/v1`;

  async function call(method: string, path: string, body?: unknown): Promise<Json> {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: {
        ...(options.apiKey === undefined ? {} : { "x-api-key": options.apiKey }),
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    const json = text === "" ? {} : (JSON.parse(text) as Json);
    if (!response.ok) {
      const code = typeof json.code === "string" ? json.code : undefined;
      throw new LiveServiceError(response.status, code, json, `${method} ${path}`);
    }
    return json;
  }

  /** Signs as the wallet, keeping any slot another signer (the service, at execute) fills. */
  function sign(build: Json): string {
    const signers = build.requiredSigners;
    if (Array.isArray(signers) && !signers.includes(owner))
      throw new Error(`requiredSigners ${JSON.stringify(signers)} does not name the wallet ${owner}`);
    // A build whose txMeta cannot be read (an integer or a decimal string) is not signed.
    lastValidBlockHeightOf(build.txMeta);
    const tx = VersionedTransaction.deserialize(Buffer.from(String(build.transaction), "base64"));
    tx.sign([options.wallet]);
    return Buffer.from(tx.serialize()).toString("base64");
  }

  /** The CLI's way back: `{ signedTransaction }` to /orders/execute, reading `{ signature }`. */
  async function executeOrder(build: Json): Promise<string> {
    const answer = await call("POST", "/orders/execute", { signedTransaction: sign(build) });
    if (typeof answer.signature !== "string") throw new Error(`no signature: ${JSON.stringify(answer)}`);
    return answer.signature;
  }

  /** The reference's way back: /execute with the build's `execution.context`, unchanged. */
  async function execute(build: Json): Promise<string> {
    const context = (build.execution as Json | undefined)?.context;
    const answer = await call("POST", "/execute", { signedTransaction: sign(build), context });
    if (answer.status !== "Success" || typeof answer.signature !== "string")
      throw new Error(`execute did not succeed: ${JSON.stringify(answer)}`);
    return answer.signature;
  }

  /**
   * Other published guidance: the signed claim straight to an RPC, then its status polled until
   * confirmed, or until the chain passes the build's last valid block height.
   */
  async function sendToRpc(build: Json): Promise<string> {
    if (options.rpcUrl === undefined) throw new Error("rpcUrl: required to send to an RPC");
    const connection = new Connection(options.rpcUrl, "confirmed");
    const lastValidBlockHeight = lastValidBlockHeightOf(build.txMeta);
    const signature = await connection.sendRawTransaction(Buffer.from(sign(build), "base64"));
    for (;;) {
      const status = (await connection.getSignatureStatuses([signature])).value[0];
      if (status?.err) throw new Error(`${signature} failed on chain: ${JSON.stringify(status.err)}`);
      if (status?.confirmationStatus === "confirmed" || status?.confirmationStatus === "finalized")
        return signature;
      if ((await connection.getBlockHeight("confirmed")) > lastValidBlockHeight)
        throw new Error(`${signature} expired: past block height ${lastValidBlockHeight}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  async function getPosition(positionPubkey: string): Promise<Json> {
    return call("GET", `/positions/${positionPubkey}`);
  }

  return {
    owner,

    /**
     * Events as the CLI lists them: every one must carry `volume24hr`, read here as micro-USD, and
     * `beginAt` is a string of Unix seconds (or null).
     */
    async listEvents(
      query: EventListQuery = {},
    ): Promise<(Json & { volume24hrMicroUsd: bigint; beginAtSeconds: number | null })[]> {
      const params = new URLSearchParams();
      for (const [name, value] of Object.entries(query))
        if (value !== undefined) params.set(name, String(value));
      const { data } = (await call("GET", `/events?${params}`)) as { data: Json[] };
      return data.map((event) => ({
        ...event,
        volume24hrMicroUsd: microUsd(event.volume24hr, `event ${event.eventId} volume24hr`),
        beginAtSeconds: beginAtOf(event),
      }));
    },

    /** Search as the CLI sends it: with `includeMarkets=true`, which the reference does not list. */
    async searchEvents(query: string, limit = 10): Promise<Json[]> {
      const params = new URLSearchParams({ query, limit: String(limit), includeMarkets: "true" });
      return ((await call("GET", `/events/search?${params}`)) as { data: Json[] }).data;
    },

    /** Every open position of the wallet, page by page. */
    async listPositions(): Promise<Json[]> {
      const all: Json[] = [];
      for (let start = 0; ; start += 100) {
        const page = await call("GET", `/positions?ownerPubkey=${owner}&start=${start}&end=${start + 100}`);
        all.push(...(page.data as Json[]));
        if ((page.pagination as Json | undefined)?.hasNext !== true) return all;
      }
    },

    getPosition,

    /**
     * Opens (or adds to) a position: POST /orders, then the signed build back to the service, the
     * CLI's /orders/execute by default or the reference's /execute with the build's context.
     */
    async open(order: {
      readonly marketId: string;
      readonly isYes: boolean;
      readonly amountMicroUsd: bigint;
      /** USDC or JupUSD: the amount is in its smallest unit (micro-USD). */
      readonly depositMint: string;
      readonly maxBuyPriceMicroUsd: bigint;
      readonly via?: "orders/execute" | "execute";
    }): Promise<Sent & { build: Json }> {
      const build = await call("POST", "/orders", {
        ownerPubkey: owner,
        marketId: order.marketId,
        isYes: order.isYes,
        isBuy: true,
        depositAmount: String(order.amountMicroUsd),
        depositMint: order.depositMint,
        maxBuyPriceUsd: String(order.maxBuyPriceMicroUsd),
      });
      const positionPubkey = String((build.order as Json).positionPubkey);
      const signature = order.via === "execute" ? await execute(build) : await executeOrder(build);
      return { kind: "open", positionPubkey, signature, build };
    },

    /** Closes one position, read first as the CLI does; the body is the owner only. */
    async closeOne(
      positionPubkey: string,
      via: "orders/execute" | "execute" = "orders/execute",
    ): Promise<Sent & { proceedsMicroUsd: bigint }> {
      await getPosition(positionPubkey);
      const build = await call("DELETE", `/positions/${positionPubkey}`, { ownerPubkey: owner });
      const order = build.order as Json;
      const proceeds =
        microUsd(order.orderCostUsd, "order.orderCostUsd") -
        microUsd(order.estimatedTotalFeeUsd, "order.estimatedTotalFeeUsd");
      const signature = via === "execute" ? await execute(build) : await executeOrder(build);
      return { kind: "close", positionPubkey, signature, proceedsMicroUsd: proceeds };
    },

    /** Closes all: each item of the answer, a sell or a claim of a winner, signed and executed. */
    async closeAll(minSellPriceSlippageBps: number): Promise<(Sent & { amountMicroUsd: bigint })[]> {
      const { data } = (await call("DELETE", "/positions", {
        ownerPubkey: owner,
        minSellPriceSlippageBps,
      })) as {
        data: Json[];
      };
      const sent: (Sent & { amountMicroUsd: bigint })[] = [];
      for (const item of data) {
        const signature = await executeOrder(item);
        if (item.order !== undefined) {
          const order = item.order as Json;
          const amount =
            microUsd(order.orderCostUsd, "order.orderCostUsd") -
            microUsd(order.estimatedTotalFeeUsd, "order.estimatedTotalFeeUsd");
          sent.push({
            kind: "close",
            positionPubkey: String(order.positionPubkey),
            signature,
            amountMicroUsd: amount,
          });
        } else {
          const position = item.position as Json;
          const amount = microUsd(position.payoutAmountUsd, "position.payoutAmountUsd");
          sent.push({
            kind: "claim",
            positionPubkey: String(position.positionPubkey),
            signature,
            amountMicroUsd: amount,
          });
        }
      }
      return sent;
    },

    /**
     * Claims one position, read first: a candidate by the CLI's rule, `market_not_settled` means not
     * yet, `no_claim_required` that the market pays by itself. Sent back through the service (the CLI) or straight to an RPC (other guidance).
     */
    async claim(
      positionPubkey: string,
      via: "orders/execute" | "rpc" = "orders/execute",
    ): Promise<ClaimOutcome> {
      const position = await getPosition(positionPubkey);
      if (!isClaimCandidate(position)) return { status: "nothing_to_claim" };
      let build: Json;
      try {
        build = await call("POST", `/positions/${positionPubkey}/claim`, { ownerPubkey: owner });
      } catch (error) {
        if (error instanceof LiveServiceError && error.code === "market_not_settled")
          return { status: "not_yet" };
        if (error instanceof LiveServiceError && error.code === "no_claim_required")
          return { status: "no_claim_required" };
        throw error;
      }
      const payout = microUsd((build.position as Json).payoutAmountUsd, "position.payoutAmountUsd");
      const signature = via === "rpc" ? await sendToRpc(build) : await executeOrder(build);
      return { status: "claimed", signature, payoutMicroUsd: payout };
    },
  };
}

export type LiveClient = ReturnType<typeof createLiveClient>;
