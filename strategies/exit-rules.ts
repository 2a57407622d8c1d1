import { z } from "zod";
import type { EventDetails } from "../src/core/event-details.js";
import { type Intent, intentKeys } from "../src/core/intent.js";
import { formatUsd, usdToMicro } from "../src/core/money.js";
import type { Snapshot } from "../src/core/snapshot.js";
import { defineStrategy, type StrategyState } from "../src/core/strategy.js";
import { expectedObject, onlyWhenValid } from "./config-parts.js";

/**
 * exit-rules: closes open prediction positions by rule (take-profit, stop-loss, trailing stop, a
 * time before the market closes), with overrides selected by market, event, title, tags, category,
 * provider and side. Tags, category and provider come from `snapshot.events` (the strategy declares
 * it needs them through `needs`); an event missing there matches no selector on them.
 *
 * Hysteresis, exactly: every rule is a Schmitt trigger with a debounce.
 * - A rule *enters* when its metric crosses its threshold (e.g. pnl >= takeProfitPct).
 * - Once entered it *stays* until the metric comes back across the threshold by more than
 *   `hysteresisPct` (percentage points of pnl or of drawdown; percent of the threshold for the price
 *   rules). A flicker inside that band neither resets the count nor stops a close already asked for.
 * - It *fires* once it has entered or stayed on `confirmPolls` consecutive polls; from then on it
 *   asks for the same `close-<position>` intent on every poll while it stays (the ledger refuses the
 *   key while it is in flight or done, and re-admits it, bounded, after a failure), and asks nothing
 *   once the metric left the band. So a price that flickers produces at most one close per position,
 *   and one that merely touches a threshold for fewer than `confirmPolls` polls produces none.
 * - The time rule (`closeBeforeSeconds`) cannot flicker: it fires on the first poll past its time.
 */

export const STRATEGY_NAME = "exit-rules";

type Position = Snapshot["positions"][number];

export const RULE_NAMES = [
  "stop-loss",
  "stop-loss-price",
  "trailing-stop",
  "take-profit",
  "take-profit-price",
  "close-before",
] as const;
/** In this order: when several rules fire at once, the first names the reason. */
export type RuleName = (typeof RULE_NAMES)[number];

// ---- config ----

const between = (min: number, max: number) => `expected a number between ${min} and ${max}`;
const numberIn = (min: number, max: number, { minInclusive = false } = {}) => {
  const rule = between(min, max);
  const base = z.number({ error: rule });
  return (minInclusive ? base.min(min, rule) : base.gt(min, rule)).max(max, rule);
};
const PRICE_RULE = "expected a price in dollars above 0 and at most 1, with at most 6 decimals";
/** Contract prices in dollars, as YAML gives them ("0.85" or 0.85); kept as a string, exact. */
const priceUsd = z
  .union([z.string(), z.number()], { error: PRICE_RULE })
  .transform((value) => String(value))
  .refine((value) => {
    const micro = microOrUndefined(value);
    return micro !== undefined && micro > 0n && micro <= 1_000_000n;
  }, PRICE_RULE);

const ruleFields = {
  /** Which pnl percent the pnl rules read: `pnlUsdPercent` or `pnlUsdAfterFeesPercent`. */
  basis: z.enum(["before-fees", "after-fees"], { error: 'expected "before-fees" or "after-fees"' }),
  takeProfitPct: numberIn(0, 10_000),
  stopLossPct: numberIn(0, 100),
  takeProfitPriceUsd: priceUsd,
  stopLossPriceUsd: priceUsd,
  trailingStopPct: numberIn(0, 100),
  trailingActivationPct: numberIn(0, 10_000, { minInclusive: true }),
  closeBeforeSeconds: z
    .number({ error: "expected a whole number of seconds > 0" })
    .int("expected a whole number of seconds > 0")
    .positive("expected a whole number of seconds > 0"),
  minPositionUsd: z.number({ error: "expected dollars >= 0" }).min(0, "expected dollars >= 0"),
  confirmPolls: z
    .number({ error: "expected a whole number between 1 and 100" })
    .int("expected a whole number between 1 and 100")
    .min(1, "expected a whole number between 1 and 100")
    .max(100, "expected a whole number between 1 and 100"),
  hysteresisPct: numberIn(0, 100, { minInclusive: true }),
  slippageBps: z
    .number({ error: between(0, 10_000) })
    .int("expected a whole number of basis points")
    .min(0, between(0, 10_000))
    .max(10_000, between(0, 10_000)),
};

