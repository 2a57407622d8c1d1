import { z } from "zod";
import { contractsMicroOf, contractsValueMicroUsd, holdsContracts } from "../../src/core/contracts.js";
import type { EventDetails } from "../../src/core/event-details.js";
import { formatUsd, usdToMicro } from "../../src/core/money.js";
import type { Snapshot } from "../../src/core/snapshot.js";
import type { StrategyState } from "../../src/core/strategy.js";
import { type ExitRulesConfig, RULE_NAMES, type RuleName, type Rules } from "./config.js";
import { rulesFor } from "./selectors.js";

/** exit-rules' rules at work: each rule's check on a position, with its hysteresis, and the state they keep. */

type Position = Snapshot["positions"][number];

// ---- state ----

const positionStateSchema = z.object({
  /** Highest `valueUsd` seen (micro-USD) since the position was first seen or its size changed. */
  peakValueMicroUsd: z.string().regex(/^\d+$/),
  /**
   * The `sizeUsd` the peak belongs to: a buy or a partial sell changes value without a price move.
   * Not `contracts`, which the service floors (a partial sell below one contract would not show).
   * Absent in state written before it replaced `contracts`: the peak starts again, the counts stay.
   */
  sizeMicroUsd: z.string().optional(),
  /** The trailing stop is armed (no activation configured, or the pnl reached it once). */
  trailingArmed: z.boolean(),
  /** Consecutive polls each rule has entered or stayed (only rules above 0 are kept). */
  polls: z.partialRecord(z.enum(RULE_NAMES), z.number().int().positive()),
  /** Why the last poll asked for no close although a rule fired (no bid): shown on the status page. */
  withheld: z.string().optional(),
});
export type PositionState = z.infer<typeof positionStateSchema>;
const stateSchema = z.object({ positions: z.record(z.string(), positionStateSchema) });

/** Stored state we cannot read is dropped rather than trusted: peaks and counts start again. */
export function readState(state: StrategyState): Record<string, PositionState> {
  const parsed = stateSchema.safeParse(state);
  return parsed.success ? parsed.data.positions : {};
}

// ---- evaluation ----

interface RuleCheck {
  rule: RuleName;
  /** The metric crossed the threshold on this poll. */
  enters: boolean;
  /** The metric is still inside the hysteresis band (always true when `enters`). */
  stays: boolean;
  /** What the metric is, e.g. "pnl 31.2%". */
  metric: string;
  /** The comparison that entered, e.g. ">= 30%". */
  threshold: string;
  /**
   * How far the metric is from entering, 0 once it has: percentage points for the pnl and trailing
   * rules, percent of the threshold for the price rules; the time rule is not comparable (Infinity).
   */
  gap: number;
  /**
   * How far the price the rules read (the bid net of fees, or the mark) must move for the rule to
   * enter, in percent of that price: one unit for every rule but the time rule (absent there, and
   * where the figures give none).
   */
  movePct?: number;
}

const PCT_SCALE = 10_000; // percents kept to 4 decimals in integer arithmetic

/** `amount * (100 + pct) / 100` in integers, for thresholds on money. */
export function scaleByPct(amount: bigint, pct: number): bigint {
  const factor = BigInt(Math.round((100 + pct) * PCT_SCALE));
  return (amount * factor) / BigInt(100 * PCT_SCALE);
}

function formatPct(value: number): string {
  return `${Number(value.toFixed(2))}%`;
}

/** The move from `from` to `to`, in percent of `from`; absent when `from` is not above 0. */
function moveBetween(from: number, to: number): number | undefined {
  return from > 0 ? (to / from - 1) * 100 : undefined;
}

/** The price move that takes a pnl percent to a limit: value scales with the price, cost does not. */
function pnlMove(pnl: number, limit: number): number | undefined {
  return moveBetween(100 + pnl, 100 + limit);
}

/** `part` as a percent of `whole` (micro-USD), for gaps on price rules. */
function percentOf(part: bigint, whole: bigint): number {
  return whole === 0n
    ? Number.POSITIVE_INFINITY
    : Number((part * BigInt(100 * PCT_SCALE)) / whole) / PCT_SCALE;
}

