import { z } from "zod";
import type { Intent } from "../src/core/intent.js";
import { formatUsd } from "../src/core/money.js";
import { isFinished, type ListedOrder } from "../src/core/service-orders.js";
import { defineStrategy, type StrategyState } from "../src/core/strategy.js";
import type { ConfigProblem, TokenFacts } from "../src/core/strategy-hooks.js";
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
import { type Decimal, decimalFromNumber, parseDecimal, pow10 } from "./decimal.js";

/**
 * dca: dollar-cost averaging through recurring (time-based) orders.
 *
 * Rounds, exactly: a plan runs in rounds. Round r is one recurring order, intent key
 * `dca-<wallet>-<id>-<r>`: each wallet runs its own plans, and a round of one never stands in for
 * another's. A round started before keys carried the wallet keeps its old key, `dca-<id>-<r>`, so a
 * round done under it is not placed again.
 * - Round 1 starts on the first poll at or after `startAt` (at once without it).
 * - A round started at `startedAt` is live until `startedAt + numberOfOrders * intervalSeconds`;
 *   while it is live no new order is created for the plan.
 * - During the round's first interval the strategy asks for the same intent on every poll that
 *   does not already have it in flight, so a create that failed is retried (the ledger refuses the
 *   key once it is done, and re-admits a failed one, bounded). After that it asks nothing.
 * - When the round ends: with `repeat`, round r+1 starts on that poll; without, the plan is done.
 * - A plan's state outlives its removal from config, so re-adding the id continues the round
 *   numbering instead of repeating a key the ledger already holds as done.
 * A change to a plan's amounts takes effect with its next round; the live order is not touched.
 *
 * The service's list of recurring orders (`listedRecurringOrders`) is the rounds' true state, where
 * the snapshot carries it. A round's order is the open listed order of the plan's mints (and amount,
 * where listed) that no other plan holds, learnt once its create is no longer in flight. Then:
 * - while the service lists the round's order open, the round is live, whatever `endsAt` says;
 * - once it lists it completed (or cancelled), the round is over at once: with `repeat` the next
 *   round starts on that poll;
 * - a round whose order finished before Keeper ever saw it listed open is not matched (an older
 *   round's finished order could be taken for it): it ends at `endsAt`, as without the list;
 * - a plan Keeper has no state for, whose order the service lists open, takes that order as its
 *   round 1 instead of placing a second one;
 * - a plan removed from config, or past its `stopAt`, whose round's order is listed open is
 *   stopped: its order is cancelled (`cancelRecurring`, key `<round key>-cancel`) and what is left
 *   of it comes back. Past `stopAt` no round starts, with or without the list.
 */

export const STRATEGY_NAME = "dca";

/** Service minimums for recurring orders (api-gaps). */
export const DCA_MIN_TOTAL_MICRO_USD = 100_000_000n;
export const DCA_MIN_PER_ORDER_MICRO_USD = 50_000_000n;

const planSchema = z
  .strictObject(
    {
      id: planId,
      inputMint: mint,
      outputMint: mint,
      /** Total input of one round, in raw units of the input token, spread over its orders. */
      inAmountRaw: positiveRawAmount,
      numberOfOrders: wholeNumber(2, 1_000, "orders"),
      intervalSeconds: wholeNumber(1, 31_536_000, "seconds"),
      /** Unix seconds: the first round starts on the first poll at or after it. */
      startAt: wholeNumber(0, 32_503_680_000, "Unix seconds").optional(),
      /** Start a new round when one ends. */
      repeat: z.boolean({ error: "expected true or false" }).default(false),
      /** Unix seconds: from then on no round starts, and the live round's order is cancelled. */
      stopAt: wholeNumber(0, 32_503_680_000, "Unix seconds").optional(),
    },
    expectedObject("a plan: id, inputMint, outputMint, inAmountRaw, numberOfOrders, intervalSeconds"),
  )
  .superRefine((plan, ctx) => {
    if (plan.inputMint === plan.outputMint)
      ctx.addIssue({ code: "custom", path: ["outputMint"], message: "must differ from inputMint" });
    // The service takes the amount as a JSON number: past 2^53 it would arrive rounded.
    if (BigInt(plan.inAmountRaw) > BigInt(Number.MAX_SAFE_INTEGER))
      ctx.addIssue({
        code: "custom",
        path: ["inAmountRaw"],
        message: `must be at most ${Number.MAX_SAFE_INTEGER} (the service takes a JSON number)`,
      });
    if (plan.stopAt !== undefined && plan.startAt !== undefined && plan.stopAt <= plan.startAt)
      ctx.addIssue({ code: "custom", path: ["stopAt"], message: "must be after startAt" });
    if (BigInt(plan.inAmountRaw) < BigInt(plan.numberOfOrders))
      ctx.addIssue({
        code: "custom",
        path: ["inAmountRaw"],
        message: "must be at least one raw unit per order (numberOfOrders)",
      });
  }, onlyWhenValid);

