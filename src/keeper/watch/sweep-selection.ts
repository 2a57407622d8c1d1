import type { WalletActivity } from "../state/poll-record.js";

/**
 * A wallet whose last poll saw nothing held, no intent in flight, no swap order open, and whose last
 * orders poll saw no pending order (orders never listed: not idle).
 */
export function isIdle(activity: WalletActivity | undefined): boolean {
  return (
    activity !== undefined && activity.held === 0 && activity.otherOpen === 0 && activity.pendingOrders === 0
  );
}

export interface SweepSelection {
  /** Wallets this sweep polls. */
  readonly due: string[];
  /** Idle wallets left for a later sweep. */
  readonly idleSkipped: string[];
}

/**
 * Which wallets one sweep tick polls: every wallet but the idle ones, which are polled once every
 * `multiple` sweeps. An idle wallet is due when its last poll is older than `multiple - 1` sweep
 * intervals: polled anywhere within one sweep, it comes round again exactly `multiple` sweeps later.
 * Decided from what every scheduler replica reads alike (the poll records), so replicas agree.
 * Without an interval yet (the first tick since start) every wallet is due.
 */
export function selectSweep(
  wallets: readonly string[],
  activity: ReadonlyMap<string, WalletActivity>,
  options: { nowSeconds: number; intervalSeconds: number | undefined; multiple: number },
): SweepSelection {
  const { nowSeconds, intervalSeconds, multiple } = options;
  if (intervalSeconds === undefined || intervalSeconds <= 0 || multiple <= 1)
    return { due: [...wallets], idleSkipped: [] };
  const restSeconds = (multiple - 1) * intervalSeconds;
  const due: string[] = [];
  const idleSkipped: string[] = [];
  for (const wallet of wallets) {
    const seen = activity.get(wallet);
    if (seen && isIdle(seen) && nowSeconds - seen.positionsAt <= restSeconds) idleSkipped.push(wallet);
    else due.push(wallet);
  }
  return { due, idleSkipped };
}