/**
 * What the rules read of a position, on the basis its rules name. `realizable` (the default): what a
 * sell would bring in now, the exact contracts (`contractsMicro`) x the bid (`sellPriceUsd`) less
 * the estimated sell fee, its pnl against what the position cost (`totalCostUsd`, buy fees
 * included), and the bid net of that fee as the price. `mark`: the service's own `valueUsd`, pnl
 * percent (before or after fees, `basis`) and `markPriceUsd`. Null figures check no rule.
 */
export interface Valuation {
  value: bigint | null;
  price: bigint | null;
  pnlPct: number | null;
  /** How the metrics read: "pnl" and "mark", or "realizable pnl" and "bid". */
  pnlLabel: string;
  priceLabel: string;
}

export function valuationOf(position: Position, rules: Rules): Valuation {
  if (rules.priceBasis === "mark")
    return {
      value: microOrNull(position.valueUsd),
      price: microOrNull(position.markPriceUsd),
      pnlPct: rules.basis === "after-fees" ? position.pnlUsdAfterFeesPercent : position.pnlUsdPercent,
      pnlLabel: rules.basis === "after-fees" ? "pnl after fees" : "pnl",
      priceLabel: "mark",
    };
  const labels = { pnlLabel: "realizable pnl", priceLabel: "bid net of fees" };
  const bid = microOrNull(position.sellPriceUsd);
  // No one bids: nothing can be realized, and no price rule may fire on a sale into nothing.
  if (bid === null) return { value: null, price: null, pnlPct: null, ...labels };
  const value = netOfSellFee(contractsValueMicroUsd(contractsMicroOf(position), bid), rules);
  const cost = /^\d+$/.test(position.totalCostUsd) ? BigInt(position.totalCostUsd) : 0n;
  return {
    value,
    price: netOfSellFee(bid, rules),
    pnlPct: cost > 0n ? Number(((value - cost) * BigInt(100 * PCT_SCALE)) / cost) / PCT_SCALE : null,
    ...labels,
  };
}

/** Gross proceeds less the estimated fee, the fee rounded up (the estimate errs on the low side). */
export function netOfSellFee(gross: bigint, rules: Rules): bigint {
  const bps = BigInt(rules.estimatedSellFeeBps);
  return gross - (gross * bps + 9_999n) / 10_000n;
}

/** A micro-USD figure the service may send as null (no valuation, no quote). */
function microOrNull(value: string | null): bigint | null {
  return value === null ? null : BigInt(value);
}

/** "take-profit: pnl 31.2% >= 30%", or, inside the band, "take-profit: pnl 29.5% held (>= 30%, hysteresis 2%)". */
function reasonOf(check: RuleCheck, rules: Rules): string {
  if (check.enters) return `${check.rule}: ${check.metric} ${check.threshold}`;
  return `${check.rule}: ${check.metric} held (${check.threshold}, hysteresis ${formatPct(rules.hysteresisPct)})`;
}