const THRESHOLD_KEYS = [
  "takeProfitPct",
  "stopLossPct",
  "takeProfitPriceUsd",
  "stopLossPriceUsd",
  "trailingStopPct",
  "closeBeforeSeconds",
] as const;

const globalRules = z.strictObject({
  basis: ruleFields.basis.default("before-fees"),
  takeProfitPct: ruleFields.takeProfitPct.optional(),
  stopLossPct: ruleFields.stopLossPct.optional(),
  takeProfitPriceUsd: ruleFields.takeProfitPriceUsd.optional(),
  stopLossPriceUsd: ruleFields.stopLossPriceUsd.optional(),
  trailingStopPct: ruleFields.trailingStopPct.optional(),
  trailingActivationPct: ruleFields.trailingActivationPct.optional(),
  closeBeforeSeconds: ruleFields.closeBeforeSeconds.optional(),
  minPositionUsd: ruleFields.minPositionUsd.default(0),
  confirmPolls: ruleFields.confirmPolls.default(1),
  hysteresisPct: ruleFields.hysteresisPct.default(0),
  slippageBps: ruleFields.slippageBps.optional(),
});

/** An override sets some rules; `null` turns a global rule off for the positions it matches. */
const overrideRules = z.strictObject({
  basis: ruleFields.basis.optional(),
  takeProfitPct: ruleFields.takeProfitPct.nullable().optional(),
  stopLossPct: ruleFields.stopLossPct.nullable().optional(),
  takeProfitPriceUsd: ruleFields.takeProfitPriceUsd.nullable().optional(),
  stopLossPriceUsd: ruleFields.stopLossPriceUsd.nullable().optional(),
  trailingStopPct: ruleFields.trailingStopPct.nullable().optional(),
  trailingActivationPct: ruleFields.trailingActivationPct.nullable().optional(),
  closeBeforeSeconds: ruleFields.closeBeforeSeconds.nullable().optional(),
  minPositionUsd: ruleFields.minPositionUsd.optional(),
  confirmPolls: ruleFields.confirmPolls.optional(),
  hysteresisPct: ruleFields.hysteresisPct.optional(),
  slippageBps: ruleFields.slippageBps.nullable().optional(),
});

/** In order of specificity, most specific first (see `SPECIFICITY`). */
const SELECTOR_KEYS = [
  "marketId",
  "eventId",
  "titleContains",
  "tags",
  "category",
  "provider",
  "side",
] as const;
/** Selector keys read from the event's details (`snapshot.events`), not from the position. */
const EVENT_SELECTOR_KEYS = ["tags", "category", "provider"] as const;
/**
 * Categories and providers are open sets on the live service (new ones appear), so a selector takes
 * any name and compares it case-insensitively; `all` is a filter of the events list, not a category.
 */
const eventName = (what: string, examples: string) =>
  z
    .string({ error: `expected a ${what} name such as ${examples}` })
    .trim()
    .min(1, `expected a ${what} name such as ${examples}`)
    .toLowerCase();
const selector = z
  .strictObject({
    marketId: z.string().min(1, "expected a market id").optional(),
    eventId: z.string().min(1, "expected an event id").optional(),
    /** Case-insensitive substring of the market's or the event's title. */
    titleContains: z.string().min(1, "expected some text").optional(),
    /** The event has at least one of these tags (case-insensitive). */
    tags: z
      .array(z.string({ error: "expected a tag" }).min(1, "expected a tag"), {
        error: "expected a list of tags",
      })
      .min(1, "expected a list of tags")
      .optional(),
    category: eventName("category", "crypto or sports")
      .refine((name) => name !== "all", "all is a filter of the events list, not a category")
      .optional(),
    provider: eventName("provider", "polymarket, kalshi or bisonfi").optional(),
    side: z.enum(["yes", "no"], { error: 'expected "yes" or "no"' }).optional(),
  })
  .refine((match) => SELECTOR_KEYS.some((key) => match[key] !== undefined), {
    error: `expected at least one of ${SELECTOR_KEYS.join(", ")}`,
    // An unknown key (e.g. `series`) is reported on its own; saying "no key" too would mislead.
    ...onlyWhenValid,
  });

