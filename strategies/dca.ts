import { z } from "zod";
import type { Intent } from "../src/core/intent.js";
import { tokenAmount } from "../src/core/intent-amount.js";
import { formatUsd } from "../src/core/money.js";
import { isFinished, type ListedOrder } from "../src/core/service-orders.js";
import { defineStrategy, type StrategyNotice, type StrategyState } from "../src/core/strategy.js";
import type { ConfigProblem, NextStep, TokenFacts } from "../src/core/strategy-hooks.js";
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
 *
 * A round starts only when the service says the previous one is over. The service's list of
 * recurring orders (`listedRecurringOrders`, absent on a poll that could not read it) is the rounds'
 * true state; the round's planned end (`endsAt`, `numberOfOrders * intervalSeconds` after its start)
 * ends nothing by itself, since on the live service an order runs past it whenever executions are
 * late or skipped (`minPrice` / `maxPrice`).
 * - No round starts on a poll without the list, round 1 included: the plan waits for one with it.
 * - A round's order is the open listed order of the plan's mints (and amount, where listed) that no
 *   other plan holds, learnt once its create is no longer in flight, for every plan before any round
 *   is decided. A plan Keeper has no state for (a Redis restart) takes such an order as its round 1.
 * - While the list shows the round's order open (or in a state Keeper cannot read), the round is
 *   live. Once it shows it finished, or no longer lists it (every page of open orders is read), the
 *   round is over on that poll (`endedAt`): with `repeat` the next round starts on that poll.
 * - A round whose order was never listed open (it finished before a poll saw it, or its create
 *   failed for good) is over on a poll with the list once `endsAt` has passed and its create is not
 *   in flight; reported (`dca_round_order_unseen`).
 * - No round starts while the list shows an open order of the plan's mints that no plan holds (its
 *   amount differs, a round placed under a lost state, an order made by hand): that order is reported
 *   once (`dca_order_unmatched`), kept in state (`unmatched`, shown on the status page), not replaced.
 * - During a round's first interval, while its order is not listed, the strategy asks for the same
 *   intent on every poll that does not already have it in flight, so a create that failed is retried
 *   (the ledger refuses the key once it is done, and re-admits a failed one, bounded).
 * - A plan's state outlives its removal from config, so re-adding the id continues the round
 *   numbering instead of repeating a key the ledger already holds as done.
 * - A plan removed from config, or past its `stopAt`, whose round's order is listed open is
 *   stopped: its order is cancelled (`cancelRecurring`, key `<round key>-cancel`) and what is left
 *   of it comes back. Past `stopAt` no round starts, with or without the list.
 * A change to a plan's amounts takes effect with its next round; the live order is not touched.
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
  /** When the round's orders were planned to have run (numberOfOrders x intervalSeconds). */
  endsAt: z.number().int(),
  /** The round's intent is asked for again, on polls without it in flight, until then. */
  retryUntil: z.number().int(),
  /** The round's intent key; absent on a round started before keys carried the wallet. */
  key: z.string().optional(),
  /** The round's recurring order, once learnt from the service's list. */
  order: z.string().optional(),
  /** When a poll with the service's list found the round over (its order finished, or never seen). */
  endedAt: z.number().int().optional(),
  /** The last poll that asked for the round's create or saw it in flight. */
  busyAt: z.number().int().optional(),
  /** The first poll, of those since, whose list did not carry the round's order. */
  missingAt: z.number().int().optional(),
});
type Round = z.infer<typeof roundSchema>;

/** An open order of a plan's mints that Keeper cannot match to the plan: no round starts beside it. */
const unmatchedSchema = z.object({ order: z.string(), since: z.number().int() });
type Unmatched = z.infer<typeof unmatchedSchema>;

const stateSchema = z.object({
  plans: z.record(z.string(), roundSchema),
  unmatched: z.record(z.string(), unmatchedSchema).optional(),
});
type DcaState = { plans: Record<string, Round>; unmatched: Record<string, Unmatched> };

function readState(state: StrategyState): DcaState {
  const parsed = stateSchema.safeParse(state);
  return parsed.success
    ? { plans: parsed.data.plans, unmatched: parsed.data.unmatched ?? {} }
    : { plans: {}, unmatched: {} };
}

