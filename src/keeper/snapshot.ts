import type { Order, Position } from "../api/schemas/prediction.js";
import type { InFlightIntent, KnownTriggerOrder, Snapshot } from "../core/snapshot.js";
import type { LedgerRow } from "./ledger.js";

/** Where a snapshot's data comes from: the API client in production (all pages), anything in tests. */
export interface SnapshotSource {
  positions(wallet: string): Promise<Position[]>;
  pendingOrders(wallet: string): Promise<Order[]>;
  /** Raw balances of the wallet for the given mints (0 for a mint it holds none of). */
  balances?(wallet: string, mints: readonly string[]): Promise<Record<string, string>>;
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
 * so no market or event is fetched for them; orders are fetched only by the orders poll.
 */
export async function takeSnapshot(input: TakeSnapshotInput): Promise<Snapshot> {
  const mints = input.balanceMints ?? [];
  const [positions, openOrders, balances] = await Promise.all([
    input.source.positions(input.wallet),
    input.withOrders ? input.source.pendingOrders(input.wallet) : Promise.resolve([]),
    mints.length > 0 && input.source.balances
      ? input.source.balances(input.wallet, mints)
      : Promise.resolve({}),
  ]);
  return {
    wallet: input.wallet,
    takenAt: input.nowSeconds,
    positions,
    openOrders,
    inFlight: input.inFlight.map(toInFlight),
    balances,
    ...(input.triggerOrders ? { triggerOrders: input.triggerOrders } : {}),
  };
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