const overrideSchema = z.strictObject(
  { match: selector, rules: overrideRules },
  expectedObject("an override: { match, rules }"),
);

const configSchema = globalRules
  .extend({ overrides: z.array(overrideSchema).default([]) })
  .superRefine((config, ctx) => {
    // Each level is checked as merged, but only for the keys it sets itself: a mistake in the
    // global rules is reported once, at the global path, not again under every override.
    const global = baseRules(config);
    const levels: Array<{ own: Partial<Record<keyof Rules, unknown>>; rules: Rules; path: PropertyKey[] }> = [
      { own: global, rules: global, path: [] },
      ...config.overrides.map((override, index) => ({
        own: override.rules,
        rules: mergeRules(global, override.rules),
        path: ["overrides", index, "rules"],
      })),
    ];
    if (!levels.some(({ rules }) => THRESHOLD_KEYS.some((key) => rules[key] !== undefined)))
      ctx.addIssue({
        code: "custom",
        path: [],
        message: `configure at least one exit rule: ${THRESHOLD_KEYS.join(", ")}`,
      });
    for (const { own, rules, path } of levels) {
      if (own.trailingActivationPct != null && rules.trailingStopPct === undefined)
        ctx.addIssue({
          code: "custom",
          path: [...path, "trailingActivationPct"],
          message: "needs trailingStopPct",
        });
      const setsPrice = own.takeProfitPriceUsd != null || own.stopLossPriceUsd != null;
      if (
        setsPrice &&
        rules.takeProfitPriceUsd !== undefined &&
        rules.stopLossPriceUsd !== undefined &&
        usdToMicro(rules.stopLossPriceUsd) >= usdToMicro(rules.takeProfitPriceUsd)
      )
        ctx.addIssue({
          code: "custom",
          path: [...path, own.stopLossPriceUsd != null ? "stopLossPriceUsd" : "takeProfitPriceUsd"],
          message:
            own.stopLossPriceUsd != null
              ? "must be below takeProfitPriceUsd"
              : "must be above stopLossPriceUsd",
        });
    }
  }, onlyWhenValid);

export type ExitRulesConfig = z.infer<typeof configSchema>;
export type ExitRulesOverride = z.infer<typeof overrideSchema>;
export type Selector = ExitRulesOverride["match"];

/** The rules in force for one position: the global ones with the winning override merged over them. */
export interface Rules {
  basis: "before-fees" | "after-fees";
  takeProfitPct?: number;
  stopLossPct?: number;
  takeProfitPriceUsd?: string;
  stopLossPriceUsd?: string;
  trailingStopPct?: number;
  trailingActivationPct?: number;
  closeBeforeSeconds?: number;
  minPositionUsd: number;
  confirmPolls: number;
  hysteresisPct: number;
  slippageBps?: number;
}

function baseRules(config: ExitRulesConfig): Rules {
  const { overrides: _overrides, ...rules } = config;
  return rules;
}

function mergeRules(base: Rules, override: ExitRulesOverride["rules"]): Rules {
  const merged: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(override)) {
    if (value === null) delete merged[key];
    else if (value !== undefined) merged[key] = value;
  }
  return merged as unknown as Rules;
}

// ---- selectors ----

/**
 * Specificity: marketId (64) > eventId (32) > titleContains (16) > tags (8) > category (4) >
 * provider (2) > side (1), summed over the keys a selector sets. Each weight is larger than all
 * smaller ones together, so comparing sums compares the most specific key first: `{ marketId }`
 * beats `{ eventId, titleContains, tags, category, provider, side }`, `{ tags }` beats
 * `{ category, provider }`, and `{ category, side }` beats `{ category }`. Equal specificity: the
 * override listed first wins. A selector matches only when every key it sets matches.
 */
const SPECIFICITY: Record<(typeof SELECTOR_KEYS)[number], number> = {
  marketId: 64,
  eventId: 32,
  titleContains: 16,
  tags: 8,
  category: 4,
  provider: 2,
  side: 1,
};

