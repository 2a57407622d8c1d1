import { DEFAULT_SWEEP_SHARE_PCT } from "../config/schema.js";

/**
 * The rate settings of the config `keeper sandbox --keys-dir` writes, from the size of its fleet: a
 * keeper on thousands of sandbox wallets must fit its sweeps into the sandbox's plan, as it would on
 * the live one (docs/fleet-model.md has the arithmetic).
 */

/** Keeper's default share of the plan its sweeps may use (`watcher.sweepSharePct`). */
const SWEEP_SHARE = DEFAULT_SWEEP_SHARE_PCT / 100;
/** Room left in the sweep's share for the market watcher's reads and an uneven pace. */
const HEADROOM = 0.8;
/** Periods a six-field cron runs at evenly: whole minutes that divide an hour. */
const EVEN_MINUTES = [1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30, 60] as const;

export interface FleetSchedules {
  /** The positions sweep: one read a wallet. */
  readonly pollPositions: string;
  /** The orders poll: a positions read and an orders read a wallet. */
  readonly pollOrders: string;
  /** Seconds between positions sweeps, for the banner and docs. */
  readonly sweepSeconds: number;
}

const cronEveryMinutes = (minutes: number): string =>
  minutes === 1 ? "0 * * * * *" : minutes === 60 ? "0 0 * * * *" : `0 */${minutes} * * * *`;

/** The shortest even period of at least `seconds` (an hour at most). */
function evenMinutesAtLeast(seconds: number): number {
  return EVEN_MINUTES.find((m) => m * 60 >= seconds) ?? 60;
}

/**
 * Schedules for `walletCount` wallets on a plan of `requestsPerSecond`: Keeper's defaults (positions
 * every minute, orders every 30 s) while they fit, else a positions sweep every P minutes and the
 * orders poll every 2P or more. Per P that is N + 2N / 2 = 2N reads at most, which must fit in the
 * sweep's share of the plan with headroom: P ≥ 2N / (rate × 0.8 × 0.8).
 */
export function fleetSchedules(walletCount: number, requestsPerSecond: number): FleetSchedules {
  const budget = requestsPerSecond * SWEEP_SHARE * HEADROOM;
  // The defaults cost N/60 + 2N/30 reads a second.
  if (walletCount / 60 + (2 * walletCount) / 30 <= budget)
    return { pollPositions: "0 * * * * *", pollOrders: "*/30 * * * * *", sweepSeconds: 60 };
  const minutes = evenMinutesAtLeast((2 * walletCount) / budget);
  return {
    pollPositions: cronEveryMinutes(minutes),
    pollOrders: cronEveryMinutes(evenMinutesAtLeast(2 * minutes * 60)),
    sweepSeconds: minutes * 60,
  };
}