const configSchema = z
  .strictObject({
    plans: z.array(planSchema, { error: "expected a list of plans" }).min(1, "expected at least one plan"),
  })
  .superRefine((config, ctx) => refuseDuplicateIds(config.plans, "plans", ctx), onlyWhenValid);

export type DcaConfig = z.infer<typeof configSchema>;
export type DcaPlan = DcaConfig["plans"][number];

// ---- minimums ----

/**
 * Checks a plan against the service's minimums ($100 a round, $50 an order) given the input token's
 * price in dollars (a number from token search, or a decimal string) and its decimals. The config
 * check calls it once it has resolved the token; the strategy cannot (it has no prices).
 * Returns one `field: rule` line per problem, none when the plan is fine. Exact: no floats.
 */
export function checkDcaMinimums(
  plan: Pick<DcaPlan, "inAmountRaw" | "numberOfOrders">,
  usdPrice: number | string,
  decimals: number,
): string[] {
  return dcaMinimumProblems(plan, usdPrice, decimals).map(({ field, message }) => `${field}: ${message}`);
}

function dcaMinimumProblems(
  plan: Pick<DcaPlan, "inAmountRaw" | "numberOfOrders">,
  usdPrice: number | string,
  decimals: number,
): Array<{ field: string; message: string }> {
  const price: Decimal | undefined =
    typeof usdPrice === "number" ? decimalFromNumber(usdPrice) : parseDecimal(usdPrice);
  if (!price)
    return [{ field: "usdPrice", message: `expected a price in dollars >= 0, got ${String(usdPrice)}` }];
  if (!Number.isInteger(decimals) || decimals < 0)
    return [{ field: "decimals", message: `expected a whole number >= 0, got ${decimals}` }];
  const totalMicroUsd = (BigInt(plan.inAmountRaw) * price.units * 1_000_000n) / pow10(decimals + price.scale);
  const perOrderMicroUsd = totalMicroUsd / BigInt(plan.numberOfOrders);
  const problems: Array<{ field: string; message: string }> = [];
  if (totalMicroUsd < DCA_MIN_TOTAL_MICRO_USD)
    problems.push({
      field: "inAmountRaw",
      message:
        `worth $${formatUsd(totalMicroUsd)} in total, below the minimum of ` +
        `$${formatUsd(DCA_MIN_TOTAL_MICRO_USD)}`,
    });
  if (perOrderMicroUsd < DCA_MIN_PER_ORDER_MICRO_USD)
    problems.push({
      field: "numberOfOrders",
      message:
        `${plan.numberOfOrders} orders of $${formatUsd(perOrderMicroUsd)} each, below ` +
        `the minimum of $${formatUsd(DCA_MIN_PER_ORDER_MICRO_USD)} an order`,
    });
  return problems;
}

/**
 * The checks that need the plans' resolved tokens: the service's minimums, with the input token's
 * price and decimals, and two tokens that resolution showed to be one.
 */
function checkPlanTokens(config: DcaConfig, tokens: ReadonlyMap<string, TokenFacts>): ConfigProblem[] {
  const problems = sameTokenProblems("plans", config.plans, "inputMint", "outputMint");
  config.plans.forEach((plan, i) => {
    const input = tokens.get(plan.inputMint);
    if (!input) return;
    if (input.usdPrice === undefined || input.usdPrice === null)
      problems.push({
        path: ["plans", i, "inputMint"],
        message: `${input.symbol} has no price; the $100 / $50 minimums cannot be checked`,
      });
    else
      for (const { field, message } of dcaMinimumProblems(plan, input.usdPrice, input.decimals))
        problems.push({ path: ["plans", i, field], message });
  });
  return problems;
}

