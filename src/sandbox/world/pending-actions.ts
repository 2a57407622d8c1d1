import type { PositionRecord } from "./positions.js";
import type { SwapOrderRecord } from "./world.js";

export type OrderDraft = Omit<SwapOrderRecord, "status" | "createdAt" | "signature">;

export type RequestKind = "trigger" | "trigger-cancel" | "recurring" | "recurring-cancel";

export interface ExecuteResult {
  readonly signature: string;
  readonly ok: boolean;
  readonly error?: string;
}

export interface PendingRequest {
  readonly requestId: string;
  readonly kind: RequestKind;
  /** The memo ref the transaction carries: the order account. */
  readonly ref: string;
  /**
   * Every order account the request's transactions carry, `ref` first: a cancel of several orders
   * (cancelOrders) answers one requestId for one transaction per order.
   */
  readonly refs: readonly string[];
  /** The first successful execution of each ref's transaction, returned again if executed twice. */
  readonly executed: Map<string, ExecuteResult>;
}

/**
 * What the service promised but the chain has not confirmed: build responses (requestIds, order drafts,
 * close figures) wait here until their transaction lands. Nothing in the world changes at build time.
 */
export class PendingActions {
  readonly requests = new Map<string, PendingRequest>();
  /** Trigger and recurring orders whose creating transaction was built, by order account. */
  readonly orderDrafts = new Map<string, OrderDraft>();
  /** Figures of the latest close built for a position: what its landing records. */
  readonly closes = new Map<string, { readonly proceedsMicro: number; readonly feeMicro: number }>();
  /** Buys built (POST /orders), by the position key they open: what their landing creates. */
  readonly opens = new Map<string, PositionRecord>();
  /**
   * Builds that open or sell, by their message (base64): the execution context they named. Execute
   * checks a context against it and co-signs only a message it built.
   */
  readonly executions = new Map<string, BuildExecutionRecord>();
  private counter = 0;

  constructor(private readonly seed: number) {}

  /** Request ids are unique per world run and deterministic for a seed. */
  nextId(prefix: string): string {
    this.counter += 1;
    return `${prefix}-${this.seed}-${String(this.counter).padStart(6, "0")}`;
  }

  /**
   * Records a build; `refFor` names the order account (or accounts), which may derive from the
   * request id.
   */
  addRequest(kind: RequestKind, refFor: (requestId: string) => string | readonly string[]): PendingRequest {
    const requestId = this.nextId(kind.startsWith("recurring") ? "rec" : "trg");
    const named = refFor(requestId);
    const refs = typeof named === "string" ? [named] : [...named];
    const ref = refs[0];
    if (ref === undefined) throw new Error("a request needs at least one order account");
    const request: PendingRequest = { requestId, kind, ref, refs, executed: new Map() };
    this.requests.set(request.requestId, request);
    return request;
  }
}

export interface BuildExecutionRecord {
  readonly contextId: string;
  readonly type: "create_order" | "bisonfi_swap";
}
