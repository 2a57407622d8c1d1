import { z } from "zod";
import type { ConfigProblem, TokenField } from "../src/core/strategy-hooks.js";

/** Schemas shared by the built-in strategies' configs. */

const TOKEN_RULE = "expected a token: its mint address, symbol or name (1 to 64 characters, no ',')";
/**
 * A token in config: a mint address, or a symbol or name that the engine resolves once, through
 * token search, at start-up and at `keeper config check` (refusing ambiguous, unverified or
 * suspicious matches). Strategies only ever see mint addresses.
 */
export const mint = z
  .string({ error: TOKEN_RULE })
  .trim()
  .regex(/^[^,]{1,64}$/, TOKEN_RULE);

const ID_RULE = "expected 1 to 64 letters, digits, '-' or '_'";
/** Ids go into intent keys, which allow no ':' or whitespace. */
export const planId = z.string({ error: ID_RULE }).regex(/^[A-Za-z0-9_-]{1,64}$/, ID_RULE);

const RAW_RULE = "expected a positive integer string of raw token units";
export const positiveRawAmount = z
  .string({ error: RAW_RULE })
  .regex(/^\d+$/, RAW_RULE)
  .refine((value) => !/^\d+$/.test(value) || BigInt(value) > 0n, RAW_RULE);

export const wholeNumber = (min: number, max: number, what: string) => {
  const rule = `expected a whole number of ${what} between ${min} and ${max}`;
  return z.number({ error: rule }).int(rule).min(min, rule).max(max, rule);
};

/** Adds a "duplicate id" issue at `<list>[i].id` for every repeated id. */
export function refuseDuplicateIds(
  items: ReadonlyArray<{ id: string }>,
  list: string,
  ctx: z.RefinementCtx,
): void {
  const seen = new Set<string>();
  items.forEach((item, index) => {
    if (seen.has(item.id))
      ctx.addIssue({ code: "custom", path: [list, index, "id"], message: `duplicate id "${item.id}"` });
    seen.add(item.id);
  });
}

/**
 * For refinements across fields: zod runs them even when a field failed (its value may then be
 * anything), so they run only on input that is otherwise valid.
 */
export const onlyWhenValid = {
  when: (payload: { issues: readonly unknown[] }) => payload.issues.length === 0,
};

/** An error map for a list item that is not an object, naming what it should be. */
export const expectedObject = (what: string) => ({
  error: (issue: { code?: string }) => (issue.code === "invalid_type" ? `expected ${what}` : undefined),
});

/**
 * The token fields of a list whose items each name an input and an output token (dca's plans,
 * limit-orders' orders, sweep's rules), with the fields stating their decimals where there are some.
 */
export function tokenPairFields(
  list: string,
  items: readonly unknown[],
  fields: { input: string; output: string; inputDecimals?: string; outputDecimals?: string },
): TokenField[] {
  return items.flatMap((_item, i) => [
    {
      path: [list, i, fields.input],
      ...(fields.inputDecimals ? { decimalsPath: [list, i, fields.inputDecimals] } : {}),
    },
    {
      path: [list, i, fields.output],
      ...(fields.outputDecimals ? { decimalsPath: [list, i, fields.outputDecimals] } : {}),
    },
  ]);
}

/**
 * Items whose two tokens turned out to be one once resolved (`USDC` and its mint, say): the schema
 * refuses two equal strings, only resolution shows two different ones naming the same token.
 */
export function sameTokenProblems(
  list: string,
  items: ReadonlyArray<Record<string, unknown>>,
  input: string,
  output: string,
): ConfigProblem[] {
  return items.flatMap((item, i) =>
    item[input] === item[output]
      ? [{ path: [list, i, output], message: `names the same token as ${input}` }]
      : [],
  );
}