export function ruleChecks(
  position: Position,
  rules: Rules,
  tracked: PositionState,
  nowSeconds: number,
): RuleCheck[] {
  const checks: RuleCheck[] = [];
  // A figure the service did not give (null) checks no rule that reads it: the rule neither enters
  // nor stays on that poll.
  const valuation = valuationOf(position, rules);
  const { value, pnlPct: pnl, price: mark } = valuation;
  const band = rules.hysteresisPct;
  const pnlMetric = `${valuation.pnlLabel} ${formatPct(pnl ?? 0)}`;
  const priceMetric = (price: bigint) => `${valuation.priceLabel} $${formatUsd(price)}`;

  if (rules.stopLossPct !== undefined && pnl !== null) {
    const limit = -rules.stopLossPct;
    checks.push({
      rule: "stop-loss",
      enters: pnl <= limit,
      stays: pnl <= limit + band,
      metric: pnlMetric,
      threshold: `<= ${formatPct(limit)}`,
      gap: Math.max(0, pnl - limit),
      ...optionalMove(pnlMove(pnl, limit)),
    });
  }
  if (rules.stopLossPriceUsd !== undefined && mark !== null) {
    const limit = usdToMicro(rules.stopLossPriceUsd);
    checks.push({
      rule: "stop-loss-price",
      enters: mark <= limit,
      stays: mark <= scaleByPct(limit, band),
      metric: priceMetric(mark),
      threshold: `<= $${formatUsd(limit)}`,
      gap: mark <= limit ? 0 : percentOf(mark - limit, limit),
      ...optionalMove(moveBetween(Number(mark), Number(limit))),
    });
  }
  if (rules.trailingStopPct !== undefined && tracked.trailingArmed && value !== null) {
    const peak = BigInt(tracked.peakValueMicroUsd);
    if (peak > 0n) {
      const drawdownPct = Number(((peak - value) * BigInt(100 * PCT_SCALE)) / peak) / PCT_SCALE;
      checks.push({
        rule: "trailing-stop",
        enters: value <= scaleByPct(peak, -rules.trailingStopPct),
        stays: value <= scaleByPct(peak, Math.min(0, band - rules.trailingStopPct)),
        metric: `value $${formatUsd(value)} is ${formatPct(drawdownPct)} below peak $${formatUsd(peak)}`,
        threshold: `>= ${formatPct(rules.trailingStopPct)}`,
        gap: Math.max(0, rules.trailingStopPct - drawdownPct),
        ...optionalMove(moveBetween(Number(value), Number(scaleByPct(peak, -rules.trailingStopPct)))),
      });
    }
  }
  if (rules.takeProfitPct !== undefined && pnl !== null) {
    const limit = rules.takeProfitPct;
    checks.push({
      rule: "take-profit",
      enters: pnl >= limit,
      stays: pnl >= limit - band,
      metric: pnlMetric,
      threshold: `>= ${formatPct(limit)}`,
      gap: Math.max(0, limit - pnl),
      ...optionalMove(pnlMove(pnl, limit)),
    });
  }
  if (rules.takeProfitPriceUsd !== undefined && mark !== null) {
    const limit = usdToMicro(rules.takeProfitPriceUsd);
    checks.push({
      rule: "take-profit-price",
      enters: mark >= limit,
      stays: mark >= scaleByPct(limit, -band),
      metric: priceMetric(mark),
      threshold: `>= $${formatUsd(limit)}`,
      gap: mark >= limit ? 0 : percentOf(limit - mark, limit),
      ...optionalMove(moveBetween(Number(mark), Number(limit))),
    });
  }
  const closeTime = position.marketMetadata.closeTime;
  if (rules.closeBeforeSeconds !== undefined && closeTime !== undefined) {
    const closesIn = closeTime - nowSeconds;
    const due = closesIn <= rules.closeBeforeSeconds;
    checks.push({
      rule: "close-before",
      enters: due,
      stays: due,
      metric: `market closes in ${closesIn}s`,
      threshold: `<= ${rules.closeBeforeSeconds}s`,
      gap: due ? 0 : Number.POSITIVE_INFINITY,
    });
  }
  return checks;
}

const optionalMove = (movePct: number | undefined) =>
  movePct === undefined || !Number.isFinite(movePct) ? {} : { movePct };

/** The rule of a position nearest to firing, as the status page shows it. */
export interface ExitOutlook {
  rule: RuleName;
  /** It has entered on the last poll's figures (it fires once held for `confirmPolls` polls). */
  isEntered: boolean;
  /** e.g. "take-profit: pnl 12% (>= 30%)". */
  detail: string;
  gap: number;
  /** In one unit, e.g. "take-profit in +4.2 %" (the price move that enters it), "close-before in 3h 20m". */
  short: string;
}

/** "3h 20m", "2d 4h", "45s": a time to go, to the two largest units. */
export function durationText(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  const units: Array<[string, number]> = [
    ["d", 86_400],
    ["h", 3_600],
    ["m", 60],
  ];
  const parts: string[] = [];
  let rest = s;
  for (const [name, size] of units) {
    const count = Math.floor(rest / size);
    if (count > 0 || parts.length > 0) parts.push(`${count}${name}`);
    rest -= count * size;
    if (parts.length === 2) break;
  }
  return parts.filter((p) => !p.startsWith("0")).join(" ");
}

/** The nearest rule in one unit: entered, the move of the price it reads, or the time left. */
function shortOf(check: RuleCheck, position: Position, rules: Rules, nowSeconds: number): string {
  if (check.enters) return `${check.rule} reached`;
  if (check.movePct !== undefined) {
    const sign = check.movePct >= 0 ? "+" : "-";
    return `${check.rule} in ${sign}${Math.abs(check.movePct).toFixed(1)} %`;
  }
  const closeTime = position.marketMetadata.closeTime;
  if (check.rule === "close-before" && closeTime !== undefined)
    return `${check.rule} in ${durationText(closeTime - (rules.closeBeforeSeconds ?? 0) - nowSeconds)}`;
  return check.rule;
}

