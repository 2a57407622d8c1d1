import type { Logger } from "pino";
import type { RecurringApi } from "../../api/recurring.js";
import type { TriggerApi } from "../../api/trigger.js";
import { fromRecurringOrder, fromTriggerOrder, type ListedOrder } from "../../core/service-orders.js";
import type { OrderListKind } from "../../core/strategy-hooks.js";
import type { SnapshotSource } from "./snapshot.js";

/**
 * Pages of open orders read per poll at most (a page holds about ten): a wallet with more is unusual,
 * and its list is left out of the poll (see `listOrders`).
 */
export const MAX_ACTIVE_PAGES = 10;

/**
 * A wallet's orders as the service lists them: every page of its open (`active`) orders, then the
 * first page of its `history` (the most recent filled, cancelled, expired or completed ones), so an
 * order Keeper believes open is seen leaving. Normally two requests; an order listed on both (it
 * closed between the two) counts as in history.
 * Strategies take an order on neither list as no longer open, so the open orders are read whole or
 * not at all: more than MAX_ACTIVE_PAGES pages of them throw. Without `totalPages` in the answer,
 * an empty page is the end.
 */
async function listOrders(
  fetchPage: (
    orderStatus: "active" | "history",
    page: number,
  ) => Promise<{ orders: ListedOrder[]; totalPages?: number }>,
): Promise<ListedOrder[]> {
  const byOrder = new Map<string, ListedOrder>();
  for (let page = 1; ; page += 1) {
    const answer = await fetchPage("active", page);
    for (const order of answer.orders) byOrder.set(order.order, order);
    const isLast =
      answer.orders.length === 0 || (answer.totalPages !== undefined && page >= answer.totalPages);
    if (isLast) break;
    if (page >= MAX_ACTIVE_PAGES)
      throw new Error(
        `more than ${MAX_ACTIVE_PAGES} pages of open orders: a part of the list would hide open orders`,
      );
  }
  for (const order of (await fetchPage("history", 1)).orders) byOrder.set(order.order, order);
  return [...byOrder.values()];
}

export function listTriggerOrders(
  api: Pick<TriggerApi, "getOrders">,
  wallet: string,
): Promise<ListedOrder[]> {
  return listOrders(async (orderStatus, page) => {
    const answer = await api.getOrders({ user: wallet, orderStatus, page });
    return {
      orders: answer.orders.map((o) => fromTriggerOrder(o, orderStatus)),
      ...(answer.totalPages === undefined ? {} : { totalPages: answer.totalPages }),
    };
  });
}

/** Keeper places time-based orders only, so it lists those. */
export function listRecurringOrders(
  api: Pick<RecurringApi, "getOrders">,
  wallet: string,
): Promise<ListedOrder[]> {
  return listOrders(async (orderStatus, page) => {
    const answer = await api.getOrders({ user: wallet, orderStatus, recurringType: "time", page });
    return {
      orders: (answer.time ?? []).map((o) => fromRecurringOrder(o, orderStatus)),
      ...(answer.totalPages === undefined ? {} : { totalPages: answer.totalPages }),
    };
  });
}

/**
 * The order lists a snapshot source offers, only those the strategies need (their `needs` hooks, see
 * `snapshotNeeds`): none asked, none ever fetched.
 * A list that cannot be read whole is left out of that poll's snapshot (the strategies then go by the
 * ledger and their own state, as without lists) rather than failing the poll: claims and exits of
 * the wallet do not wait for an order list.
 */
export function orderListsFor(
  lists: readonly OrderListKind[],
  client: { trigger: Pick<TriggerApi, "getOrders">; recurring: Pick<RecurringApi, "getOrders"> },
  logger?: Logger,
): Pick<SnapshotSource, "triggerOrders" | "recurringOrders"> {
  const orSkip =
    (what: string, list: (wallet: string) => Promise<ListedOrder[]>) =>
    async (wallet: string): Promise<ListedOrder[] | undefined> => {
      try {
        return await list(wallet);
      } catch (error) {
        // Expected and handled: the message (with the service's status and code) says enough; a
        // stack trace of the client's internals would only bury it.
        const { status, code } = error as { status?: unknown; code?: unknown };
        logger?.warn(
          {
            err: (error as Error).message,
            ...(typeof status === "number" ? { status } : {}),
            ...(typeof code === "string" ? { code } : {}),
            wallet,
          },
          `could not read the ${what} orders; this poll goes without them`,
        );
        return undefined;
      }
    };
  return {
    ...(lists.includes("trigger")
      ? { triggerOrders: orSkip("trigger", (wallet) => listTriggerOrders(client.trigger, wallet)) }
      : {}),
    ...(lists.includes("recurring")
      ? { recurringOrders: orSkip("recurring", (wallet) => listRecurringOrders(client.recurring, wallet)) }
      : {}),
  };
}
