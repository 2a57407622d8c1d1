import { z } from "zod";
import { usdToMicro } from "../../src/core/money.js";
import { expectedObject, onlyWhenValid } from "../config-parts.js";

/** exit-rules' config: the rules, global and per override, and the override selectors' shape. */

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
  /**
   * What the rules value a position at: `realizable`, what selling it would bring in (contracts x the
   * bid, `sellPriceUsd`, less the estimated sell fee), or `mark`, the service's mark price and pnl.
   */
  priceBasis: z.enum(["realizable", "mark"], { error: 'expected "realizable" or "mark"' }),
  /** The fee a sell is expected to pay, in basis points of its gross proceeds (realizable basis). */
  estimatedSellFeeBps: z
    .number({ error: between(0, 10_000) })
    .int("expected a whole number of basis points")
    .min(0, between(0, 10_000))
    .max(10_000, between(0, 10_000)),
  /** Which pnl percent the pnl rules read on the mark basis: `pnlUsdPercent` or `pnlUsdAfterFeesPercent`. */
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

/** What the sandbox charges a sell (0.5 % protocol + 1 % venue); see strategies/README.md. */
export const DEFAULT_SELL_FEE_BPS = 150;

const globalRules = z.strictObject({
  priceBasis: ruleFields.priceBasis.default("realizable"),
  estimatedSellFeeBps: ruleFields.estimatedSellFeeBps.default(DEFAULT_SELL_FEE_BPS),
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
  priceBasis: ruleFields.priceBasis.optional(),
  estimatedSellFeeBps: ruleFields.estimatedSellFeeBps.optional(),
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
export const SELECTOR_KEYS = [
  "marketId",
  "eventId",
  "titleContains",
  "tags",
  "category",
  "provider",
  "side",
] as const;
/** Selector keys read from the event's details (`snapshot.events`), not from the position. */
export const EVENT_SELECTOR_KEYS = ["tags", "category", "provider"] as const;
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

export const configSchema = globalRules
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
  priceBasis: "realizable" | "mark";
  estimatedSellFeeBps: number;
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

export function baseRules(config: ExitRulesConfig): Rules {
  const { overrides: _overrides, ...rules } = config;
  return rules;
}

export function mergeRules(base: Rules, override: ExitRulesOverride["rules"]): Rules {
  const merged: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(override)) {
    if (value === null) delete merged[key];
    else if (value !== undefined) merged[key] = value;
  }
  return merged as unknown as Rules;
}

function microOrUndefined(dollars: string): bigint | undefined {
  return /^\d+(\.\d{1,6})?$/.test(dollars) ? usdToMicro(dollars) : undefined;
}
