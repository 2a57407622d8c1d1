import type { Connection } from "@solana/web3.js";
import type { Logger } from "pino";
import { type ApiClient, collectUnique, iterateOrders, iteratePositions } from "../../api/index.js";
import type { KeeperConfig } from "../../config/load-config.js";
import type { ClaimCostEstimator } from "./claim-cost.js";
import { EventDetailsCache, type EventLookupOutcome } from "./event-details-cache.js";
import { orderListsFor } from "./service-orders.js";
import { type SnapshotSource, snapshotNeeds } from "./snapshot.js";
import { readTokenBalances } from "./token-balances.js";

export interface ServiceSnapshotSourceDeps {
  /** The strategies as resolved (tokens named by symbol are mints here). */
  strategies: KeeperConfig["strategies"];
  pageSize: number;
  connection: Connection;
  logger: Logger;
  /** The client the order lists are read through (the targeted one, whichever poll reads them). */
  orderLists: ApiClient;
  /** The process-wide event details cache, when a strategy needs event details. */
  events?: EventDetailsCache;
  /** The process-wide claim cost estimate, when a strategy needs it. */
  claimCost?: ClaimCostEstimator;
}

/** A snapshot source over the service (every page) and the chain (balances), through `api`'s budget. */
export function serviceSnapshotSource(api: ApiClient, deps: ServiceSnapshotSourceDeps): SnapshotSource {
  const { pageSize, connection, events } = deps;
  return {
    positions: (wallet: string) =>
      collectUnique(iteratePositions(api, { ownerPubkey: wallet }, { pageSize }), (p) => p.pubkey),
    pendingOrders: async (wallet: string) =>
      (
        await collectUnique(iterateOrders(api, { ownerPubkey: wallet }, { pageSize }), (o) => o.pubkey)
      ).filter((o) => o.status === "pending"),
    balances: (wallet: string, mints: readonly string[]) => readTokenBalances(connection, wallet, mints),
    // The orders' true state, read only for the lists the strategies' `needs` hooks ask for.
    ...orderListsFor(snapshotNeeds(deps.strategies).orderLists, deps.orderLists, deps.logger),
    ...(events ? { eventDetails: (refs) => events.detailsOf(refs) } : {}),
    ...(deps.claimCost && snapshotNeeds(deps.strategies).claimCost
      ? { claimCostMicroUsd: () => (deps.claimCost as ClaimCostEstimator).microUsd() }
      : {}),
  };
}

/**
 * The process-wide event details cache, made only when a configured strategy needs event details
 * (its `needs` hook says so); otherwise no event is ever fetched.
 */
export function eventDetailsFor(
  strategies: KeeperConfig["strategies"],
  client: ApiClient,
  logger: Logger,
  onLookup: (outcome: EventLookupOutcome) => void,
): EventDetailsCache | undefined {
  const needs = snapshotNeeds(strategies);
  if (!needs.events) return undefined;
  logger.info({ withProvider: needs.eventProviders }, "snapshots carry event details");
  return new EventDetailsCache({
    reader: {
      getEvent: (eventId) => client.prediction.getEvent(eventId),
      searchEvents: (params) => client.prediction.searchEvents(params),
    },
    logger,
    withProvider: needs.eventProviders,
    onLookup,
  });
}
