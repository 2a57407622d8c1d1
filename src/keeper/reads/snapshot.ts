import { formatIssues } from "../../config/format-issues.js";
import type { ConfiguredStrategy } from "../../config/load-config.js";
import { ConfigError } from "../../core/errors.js";
import type { EventDetails } from "../../core/event-details.js";
import type { Order, Position } from "../../core/schemas/prediction.js";
import type { ListedOrder } from "../../core/service-orders.js";
import type { InFlightIntent, KnownTriggerOrder, Snapshot } from "../../core/snapshot.js";
import { ORDER_LIST_KINDS, type OrderListKind, snapshotNeedsSchema } from "../../core/strategy-hooks.js";
import type { LedgerRow } from "../state/ledger.js";

/** Where a snapshot's data comes from: the API client in production (all pages), anything in tests. */
export interface SnapshotSource {
  positions(wallet: string): Promise<Position[]>;
  pendingOrders(wallet: string): Promise<Order[]>;
  /** Raw balances of the wallet for the given mints (0 for a mint it holds none of). */
  balances?(wallet: string, mints: readonly string[]): Promise<Record<string, string>>;
  /**
   * Details of the positions' events, by event id (an event it could not fetch is left out; it never
   * throws). Wired only when a configured strategy needs them (see `snapshotNeeds`), so its presence
   * is what makes a snapshot carry `events`.
   */
  eventDetails?(
    events: ReadonlyArray<{ eventId: string; title: string }>,
  ): Promise<Record<string, EventDetails>>;
  /**
   * The wallet's trigger and recurring orders as the service lists them. Wired only when a strategy
   * needs them (see `snapshotNeeds`, `orderListsFor`), so their presence is what makes a snapshot
   * carry the lists.
   */
  triggerOrders?(wallet: string): Promise<ListedOrder[] | undefined>;
  recurringOrders?(wallet: string): Promise<ListedOrder[] | undefined>;
  /**
   * What one claim transaction costs now, micro-USD. Wired only when a strategy needs it
   * (`needs().claimCost`); asked only by a poll that sees a position a claim may be made for.
   */
  claimCostMicroUsd?(): Promise<string>;
}

export interface TakeSnapshotInput {
  wallet: string;
  withOrders: boolean;
  source: SnapshotSource;
  inFlight: readonly LedgerRow[];
  nowSeconds: number;
  /** Mints whose balances the strategies need. */
  balanceMints?: readonly string[];
  /** Open trigger orders from the ledger. */
  triggerOrders?: readonly KnownTriggerOrder[];
}

/**
 * One wallet's snapshot with the fewest requests: positions carry their market and event metadata,
 * so no market is fetched for them; orders are fetched only by the orders poll; event details
 * (category, tags, provider) only when the source offers them, from its cache when it has them.
 */
export async function takeSnapshot(input: TakeSnapshotInput): Promise<Snapshot> {
  const mints = input.balanceMints ?? [];
  const eventDetails = input.source.eventDetails?.bind(input.source);
  const [positions, openOrders, balances, listedTriggerOrders, listedRecurringOrders] = await Promise.all([
    input.source.positions(input.wallet),
    input.withOrders ? input.source.pendingOrders(input.wallet) : Promise.resolve([]),
    mints.length > 0 && input.source.balances
      ? input.source.balances(input.wallet, mints)
      : Promise.resolve({}),
    input.source.triggerOrders?.(input.wallet),
    input.source.recurringOrders?.(input.wallet),
  ]);
  // Only positions that can still be exited need their event: a long history of claimed or settled
  // positions costs no requests.
  const open = positions.filter((p) => !p.claimed && !p.claimable && p.marketMetadata.status === "open");
  const events = eventDetails
    ? await eventDetails(
        open.map((p) => ({
          eventId: p.eventId,
          title: p.eventMetadata.title ?? p.marketMetadata.title ?? "",
        })),
      )
    : undefined;
  // Only a wallet with a winner not yet claimed needs what a claim costs.
  const claimCostMicroUsd =
    input.source.claimCostMicroUsd && positions.some(mayBeClaimed)
      ? await input.source.claimCostMicroUsd()
      : undefined;
  return {
    wallet: input.wallet,
    takenAt: input.nowSeconds,
    positions,
    openOrders,
    inFlight: input.inFlight.map(toInFlight),
    balances,
    ...(input.triggerOrders ? { triggerOrders: input.triggerOrders } : {}),
    ...(listedTriggerOrders ? { listedTriggerOrders } : {}),
    ...(listedRecurringOrders ? { listedRecurringOrders } : {}),
    ...(events ? { events } : {}),
    ...(claimCostMicroUsd !== undefined ? { claimCostMicroUsd } : {}),
  };
}

/** Not claimed, and claimable or its market has a result: a claim of it may be asked for. */
function mayBeClaimed(position: Position): boolean {
  return !position.claimed && (position.claimable || position.marketMetadata.result != null);
}

/** What the configured strategies together need read into each snapshot. */
export interface StrategyReads {
  events: boolean;
  eventProviders: boolean;
  /** The service's order lists to read, in a fixed order. */
  orderLists: OrderListKind[];
  /** Mints whose balances to read, sorted, each once. */
  balances: string[];
  /** An estimate of a claim's cost (`snapshot.claimCostMicroUsd`). */
  claimCost: boolean;
}

/**
 * What the configured strategies need in their snapshots (their `needs` hooks), asked of each once at
 * start-up, after their tokens were resolved to mints. A strategy whose `needs` throws, or answers
 * something else than needs, stops the start like a bad config.
 */
export function snapshotNeeds(strategies: readonly ConfiguredStrategy[]): StrategyReads {
  const reads: StrategyReads = {
    events: false,
    eventProviders: false,
    orderLists: [],
    balances: [],
    claimCost: false,
  };
  const lists = new Set<OrderListKind>();
  const mints = new Set<string>();
  const problems: string[] = [];
  for (const { index, name, strategy, config } of strategies) {
    if (!strategy.needs) continue;
    let answer: unknown;
    try {
      answer = strategy.needs(config);
    } catch (error) {
      problems.push(`strategies[${index ?? name}]: needs() failed: ${(error as Error).message}`);
      continue;
    }
    const parsed = snapshotNeedsSchema.safeParse(answer);
    if (!parsed.success) {
      problems.push(
        ...formatIssues(parsed.error).map((p) => `strategies[${index ?? name}]: needs() answered ${p}`),
      );
      continue;
    }
    const needs = parsed.data;
    reads.eventProviders ||= needs.eventProviders === true;
    reads.events ||= needs.events === true || needs.eventProviders === true;
    reads.claimCost ||= needs.claimCost === true;
    for (const list of needs.orderLists ?? []) lists.add(list);
    for (const mint of needs.balances ?? []) mints.add(mint);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  reads.orderLists = ORDER_LIST_KINDS.filter((list) => lists.has(list));
  reads.balances = [...mints].sort();
  return reads;
}

function toInFlight(row: LedgerRow): InFlightIntent {
  const positionPubkey = "positionPubkey" in row.intent ? row.intent.positionPubkey : undefined;
  return {
    key: row.key,
    kind: row.kind,
    strategy: row.strategy,
    status: row.status,
    ...(positionPubkey ? { positionPubkey } : {}),
  };
}