/** Each plan's current round, from the strategy's saved state (for the status page). */
export function dcaRounds(state: StrategyState): Readonly<Record<string, Round>> {
  return readState(state).plans;
}

/** Open orders of a plan's mints that Keeper could not match to it, by plan (for the status page). */
export function dcaUnmatched(state: StrategyState): Readonly<Record<string, Unmatched>> {
  return readState(state).unmatched;
}

/** The status page's table of a wallet's plans: the configured ones, and stopped ones it still has a round of. */
function plansTable(config: DcaConfig, state: StrategyState) {
  const { plans: rounds, unmatched } = readState(state);
  const ids = new Set([...config.plans.map((p) => p.id), ...Object.keys(rounds)]);
  const rows = [...ids].sort().map((id) => {
    const round = rounds[id];
    const isConfigured = config.plans.some((p) => p.id === id);
    const stranger = unmatched[id];
    return [
      { text: id },
      { text: round ? String(round.round) : "not started" },
      round ? { at: round.startedAt } : {},
      round ? { at: round.endsAt } : {},
      { text: round?.order ?? "", isId: true },
      { text: isConfigured ? "yes" : "no (stopped)" },
      stranger
        ? {
            text: `order ${stranger.order} of its mints is open and not this plan's: no round starts`,
            isAlert: true,
          }
        : {},
    ];
  });
  return {
    title: "DCA plans",
    columns: ["plan", "round", "started", "ends", "order", "configured", "waiting on"],
    rows,
  };
}

/** Which round of each running plan is due, and when: the status page's "next". */
export function nextRounds(config: DcaConfig, state: StrategyState, nowSeconds: number): NextStep[] {
  const { plans: rounds, unmatched } = readState(state);
  const steps: NextStep[] = [];
  for (const plan of config.plans) {
    if (plan.stopAt !== undefined && nowSeconds >= plan.stopAt) continue;
    const round = rounds[plan.id];
    const what = `${tokenAmount(plan.inAmountRaw, plan.inputMint)} in ${plan.numberOfOrders} orders`;
    const waiting = unmatched[plan.id] ? `, waiting on order ${unmatched[plan.id]?.order} to close` : "";
    if (round === undefined) {
      const at = Math.max(plan.startAt ?? nowSeconds, nowSeconds);
      steps.push({
        text: `plan ${plan.id}: round 1 (${what}) starts at the first poll from then${waiting}`,
        at,
      });
    } else if (round.endedAt === undefined)
      steps.push({
        text: plan.repeat
          ? `plan ${plan.id}: round ${round.round} runs until then; round ${round.round + 1} (${what}) is due then${waiting}`
          : `plan ${plan.id}: round ${round.round}, its last, runs until then`,
        at: round.endsAt,
      });
    else if (plan.repeat)
      steps.push({
        text: `plan ${plan.id}: round ${round.round + 1} (${what}) starts at the next poll${waiting}`,
        at: nowSeconds,
      });
  }
  return steps;
}

export function dcaKey(wallet: string, planId: string, round: number): string {
  return `dca-${wallet}-${planId}-${round}`;
}

/** The key a round was asked under: its own, or the wallet-less one of a round from before. */
function keyOf(planId: string, round: Round): string {
  return round.key ?? `dca-${planId}-${round.round}`;
}

/** Whether the service lists the order open, of the plan's input and output mints. */
const isOpenOfPlanMints = (o: ListedOrder, plan: DcaPlan) =>
  o.state === "open" && o.inputMint === plan.inputMint && o.outputMint === plan.outputMint;