// ---- state ----

const roundSchema = z.object({
  round: z.number().int().positive(),
  startedAt: z.number().int(),
  /** The round's order is live until then. */
  endsAt: z.number().int(),
  /** The round's intent is asked for again, on polls without it in flight, until then. */
  retryUntil: z.number().int(),
  /** The round's intent key; absent on a round started before keys carried the wallet. */
  key: z.string().optional(),
  /** The round's recurring order, once learnt from the service's list. */
  order: z.string().optional(),
});
type Round = z.infer<typeof roundSchema>;
const stateSchema = z.object({ plans: z.record(z.string(), roundSchema) });

function readState(state: StrategyState): Record<string, Round> {
  const parsed = stateSchema.safeParse(state);
  return parsed.success ? parsed.data.plans : {};
}

/** Each plan's current round, from the strategy's saved state (for the status page). */
export function dcaRounds(state: StrategyState): Readonly<Record<string, Round>> {
  return readState(state);
}

/** The status page's table of a wallet's plans: the configured ones, and stopped ones it still has a round of. */
function plansTable(config: DcaConfig, state: StrategyState) {
  const rounds = dcaRounds(state);
  const ids = new Set([...config.plans.map((p) => p.id), ...Object.keys(rounds)]);
  const rows = [...ids].sort().map((id) => {
    const round = rounds[id];
    const isConfigured = config.plans.some((p) => p.id === id);
    return [
      { text: id },
      { text: round ? String(round.round) : "not started" },
      round ? { at: round.startedAt } : {},
      round ? { at: round.endsAt } : {},
      { text: round?.order ?? "", isId: true },
      { text: isConfigured ? "yes" : "no (stopped)" },
    ];
  });
  return { title: "DCA plans", columns: ["plan", "round", "started", "ends", "order", "configured"], rows };
}

export function dcaKey(wallet: string, planId: string, round: number): string {
  return `dca-${wallet}-${planId}-${round}`;
}

/** The key a round was asked under: its own, or the wallet-less one of a round from before. */
function keyOf(planId: string, round: Round): string {
  return round.key ?? `dca-${planId}-${round.round}`;
}

/** The open listed order of the plan's mints and amount that no plan holds yet. */
function openOrderOfPlan(
  listed: readonly ListedOrder[],
  plan: DcaPlan,
  taken: ReadonlySet<string>,
): ListedOrder | undefined {
  return listed.find(
    (o) =>
      o.state === "open" &&
      !taken.has(o.order) &&
      o.inputMint === plan.inputMint &&
      o.outputMint === plan.outputMint &&
      (o.inAmountRaw === undefined || o.inAmountRaw === plan.inAmountRaw),
  );
}

/**
 * Cancels of the open orders of plans that are stopped: no longer configured (their state is kept,
 * see "Rounds"), or past their `stopAt`.
 */
function stopPlans(
  plans: Readonly<Record<string, Round>>,
  config: DcaConfig,
  listed: ReadonlyMap<string, ListedOrder>,
  inFlight: ReadonlySet<string>,
  wallet: string,
  nowSeconds: number,
): Intent[] {
  const running = new Map(config.plans.map((p) => [p.id, p]));
  const intents: Intent[] = [];
  for (const [id, round] of Object.entries(plans)) {
    const order = round.order === undefined ? undefined : listed.get(round.order);
    const plan = running.get(id);
    const why =
      plan === undefined
        ? "is no longer configured"
        : plan.stopAt !== undefined && nowSeconds >= plan.stopAt
          ? `reached its stopAt ${plan.stopAt}`
          : undefined;
    if (why === undefined || order?.state !== "open") continue;
    const key = `${keyOf(id, round)}-cancel`;
    if (inFlight.has(key)) continue;
    intents.push({
      kind: "cancelRecurring",
      key,
      wallet,
      strategy: STRATEGY_NAME,
      order: order.order,
      inputMint: order.inputMint,
      reason: `dca: plan ${id} ${why}; stopping round ${round.round}`,
    });
  }
  return intents;
}

