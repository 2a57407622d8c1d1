import type { EventDetails } from "./event-details.js";
import type { IntentKind } from "./intent.js";
import type { Order, Position } from "./schemas/prediction.js";
import type { ListedOrder } from "./service-orders.js";

/**
 * Everything a strategy may know about one wallet at one moment: plain data, no handles.
 * Positions carry their market and event metadata already; the event's category, tags and provider
 * are fetched (and cached) only for strategies that declare they need them.
 */
export interface Snapshot {
  readonly wallet: string;
  /** Unix seconds when the snapshot was taken. */
  readonly takenAt: number;
  readonly positions: readonly Position[];
  /** Orders of the wallet that are still pending. */
  readonly openOrders: readonly Order[];
  /** Intents of this wallet that the ledger holds as not yet finished. */
  readonly inFlight: readonly InFlightIntent[];
  /** Raw token balances by mint, of the mints the strategies asked for (`needs().balances`). */
  readonly balances: Readonly<Record<string, string>>;
  /**
   * Trigger orders Keeper created for this wallet and still considers open, from the ledger:
   * confirmed creates with a recorded order account and no confirmed cancel of that order. What the
   * service lists (`listedTriggerOrders`) says whether they truly are.
   */
  readonly triggerOrders?: readonly KnownTriggerOrder[];
  /**
   * The wallet's trigger orders as the service lists them (every open one, and the latest finished
   * ones): the orders' true state. Present only when a configured strategy needs it
   * (`needs().orderLists`) and this poll read every page of open orders: absent means not read (or
   * not whole), `[]` read and empty. An order on neither part may have finished long ago.
   */
  readonly listedTriggerOrders?: readonly ListedOrder[];
  /**
   * The wallet's recurring (time) orders as the service lists them (every open one, and the latest
   * finished ones). Absent when this poll did not read the list (no strategy needs it, or the read
   * failed); `[]` when it read it and the service lists none. A strategy that must not act on a
   * guess (a recurring plan's next round) waits for a poll that has it.
   */
  readonly listedRecurringOrders?: readonly ListedOrder[];
  /**
   * Category, subcategory, tags (and provider, when known) of the events the wallet holds positions
   * in, by event id. Present only when a configured strategy declared it needs them; an event whose
   * details could not be fetched has no entry.
   */
  readonly events?: Readonly<Record<string, EventDetails>>;
  /**
   * What one claim transaction would cost the wallet now, in micro-USD: the network fee with the
   * priority fee Keeper would bid, at the service's SOL price (or a conservative price when none is
   * known). Present only when a strategy needs it (`needs().claimCost`) and a position may be claimed.
   */
  readonly claimCostMicroUsd?: string;
}

export interface KnownTriggerOrder {
  /** The createTrigger intent key. */
  readonly key: string;
  /** The order account the create built. */
  readonly order: string;
}

export interface InFlightIntent {
  readonly key: string;
  readonly kind: IntentKind;
  readonly strategy: string;
  readonly status: string;
  readonly positionPubkey?: string;
}