/** The open listed order of the plan's mints and amount that no plan holds yet. */
function openOrderOfPlan(
  listed: readonly ListedOrder[],
  plan: DcaPlan,
  taken: ReadonlySet<string>,
): ListedOrder | undefined {
  return listed.find(
    (o) =>
      isOpenOfPlanMints(o, plan) &&
      !taken.has(o.order) &&
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

/** What one poll sees: the service's list (absent when it was not read), and what is in flight. */
interface PollView {
  readonly wallet: string;
  readonly nowSeconds: number;
  readonly inFlight: ReadonlySet<string>;
  readonly listed: readonly ListedOrder[] | undefined;
  readonly byOrder: ReadonlyMap<string, ListedOrder>;
}

function newRound(plan: DcaPlan, number: number, view: PollView, retry: boolean): Round {
  return {
    round: number,
    startedAt: view.nowSeconds,
    endsAt: view.nowSeconds + plan.numberOfOrders * plan.intervalSeconds,
    retryUntil: view.nowSeconds + (retry ? plan.intervalSeconds : 0),
    key: dcaKey(view.wallet, plan.id, number),
  };
}

/**
 * Learns each plan's order from the service's list, before any round is decided (so a plan earlier
 * in the config never takes another's order for a stranger): a round whose create is no longer in
 * flight takes the open order of its mints and amount that no plan holds; a plan with no state
 * takes such an order as its round 1.
 */
function learnOrders(plans: Record<string, Round>, config: DcaConfig, view: PollView, taken: Set<string>) {
  if (!view.listed) return;
  for (const plan of config.plans) {
    const current = plans[plan.id];
    if (current?.order !== undefined || current?.endedAt !== undefined) continue;
    if (current && view.inFlight.has(keyOf(plan.id, current))) continue;
    const found = openOrderOfPlan(view.listed, plan, taken);
    if (!found) continue;
    taken.add(found.order);
    plans[plan.id] = current
      ? { ...current, order: found.order }
      : { ...newRound(plan, 1, view, false), order: found.order };
  }
}

/**
 * How long a round whose order was never listed waits, after its create was last asked for or in
 * flight, before it counts as over: the service may list a new order some seconds after it landed.
 */
export const DCA_UNSEEN_GRACE_SECONDS = 60;

/** The round as this poll sees it: when its create was last busy, and since when its order is missing. */
function observe(plan: DcaPlan, round: Round, view: PollView): Round {
  const next: Round = { ...round };
  if (view.inFlight.has(keyOf(plan.id, round))) next.busyAt = view.nowSeconds;
  if (view.listed && round.order !== undefined) {
    if (view.byOrder.has(round.order)) delete next.missingAt;
    else next.missingAt = round.missingAt ?? view.nowSeconds;
  }
  return next;
}

/**
 * Whether the plan's round is over, by the service's word only: never on a poll without the list.
 * A matched order is over once the list shows it finished, or once two list reads in a row no
 * longer carry it (every open order is read, but an order can slip between two pages read a moment
 * apart). An unmatched round whose create is done is over once its planned end has passed, and
 * DCA_UNSEEN_GRACE_SECONDS since its create was last busy, with no order of it listed open.
 */
function isOver(plan: DcaPlan, round: Round, view: PollView): boolean {
  if (round.endedAt !== undefined) return true;
  if (!view.listed) return false;
  if (round.order !== undefined) {
    const state = view.byOrder.get(round.order)?.state;
    if (state !== undefined) return isFinished(state);
    return round.missingAt !== undefined && view.nowSeconds > round.missingAt;
  }
  if (view.inFlight.has(keyOf(plan.id, round))) return false;
  const quietSince = round.busyAt ?? round.startedAt;
  return view.nowSeconds >= round.endsAt && view.nowSeconds >= quietSince + DCA_UNSEEN_GRACE_SECONDS;
}

/** A notice for the engine to log and count (`keeper_strategy_notices_total`). */
const notice = (code: string, message: string): StrategyNotice => ({ code, message });

/**
 * An open listed order of the plan's mints that no plan holds: no round starts beside it. Reported
 * once, when first seen (`before` is what the plan waited on until now).
 */
function unmatchedOrder(
  plan: DcaPlan,
  listed: readonly ListedOrder[],
  taken: ReadonlySet<string>,
  before: Unmatched | undefined,
  nowSeconds: number,
): { entry: Unmatched; notices: StrategyNotice[] } | undefined {
  const stranger = listed.find((o) => isOpenOfPlanMints(o, plan) && !taken.has(o.order));
  if (!stranger) return undefined;
  if (before?.order === stranger.order) return { entry: before, notices: [] };
  const message = `dca: plan ${plan.id}: order ${stranger.order} of its mints is listed open and is not the plan's; no round starts beside it`;
  return {
    entry: { order: stranger.order, since: nowSeconds },
    notices: [notice("dca_order_unmatched", message)],
  };
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
  statusView: ({ config, state, nowSeconds }) => ({
    tables: [plansTable(config, state)],
    next: nextRounds(config, state, nowSeconds),
  }),
  evaluate({ snapshot, state, config, now }) {
    const saved = readState(state);
    const listed = snapshot.listedRecurringOrders;
    const view: PollView = {
      wallet: snapshot.wallet,
      nowSeconds: Math.floor(now.getTime() / 1000),
      inFlight: new Set(snapshot.inFlight.map((intent) => intent.key)),
      listed,
      byOrder: new Map((listed ?? []).map((o) => [o.order, o])),
    };
    // Keep every plan's last round, configured or not (see "Rounds" above).
    const plans: Record<string, Round> = { ...saved.plans };
    const unmatched: Record<string, Unmatched> = {};
    const intents: Intent[] = [];
    const notices: StrategyNotice[] = [];
    const taken = new Set(Object.values(plans).flatMap((r) => (r.order === undefined ? [] : [r.order])));
    learnOrders(plans, config, view, taken);

    for (const plan of config.plans) {
      if (plan.stopAt !== undefined && view.nowSeconds >= plan.stopAt) continue; // stopped: see stopPlans
      let round = plans[plan.id];
      if (round && round.endedAt === undefined) {
        round = observe(plan, round, view);
        plans[plan.id] = round;
      }
      if (round && !isOver(plan, round, view)) {
        // Live: asked again early in the round while its order is not yet listed.
        if (view.nowSeconds < round.retryUntil && round.order === undefined) {
          const asked = ask(plan, round, view);
          if (asked.length > 0) plans[plan.id] = { ...round, busyAt: view.nowSeconds };
          intents.push(...asked);
        }
        continue;
      }
      if (round && round.endedAt === undefined) {
        round = { ...round, endedAt: view.nowSeconds };
        plans[plan.id] = round;
        if (round.order === undefined)
          notices.push(
            notice(
              "dca_round_order_unseen",
              `dca: plan ${plan.id} round ${round.round}: no order of it was ever listed open; the round ends, past its planned time`,
            ),
          );
      }
      const isDue = round ? plan.repeat : plan.startAt === undefined || view.nowSeconds >= plan.startAt;
      // A round starts only on a poll that read the service's list (see "Rounds" above); what it
      // waited on before is kept until a list says otherwise, so it is not reported twice.
      const before = saved.unmatched[plan.id];
      if (isDue && !listed && before) unmatched[plan.id] = before;
      if (!isDue || !listed) continue;
      const stranger = unmatchedOrder(plan, listed, taken, before, view.nowSeconds);
      if (stranger) {
        unmatched[plan.id] = stranger.entry;
        notices.push(...stranger.notices);
        continue;
      }
      const next = newRound(plan, (round?.round ?? 0) + 1, view, true);
      plans[plan.id] = next;
      intents.push(...ask(plan, next, view));
    }
    if (listed)
      intents.push(...stopPlans(plans, config, view.byOrder, view.inFlight, view.wallet, view.nowSeconds));
    const next: Record<string, unknown> = { plans };
    if (Object.keys(unmatched).length > 0) next.unmatched = unmatched;
    return { intents, state: next, ...(notices.length > 0 ? { notices } : {}) };
  },
});

/** The round's create, unless it is in flight already. */
function ask(plan: DcaPlan, round: Round, view: PollView): Intent[] {
  const key = keyOf(plan.id, round);
  if (view.inFlight.has(key)) return [];
  return [
    {
      kind: "createRecurring",
      key,
      wallet: view.wallet,
      strategy: STRATEGY_NAME,
      inputMint: plan.inputMint,
      outputMint: plan.outputMint,
      inAmount: plan.inAmountRaw,
      numberOfOrders: plan.numberOfOrders,
      intervalSeconds: plan.intervalSeconds,
      reason: `dca: plan ${plan.id} round ${round.round}, ${plan.numberOfOrders} orders every ${plan.intervalSeconds}s`,
    },
  ];
}