export function specificity(match: Selector): number {
  return SELECTOR_KEYS.reduce((sum, key) => sum + (match[key] === undefined ? 0 : SPECIFICITY[key]), 0);
}

/** `event`: the details of the position's event, undefined when unknown (then no event key matches). */
export function matches(match: Selector, position: Position, event: EventDetails | undefined): boolean {
  if (match.marketId !== undefined && match.marketId !== position.marketId) return false;
  if (match.eventId !== undefined && match.eventId !== position.eventId) return false;
  if (match.side !== undefined && match.side !== (position.isYes ? "yes" : "no")) return false;
  if (match.titleContains !== undefined) {
    const needle = match.titleContains.toLowerCase();
    const titles = [position.marketMetadata.title, position.eventMetadata.title];
    if (!titles.some((title) => title?.toLowerCase().includes(needle))) return false;
  }
  if (selectsOnEvent(match) && event === undefined) return false;
  if (match.category !== undefined && match.category !== event?.category.toLowerCase()) return false;
  if (match.provider !== undefined && match.provider !== event?.provider?.toLowerCase()) return false;
  if (match.tags !== undefined) {
    const held = new Set(event?.tags.map((tag) => tag.toLowerCase()));
    if (!match.tags.some((tag) => held.has(tag.toLowerCase()))) return false;
  }
  return true;
}

/** The rules for one position: the most specific matching override over the global rules. */
export function rulesFor(config: ExitRulesConfig, position: Position, event?: EventDetails): Rules {
  let winner: ExitRulesOverride | undefined;
  for (const override of config.overrides) {
    if (!matches(override.match, position, event)) continue;
    if (!winner || specificity(override.match) > specificity(winner.match)) winner = override;
  }
  return winner ? mergeRules(baseRules(config), winner.rules) : baseRules(config);
}

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
});
type PositionState = z.infer<typeof positionStateSchema>;
const stateSchema = z.object({ positions: z.record(z.string(), positionStateSchema) });

/** Stored state we cannot read is dropped rather than trusted: peaks and counts start again. */
function readState(state: StrategyState): Record<string, PositionState> {
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
}

const PCT_SCALE = 10_000; // percents kept to 4 decimals in integer arithmetic

/** `amount * (100 + pct) / 100` in integers, for thresholds on money. */
function scaleByPct(amount: bigint, pct: number): bigint {
  const factor = BigInt(Math.round((100 + pct) * PCT_SCALE));
  return (amount * factor) / BigInt(100 * PCT_SCALE);
}

function formatPct(value: number): string {
  return `${Number(value.toFixed(2))}%`;
}

/** `part` as a percent of `whole` (micro-USD), for gaps on price rules. */
function percentOf(part: bigint, whole: bigint): number {
  return whole === 0n
    ? Number.POSITIVE_INFINITY
    : Number((part * BigInt(100 * PCT_SCALE)) / whole) / PCT_SCALE;
}

