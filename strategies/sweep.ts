import { z } from "zod";
import type { Intent } from "../src/core/intent.js";
import { defineStrategy, type StrategyState } from "../src/core/strategy.js";
import {
  expectedObject,
  mint,
  onlyWhenValid,
  planId,
  positiveRawAmount,
  refuseDuplicateIds,
  sameTokenProblems,
  tokenPairFields,
  wholeNumber,
} from "./config-parts.js";

/**
 * sweep: when the wallet holds more of a token than it should keep (payouts of claims and closes
 * pile up in USDC, say), swap the excess into a target token through the swap build.
 *
 * Rounds, exactly: rule `id` runs in rounds; round r is one swap, intent key
 * `sweep-<wallet>-<id>-<r>` (each wallet sweeps its own balance; a round started before keys carried
 * the wallet keeps its old key, `sweep-<id>-<r>`, so a swap in flight under it is not asked twice).
 * - A poll that sees `balance - keepRaw >= minSwapRaw` asks to swap that excess.
 * - While the round's swap is in flight nothing is asked.
 * - Once it is not in flight, the same round is asked again only while the balance is exactly the
 *   one it was asked at (the swap failed: the ledger re-admits a failed key, bounded); any other
 *   balance (the swap landed, or money came in) starts the next round with the new excess.
 * The balance comes from `snapshot.balances[fromMint]` (the engine reads the sweep's `fromMint`
 * balances); without it the rule asks nothing.
 */

export const STRATEGY_NAME = "sweep";

const RAW_RULE = "expected an integer string of raw token units >= 0";
const ruleSchema = z
  .strictObject(
    {
      id: planId,
      /** The token to sweep: a mint, a symbol or a name (resolved once, like dca's). */
      fromMint: mint,
      /** The token to sweep into. */
      toMint: mint,
      /** Raw units of fromMint to leave in the wallet. */
      keepRaw: z.string({ error: RAW_RULE }).regex(/^\d+$/, RAW_RULE),
      /** Sweep only an excess of at least this many raw units. */
      minSwapRaw: positiveRawAmount.default("1"),
      slippageBps: wholeNumber(0, 10_000, "basis points").optional(),
    },
    expectedObject("a rule: id, fromMint, toMint, keepRaw"),
  )
  .superRefine((rule, ctx) => {
    if (rule.fromMint === rule.toMint)
      ctx.addIssue({ code: "custom", path: ["toMint"], message: "must differ from fromMint" });
  }, onlyWhenValid);

const configSchema = z
  .strictObject({
    rules: z.array(ruleSchema, { error: "expected a list of rules" }).min(1, "expected at least one rule"),
  })
  .superRefine((config, ctx) => refuseDuplicateIds(config.rules, "rules", ctx), onlyWhenValid);

export type SweepConfig = z.infer<typeof configSchema>;

const roundSchema = z.object({
  round: z.number().int().positive(),
  /** The balance the round's swap was asked at (raw units). */
  balance: z.string().regex(/^\d+$/),
  /** The round's intent key; absent on a round started before keys carried the wallet. */
  key: z.string().optional(),
});
type Round = z.infer<typeof roundSchema>;
const stateSchema = z.object({ rules: z.record(z.string(), roundSchema) });

function readState(state: StrategyState): Record<string, Round> {
  const parsed = stateSchema.safeParse(state);
  return parsed.success ? parsed.data.rules : {};
}

export const sweepKey = (wallet: string, id: string, round: number) => `sweep-${wallet}-${id}-${round}`;

/** The key a round was asked under: its own, or the wallet-less one of a round from before. */
function keyOf(id: string, round: Round): string {
  return round.key ?? `sweep-${id}-${round.round}`;
}

export const sweep = defineStrategy<SweepConfig>({
  name: STRATEGY_NAME,
  contractVersion: 1,
  description: "Swap what a wallet holds of a token beyond a threshold into another token",
  configSchema,
  // The balance to compare with `keepRaw` (the config's mints, resolved before this is asked).
  needs: (config) => ({ balances: config.rules.map((rule) => rule.fromMint) }),
  tokenFields: (config) => tokenPairFields("rules", config.rules, { input: "fromMint", output: "toMint" }),
  checkTokens: (config) => sameTokenProblems("rules", config.rules, "fromMint", "toMint"),
  spends: (config) =>
    config.rules.map((rule) => ({ kind: "swap", input: rule.fromMint, output: rule.toMint })),
  evaluate({ snapshot, state, config }) {
    const inFlight = new Set(snapshot.inFlight.map((intent) => intent.key));
    const rules: Record<string, Round> = { ...readState(state) };
    const intents: Intent[] = [];
    for (const rule of config.rules) {
      const current = rules[rule.id];
      if (current && inFlight.has(keyOf(rule.id, current))) continue;
      const held = snapshot.balances[rule.fromMint];
      if (held === undefined || !/^\d+$/.test(held)) continue;
      const excess = BigInt(held) - BigInt(rule.keepRaw);
      if (excess < BigInt(rule.minSwapRaw)) continue;
      const next = (current?.round ?? 0) + 1;
      const round: Round =
        current && current.balance === held
          ? current
          : { round: next, balance: held, key: sweepKey(snapshot.wallet, rule.id, next) };
      rules[rule.id] = round;
      intents.push({
        kind: "swap",
        key: keyOf(rule.id, round),
        wallet: snapshot.wallet,
        strategy: STRATEGY_NAME,
        inputMint: rule.fromMint,
        outputMint: rule.toMint,
        amount: excess.toString(),
        ...(rule.slippageBps === undefined ? {} : { slippageBps: rule.slippageBps }),
        reason: `sweep: rule ${rule.id} holds ${held}, keeps ${rule.keepRaw}, swaps ${excess} (raw units)`,
      });
    }
    return { intents, state: { rules } };
  },
});
