import type { IntentKind } from "../../core/intent.js";
import { formatUsd } from "../../core/money.js";

/**
 * Circuit breakers across strategies (pure: no I/O, the clock comes in as an argument).
 *
 * - `daily_loss`: the realized pnl of Keeper's own confirmed closes since the start of the UTC day
 *   (net: winning closes offset losing ones) is a loss of at least `dailyLossLimitUsd`. It resets by
 *   itself at the next UTC midnight, or by hand.
 * - `stop_loss_streak`: `stopLossPause.afterExits` stop-loss exits (stop-loss, stop-loss-price,
 *   trailing-stop) confirmed within `windowSeconds` of each other. It holds for `pauseSeconds`
 *   after the exit that completed the streak, or until reset by hand.
 *
 * While any breaker is tripped, intents that open exposure (new trigger orders, recurring plans,
 * swaps) are held back; claims, closes, cancels and close-alls still run. A reset by hand records
 * its time: exits confirmed up to then no longer count for that breaker.
 */

export const BREAKERS = ["daily_loss", "stop_loss_streak"] as const;
export type BreakerName = (typeof BREAKERS)[number];

/** Exit rules whose closes count towards the stop-loss streak. */
export const STOP_LOSS_RULES: ReadonlySet<string> = new Set([
  "stop-loss",
  "stop-loss-price",
  "trailing-stop",
]);

/** Intents held back while a breaker is tripped: everything that opens new exposure. */
const HELD_BACK: ReadonlySet<IntentKind> = new Set<IntentKind>(["createTrigger", "createRecurring", "swap"]);

export function isHeldBackByBreakers(kind: IntentKind): boolean {
  return HELD_BACK.has(kind);
}

export interface ProtectionsConfig {
  readonly dailyLossLimitUsd?: number | undefined;
  readonly closeAllOnDailyLossUsd?: number | undefined;
  readonly stopLossPause?:
    | {
        readonly afterExits: number;
        readonly windowSeconds: number;
        readonly pauseSeconds: number;
      }
    | undefined;
}

/** One confirmed close, as the protections remember it. */
export interface RecordedExit {
  readonly key: string;
  /** Unix seconds of the confirmation. */
  readonly at: number;
  /** Proceeds minus cost basis, micro-USD (negative for a loss); absent when either was unknown. */
  readonly pnlMicroUsd?: string | undefined;
  readonly isStopLoss: boolean;
}

export interface BreakerState {
  readonly name: BreakerName;
  readonly isEnabled: boolean;
  readonly isTripped: boolean;
  /** Unix seconds: when it tripped, and when it resets by itself. */
  readonly since?: number;
  readonly until?: number;
  readonly detail: string;
}

export interface ProtectionsEvaluation {
  readonly breakers: readonly BreakerState[];
  /** Net realized loss of the UTC day so far (0 when the day is flat or up), micro-USD. */
  readonly dailyLossMicroUsd: bigint;
  /** The close-all trigger's condition holds (it is keyed per UTC day, so it acts once a day). */
  readonly isCloseAllDue: boolean;
  readonly tripped: readonly BreakerName[];
}

export interface EvaluateProtectionsInput {
  readonly config: ProtectionsConfig;
  readonly exits: readonly RecordedExit[];
  /** When each breaker was last reset by hand (Unix seconds). */
  readonly resets: Readonly<Partial<Record<BreakerName, number>>>;
  readonly nowSeconds: number;
}

const DAY_SECONDS = 86_400;

export function utcDayStart(nowSeconds: number): number {
  return nowSeconds - (((nowSeconds % DAY_SECONDS) + DAY_SECONDS) % DAY_SECONDS);
}

/** `20260101` for a time on 2026-01-01 UTC: the tag of a day's close-all key. */
export function utcDayTag(nowSeconds: number): string {
  return new Date(utcDayStart(nowSeconds) * 1000).toISOString().slice(0, 10).replaceAll("-", "");
}

export function usdToMicroUsd(dollars: number): bigint {
  return BigInt(Math.round(dollars * 1_000_000));
}

/** How much history the evaluation needs: the current UTC day and the stop-loss window with its pause. */
export function horizonSeconds(config: ProtectionsConfig): number {
  const streak = config.stopLossPause;
  return Math.max(DAY_SECONDS, streak ? streak.windowSeconds + streak.pauseSeconds : 0);
}