/** Null when the service gives no pnl (a closed market): no pnl rule enters on it. */
function pnlPercent(position: Position, rules: Rules): number | null {
  return rules.basis === "after-fees" ? position.pnlUsdAfterFeesPercent : position.pnlUsdPercent;
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

function ruleChecks(
  position: Position,
  rules: Rules,
  tracked: PositionState,
  nowSeconds: number,
): RuleCheck[] {
  const checks: RuleCheck[] = [];
  // A figure the service did not give (null) checks no rule that reads it: the rule neither enters
  // nor stays on that poll.
  const pnl = pnlPercent(position, rules);
  const band = rules.hysteresisPct;
  const pnlMetric = `${rules.basis === "after-fees" ? "pnl after fees" : "pnl"} ${formatPct(pnl ?? 0)}`;
  const mark = microOrNull(position.markPriceUsd);
  const value = microOrNull(position.valueUsd);

  if (rules.stopLossPct !== undefined && pnl !== null) {
    const limit = -rules.stopLossPct;
    checks.push({
      rule: "stop-loss",
      enters: pnl <= limit,
      stays: pnl <= limit + band,
      metric: pnlMetric,
      threshold: `<= ${formatPct(limit)}`,
      gap: Math.max(0, pnl - limit),
    });
  }
  if (rules.stopLossPriceUsd !== undefined && mark !== null) {
    const limit = usdToMicro(rules.stopLossPriceUsd);
    checks.push({
      rule: "stop-loss-price",
      enters: mark <= limit,
      stays: mark <= scaleByPct(limit, band),
      metric: `mark $${formatUsd(mark)}`,
      threshold: `<= $${formatUsd(limit)}`,
      gap: mark <= limit ? 0 : percentOf(mark - limit, limit),
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
    });
  }
  if (rules.takeProfitPriceUsd !== undefined && mark !== null) {
    const limit = usdToMicro(rules.takeProfitPriceUsd);
    checks.push({
      rule: "take-profit-price",
      enters: mark >= limit,
      stays: mark >= scaleByPct(limit, -band),
      metric: `mark $${formatUsd(mark)}`,
      threshold: `>= $${formatUsd(limit)}`,
      gap: mark >= limit ? 0 : percentOf(limit - mark, limit),
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

/** The rule of a position nearest to firing, as the status page shows it. */
export interface ExitOutlook {
  rule: RuleName;
  /** It has entered on the last poll's figures (it fires once held for `confirmPolls` polls). */
  isEntered: boolean;
  /** e.g. "take-profit: pnl 12% (>= 30%)". */
  detail: string;
  gap: number;
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
  };
}

/** Advances each rule's count of consecutive polls; returns the counts and the first rule that fires. */
function checkRules(position: Position, rules: Rules, tracked: PositionState, nowSeconds: number) {
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
function track(previous: PositionState | undefined, position: Position, rules: Rules): PositionState {
  // No valuation this poll (null): the peak stays what it was.
  const value = microOrNull(position.valueUsd) ?? 0n;
  const same = previous !== undefined && previous.sizeMicroUsd === position.sizeUsd;
  const lastPeak = same ? BigInt(previous.peakValueMicroUsd) : 0n;
  const pnl = pnlPercent(position, rules);
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
 * is read from the USD size: `contracts` is floored, so a position under one contract shows 0 there.
 */
function isOpen(position: Position): boolean {
  return (
    !position.claimable &&
    !position.claimed &&
    position.marketMetadata.status === "open" &&
    (BigInt(position.sizeUsd) > 0n || /[1-9]/.test(position.contracts))
  );
}

export const exitRules = defineStrategy<ExitRulesConfig>({
  name: STRATEGY_NAME,
  contractVersion: 1,
  description: "Close prediction positions by take-profit, stop-loss, trailing stop or time before close",
  configSchema,
  needs(config) {
    const selectors = config.overrides.map((override) => override.match);
    return {
      events: selectors.some(selectsOnEvent),
      eventProviders: selectors.some((match) => match.provider !== undefined),
    };
  },
  evaluate({ snapshot, state, config, now }) {
    const nowSeconds = Math.floor(now.getTime() / 1000);
    const previous = readState(state);
    const closeAllInFlight = snapshot.inFlight.some((intent) => intent.kind === "closeAll");
    const inFlightKeys = new Set(snapshot.inFlight.map((intent) => intent.key));
    const positionsInFlight = new Set(snapshot.inFlight.map((intent) => intent.positionPubkey));

    const positions: Record<string, PositionState> = {};
    const intents: Intent[] = [];
    const usesEventSelectors = config.overrides.some((override) => selectsOnEvent(override.match));
    for (const position of snapshot.positions) {
      // Positions that left (or cannot be closed any more) leave the state with it.
      if (!isOpen(position)) continue;
      const event = snapshot.events?.[position.eventId];
      if (usesEventSelectors && event === undefined) {
        // Its event could not be read: which override applies is unknown, and a rule an override
        // turned off must not fire. Nothing is done and its state is kept until the event is read.
        const kept = previous[position.pubkey];
        if (kept !== undefined) positions[position.pubkey] = kept;
        continue;
      }
      const rules = rulesFor(config, position, event);
      const tracked = track(previous[position.pubkey], position, rules);
      const { polls, firing, firingRule } = checkRules(position, rules, tracked, nowSeconds);
      positions[position.pubkey] = { ...tracked, polls };

      if (firing === undefined) continue;
      const key = intentKeys.close(position.pubkey);
      const closing = closeAllInFlight || positionsInFlight.has(position.pubkey) || inFlightKeys.has(key);
      if (position.openOrders > 0 || closing) continue;
      // Without a valuation the size (what was paid) tells whether the position is worth a close.
      const worth = BigInt(position.valueUsd ?? position.sizeUsd);
      if (worth < dollarsToMicro(rules.minPositionUsd)) continue;
      intents.push({
        kind: "close",
        key,
        wallet: snapshot.wallet,
        strategy: STRATEGY_NAME,
        positionPubkey: position.pubkey,
        reason: firing,
        ...(firingRule === undefined ? {} : { exitRule: firingRule }),
        ...(/^\d+$/.test(position.totalCostUsd) ? { costBasisMicroUsd: position.totalCostUsd } : {}),
        ...(rules.slippageBps === undefined ? {} : { minSellPriceSlippageBps: rules.slippageBps }),
      });
    }
    return { intents, state: { positions } };
  },
});

/** The selector reads the event's details (tags, category or provider), not only the position. */
function selectsOnEvent(match: Selector): boolean {
  return EVENT_SELECTOR_KEYS.some((key) => match[key] !== undefined);
}

function dollarsToMicro(dollars: number): bigint {
  return BigInt(Math.round(dollars * 1_000_000));
}

function microOrUndefined(dollars: string): bigint | undefined {
  return /^\d+(\.\d{1,6})?$/.test(dollars) ? usdToMicro(dollars) : undefined;
}

// ---- thresholds for a market watcher ----

/**
 * The mark prices (micro-USD of the held side) at which this position's exit rules would enter,
 * for a watcher that sees market prices between polls and wants to poll the wallet in time. Only
 * what follows from the position and the config: `above` is the lowest price at which a take-profit
 * enters, `below` the highest at which a stop-loss enters, `trailingStopPct` the drawdown from the
 * peak that arms a trailing stop (its activation and peak live in the strategy's state, so a watcher
 * treats it as armed). The pnl rules become prices through the average price paid (the pnl percent
 * before fees is (mark - avg) / avg); after fees the true threshold is a little further, which the
 * watcher's band covers. Undefined for a position the strategy does not watch or would not close (an
 * order on it, worth less than `minPositionUsd`) or has no price rule for.
 */
export interface ExitThresholds {
  above?: string;
  below?: string;
  trailingStopPct?: number;
}

export function exitThresholds(
  config: ExitRulesConfig,
  position: Position,
  event?: EventDetails,
): ExitThresholds | undefined {
  // The strategy leaves a position with an order on it alone, and one worth less than its minimum:
  // no price makes it act until a sweep shows otherwise.
  if (!isOpen(position) || position.openOrders > 0) return undefined;
  const rules = rulesFor(config, position, event);
  if (BigInt(position.valueUsd ?? position.sizeUsd) < dollarsToMicro(rules.minPositionUsd)) return undefined;
  const avg = BigInt(position.avgPriceUsd);
  const ups: bigint[] = [];
  const downs: bigint[] = [];
  if (rules.takeProfitPriceUsd !== undefined) ups.push(usdToMicro(rules.takeProfitPriceUsd));
  if (rules.stopLossPriceUsd !== undefined) downs.push(usdToMicro(rules.stopLossPriceUsd));
  if (avg > 0n && rules.takeProfitPct !== undefined) ups.push(scaleByPct(avg, rules.takeProfitPct));
  if (avg > 0n && rules.stopLossPct !== undefined) downs.push(scaleByPct(avg, -rules.stopLossPct));
  const out: ExitThresholds = {};
  // The nearest threshold on each side enters first.
  ups.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  downs.sort((a, b) => (a > b ? -1 : a < b ? 1 : 0));
  if (ups[0] !== undefined) out.above = ups[0].toString();
  if (downs[0] !== undefined) out.below = downs[0].toString();
  if (rules.trailingStopPct !== undefined) out.trailingStopPct = rules.trailingStopPct;
  return Object.keys(out).length > 0 ? out : undefined;
}