export const dca = defineStrategy<DcaConfig>({
  name: STRATEGY_NAME,
  contractVersion: 1,
  description: "Dollar-cost average through recurring orders, one live order per plan",
  configSchema,
  // The service's list of recurring orders is the rounds' true state (see "Rounds" above).
  needs: () => ({ orderLists: ["recurring"] }),
  tokenFields: (config) =>
    tokenPairFields("plans", config.plans, { input: "inputMint", output: "outputMint" }),
  checkTokens: checkPlanTokens,
  spends: (config) =>
    config.plans.map((plan) => ({ kind: "createRecurring", input: plan.inputMint, output: plan.outputMint })),
  statusView: ({ config, state }) => ({ tables: [plansTable(config, state)] }),
  evaluate({ snapshot, state, config, now }) {
    const nowSeconds = Math.floor(now.getTime() / 1000);
    const inFlight = new Set(snapshot.inFlight.map((intent) => intent.key));
    // Keep every plan's last round, configured or not (see "Rounds" above).
    const plans: Record<string, Round> = { ...readState(state) };
    const intents: Intent[] = [];
    const service = snapshot.listedRecurringOrders;
    const listed = new Map((service ?? []).map((o) => [o.order, o]));
    const taken = new Set(Object.values(plans).flatMap((r) => (r.order === undefined ? [] : [r.order])));

    for (const plan of config.plans) {
      let current = plans[plan.id];
      if (service && current?.order === undefined) {
        const found = openOrderOfPlan(service, plan, taken);
        if (found && !current) {
          // Listed open, but Keeper has no state for the plan: that order is its round 1.
          taken.add(found.order);
          plans[plan.id] = {
            round: 1,
            startedAt: nowSeconds,
            endsAt: nowSeconds + plan.numberOfOrders * plan.intervalSeconds,
            retryUntil: nowSeconds,
            key: dcaKey(snapshot.wallet, plan.id, 1),
            order: found.order,
          };
          continue;
        }
        if (found && current && !inFlight.has(keyOf(plan.id, current))) {
          taken.add(found.order);
          current = { ...current, order: found.order };
          plans[plan.id] = current;
        }
      }
      if (plan.stopAt !== undefined && nowSeconds >= plan.stopAt) continue; // stopped: see stopPlans
      const listedState = current?.order === undefined ? undefined : listed.get(current.order)?.state;
      const isLive =
        current !== undefined &&
        (listedState === "open" ||
          (nowSeconds < current.endsAt && (listedState === undefined || !isFinished(listedState))));
      let round: Round | undefined;
      if (current && isLive) {
        // Its order already listed: nothing to ask for again.
        if (nowSeconds < current.retryUntil && current.order === undefined) round = current;
      } else if (current ? plan.repeat : plan.startAt === undefined || nowSeconds >= plan.startAt) {
        const number = (current?.round ?? 0) + 1;
        round = {
          round: number,
          startedAt: nowSeconds,
          endsAt: nowSeconds + plan.numberOfOrders * plan.intervalSeconds,
          retryUntil: nowSeconds + plan.intervalSeconds,
          key: dcaKey(snapshot.wallet, plan.id, number),
        };
        plans[plan.id] = round;
      }
      if (!round) continue;
      const key = keyOf(plan.id, round);
      if (inFlight.has(key)) continue;
      intents.push({
        kind: "createRecurring",
        key,
        wallet: snapshot.wallet,
        strategy: STRATEGY_NAME,
        inputMint: plan.inputMint,
        outputMint: plan.outputMint,
        inAmount: plan.inAmountRaw,
        numberOfOrders: plan.numberOfOrders,
        intervalSeconds: plan.intervalSeconds,
        reason: `dca: plan ${plan.id} round ${round.round}, ${plan.numberOfOrders} orders every ${plan.intervalSeconds}s`,
      });
    }
    if (service) intents.push(...stopPlans(plans, config, listed, inFlight, snapshot.wallet, nowSeconds));
    return { intents, state: { plans } };
  },
});