export function evaluateProtections(input: EvaluateProtectionsInput): ProtectionsEvaluation {
  const { config, exits, resets, nowSeconds } = input;
  const dayStart = utcDayStart(nowSeconds);

  // Daily loss: net realized pnl of closes confirmed today, after the last reset.
  const lossFrom = Math.max(dayStart, (resets.daily_loss ?? -1) + 1);
  let pnlToday = 0n;
  let lossReachedAt: number | undefined;
  const lossLimit =
    config.dailyLossLimitUsd === undefined ? undefined : usdToMicroUsd(config.dailyLossLimitUsd);
  for (const exit of [...exits].sort((a, b) => a.at - b.at)) {
    if (exit.at < lossFrom || exit.at > nowSeconds || exit.pnlMicroUsd === undefined) continue;
    pnlToday += BigInt(exit.pnlMicroUsd);
    if (lossReachedAt === undefined && lossLimit !== undefined && -pnlToday >= lossLimit)
      lossReachedAt = exit.at;
  }
  const dailyLossMicroUsd = pnlToday < 0n ? -pnlToday : 0n;
  const isDailyTripped = lossLimit !== undefined && dailyLossMicroUsd >= lossLimit;
  const daily: BreakerState = {
    name: "daily_loss",
    isEnabled: lossLimit !== undefined,
    isTripped: isDailyTripped,
    ...(isDailyTripped ? { since: lossReachedAt ?? nowSeconds, until: dayStart + DAY_SECONDS } : {}),
    detail:
      lossLimit === undefined
        ? "off"
        : `realized loss today $${formatUsd(dailyLossMicroUsd)} of a $${formatUsd(lossLimit)} limit`,
  };

  // Stop-loss streak: the latest exit that completed N stop-losses within the window, if its pause runs.
  const streakConfig = config.stopLossPause;
  let streak: BreakerState = {
    name: "stop_loss_streak",
    isEnabled: streakConfig !== undefined,
    isTripped: false,
    detail: "off",
  };
  if (streakConfig) {
    const from = (resets.stop_loss_streak ?? -1) + 1;
    const times = exits
      .filter((e) => e.isStopLoss && e.at >= from && e.at <= nowSeconds)
      .map((e) => e.at)
      .sort((a, b) => a - b);
    let completedAt: number | undefined;
    for (let i = streakConfig.afterExits - 1; i < times.length; i++) {
      const first = times[i - streakConfig.afterExits + 1] as number;
      const last = times[i] as number;
      if (last - first <= streakConfig.windowSeconds) completedAt = last;
    }
    const until = completedAt === undefined ? undefined : completedAt + streakConfig.pauseSeconds;
    const isTripped = until !== undefined && nowSeconds < until;
    const recent = times.filter((t) => t > nowSeconds - streakConfig.windowSeconds).length;
    streak = {
      ...streak,
      isTripped,
      ...(isTripped ? { since: completedAt, until } : {}),
      detail: isTripped
        ? `${streakConfig.afterExits} stop-loss exits within ${streakConfig.windowSeconds}s; paused for ${streakConfig.pauseSeconds}s`
        : `${recent} of ${streakConfig.afterExits} stop-loss exits in the last ${streakConfig.windowSeconds}s`,
    };
  }

  const closeAllLimit =
    config.closeAllOnDailyLossUsd === undefined ? undefined : usdToMicroUsd(config.closeAllOnDailyLossUsd);
  const breakers = [daily, streak];
  return {
    breakers,
    dailyLossMicroUsd,
    isCloseAllDue: closeAllLimit !== undefined && dailyLossMicroUsd >= closeAllLimit,
    tripped: breakers.filter((b) => b.isTripped).map((b) => b.name),
  };
}

/** A confirmed close's realized pnl: proceeds minus cost basis, when both are known. */
export function realizedPnlMicroUsd(
  proceedsMicroUsd: string | undefined,
  costBasisMicroUsd: string | undefined,
): string | undefined {
  if (proceedsMicroUsd === undefined || costBasisMicroUsd === undefined) return undefined;
  if (!/^-?\d+$/.test(proceedsMicroUsd) || !/^\d+$/.test(costBasisMicroUsd)) return undefined;
  return (BigInt(proceedsMicroUsd) - BigInt(costBasisMicroUsd)).toString();
}