/**
 * For an operator's view: which of the position's rules is nearest to entering, on the figures given
 * and the strategy's saved state (the trailing stop's peak). Overrides that select on event details
 * are matched only when `event` is given. Undefined when no rule applies (or the position is not open).
 */
export function nearestExitRule(
  config: ExitRulesConfig,
  position: Position,
  state: StrategyState,
  nowSeconds: number,
  event?: EventDetails,
): ExitOutlook | undefined {
  if (!isOpen(position)) return undefined;
  const rules = rulesFor(config, position, event);
  const tracked = track(readState(state)[position.pubkey], position, rules);
  let nearest: RuleCheck | undefined;
  for (const check of ruleChecks(position, rules, tracked, nowSeconds))
    if (nearest === undefined || check.gap < nearest.gap) nearest = check;
  if (nearest === undefined) return undefined;
  return {
    rule: nearest.rule,
    isEntered: nearest.enters,
    detail: `${nearest.rule}: ${nearest.metric} (${nearest.threshold})`,
    gap: nearest.gap,
    short: shortOf(nearest, position, rules, nowSeconds),
  };
}

/** Advances each rule's count of consecutive polls; returns the counts and the first rule that fires. */
export function checkRules(position: Position, rules: Rules, tracked: PositionState, nowSeconds: number) {
  const polls: PositionState["polls"] = {};
  let firing: string | undefined;
  let firingRule: RuleName | undefined;
  for (const check of ruleChecks(position, rules, tracked, nowSeconds)) {
    const previous = tracked.polls[check.rule] ?? 0;
    const holding = previous > 0 ? check.stays : check.enters;
    if (!holding) continue;
    const needed = check.rule === "close-before" ? 1 : rules.confirmPolls;
    const count = Math.min(previous + 1, needed);
    polls[check.rule] = count;
    if (count >= needed && firing === undefined) {
      firing = reasonOf(check, rules);
      firingRule = check.rule;
    }
  }
  return { polls, firing, firingRule };
}

/** Peak and arming, carried from the last poll; reset when the position's size changed. */
export function track(previous: PositionState | undefined, position: Position, rules: Rules): PositionState {
  // No valuation this poll (null): the peak stays what it was.
  const { value: valued, pnlPct: pnl } = valuationOf(position, rules);
  const value = valued ?? 0n;
  const same = previous !== undefined && previous.sizeMicroUsd === position.sizeUsd;
  const lastPeak = same ? BigInt(previous.peakValueMicroUsd) : 0n;
  const reachedActivation =
    rules.trailingActivationPct === undefined || (pnl !== null && pnl >= rules.trailingActivationPct);
  return {
    peakValueMicroUsd: (value > lastPeak ? value : lastPeak).toString(),
    sizeMicroUsd: position.sizeUsd,
    trailingArmed: (same && previous.trailingArmed) || reachedActivation,
    // Counts follow the pnl and the price, not the value: they survive a change of contracts.
    polls: previous?.polls ?? {},
  };
}

/**
 * Positions the strategy watches at all: open market, nothing to claim, something to sell. "Something"
 * is the exact count (`contractsMicro`); where the service sends only the floored `contracts`, a
 * position under one contract shows 0 there, so its USD size tells.
 */
export function isOpen(position: Position): boolean {
  return (
    !position.claimable &&
    !position.claimed &&
    position.marketMetadata.status === "open" &&
    (holdsContracts(position) || BigInt(position.sizeUsd) > 0n)
  );
}

/**
 * Why a rule that fired asks for no close: on the realizable basis, no one bids (`sellPriceUsd`
 * null), and a sale into nothing is never asked for. Undefined when nothing holds it back.
 */
export function withheldReason(position: Position, rules: Rules): string | undefined {
  if (rules.priceBasis === "realizable" && position.sellPriceUsd === null)
    return "no bid (sellPriceUsd null): no exit until someone bids";
  return undefined;
}

export function dollarsToMicro(dollars: number): bigint {
  return BigInt(Math.round(dollars * 1_000_000));
}
