import type { RecurringOrder } from "./schemas/recurring.js";
import type { TriggerOrder } from "./schemas/trigger.js";

/**
 * What the service says became of a trigger or recurring order, in Keeper's words. `open` is still
 * working; `filled` (trigger) and `completed` (recurring) ran their course; `unknown` is a status word
 * Keeper does not know, which it never reads as finished.
 */
export type ListedOrderState = "open" | "filled" | "completed" | "cancelled" | "expired" | "unknown";

/** An order as the service lists it (GET getTriggerOrders / getRecurringOrders), for the strategies. */
export interface ListedOrder {
  /** The order account. */
  readonly order: string;
  readonly inputMint: string;
  readonly outputMint: string;
  /** Raw input units (trigger: making; recurring: deposited), where the service gave them. */
  readonly inAmountRaw?: string;
  /** Raw output units asked for (trigger: taking), where the service gave them. */
  readonly outAmountRaw?: string;
  readonly state: ListedOrderState;
  /** Unix seconds, where the service's time could be read. */
  readonly createdAt?: number;
}

/** The service's status word, read loosely: the list is data, new words may appear. */
export function listedOrderState(status: string): ListedOrderState {
  const word = status.trim().toLowerCase();
  if (word === "open" || word === "active") return "open";
  if (word === "filled" || word === "executed") return "filled";
  if (word === "completed") return "completed";
  if (word === "cancelled" || word === "canceled" || word === "closed") return "cancelled";
  if (word === "expired") return "expired";
  return "unknown";
}

/** Whether the service is done with the order (it will neither trade nor need a cancel). */
export function isFinished(state: ListedOrderState): boolean {
  return state !== "open" && state !== "unknown";
}

/** ISO 8601 or Unix seconds (or milliseconds, told apart by size) → Unix seconds. */
function toSeconds(value: string | number | null | undefined): number | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value === "number")
    return Number.isFinite(value) ? Math.floor(value > 1e12 ? value / 1000 : value) : undefined;
  if (/^\d+$/.test(value)) return toSeconds(Number(value));
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : Math.floor(ms / 1000);
}

export function fromTriggerOrder(o: TriggerOrder, listedAs: "active" | "history"): ListedOrder {
  const read = listedOrderState(o.status);
  // A trigger order that ran its course is `filled`, whichever word the service uses for it.
  const word = read === "completed" ? "filled" : read;
  // A status Keeper cannot read is `open` while the service lists it as active.
  const state = word === "unknown" && listedAs === "active" ? "open" : word;
  const createdAt = toSeconds(o.createdAt);
  return {
    order: o.orderKey,
    inputMint: o.inputMint,
    outputMint: o.outputMint,
    ...(o.rawMakingAmount === undefined ? {} : { inAmountRaw: o.rawMakingAmount }),
    ...(o.rawTakingAmount === undefined ? {} : { outAmountRaw: o.rawTakingAmount }),
    state,
    ...(createdAt === undefined ? {} : { createdAt }),
  };
}

export function fromRecurringOrder(o: RecurringOrder, listedAs: "active" | "history"): ListedOrder {
  // Without a status word the list says it: active is open; history is completed, or cancelled when
  // the user closed it.
  const word = o.status === undefined ? "unknown" : listedOrderState(o.status);
  const state: ListedOrderState =
    word !== "unknown"
      ? word
      : listedAs === "active"
        ? "open"
        : o.userClosed === true
          ? "cancelled"
          : "completed";
  const createdAt = toSeconds(o.createdAt);
  return {
    order: o.orderKey,
    inputMint: o.inputMint,
    outputMint: o.outputMint,
    ...(o.rawInDeposited === undefined ? {} : { inAmountRaw: o.rawInDeposited }),
    state,
    ...(createdAt === undefined ? {} : { createdAt }),
  };
}
