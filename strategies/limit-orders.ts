import { z } from "zod";
import type { Intent } from "../src/core/intent.js";
import { isFinished, type ListedOrder } from "../src/core/service-orders.js";
import type { Snapshot } from "../src/core/snapshot.js";
import { defineStrategy, type StrategyState } from "../src/core/strategy.js";
import {
  expectedObject,
  mint,
  onlyWhenValid,
  planId,
  refuseDuplicateIds,
  sameTokenProblems,
  tokenPairFields,
  wholeNumber,
} from "./config-parts.js";
import { ceilDiv, parseDecimal, pow10, toRawUnits } from "./decimal.js";

/**
 * limit-orders: configured trigger orders, created once and cancelled when their time-to-live
 * passes, when they are removed from config, or when their terms change.
 *
 * Generations, exactly: each configured order id runs in generations; generation g is one trigger
 * order, created by the intent `limit-<wallet>-<id>-<g>` and cancelled by `<create key>-cancel`: each
 * wallet places its own orders. A generation started before keys carried the wallet keeps its old
 * create key, `limit-<id>-<g>`, so an order placed under it is not placed again.
 * - Generation 1 starts on the first poll that sees the id. Until the order account is known
 *   (listed in `snapshot.triggerOrders`), the create is asked for on every poll without it in
 *   flight, so a failed create is retried (the ledger refuses a key that is done).
 * - The generation retires when its TTL passed (counted from the poll that started it), when the id
 *   left the config, or when its terms (side, mints, raw amounts) changed. A retired generation is
 *   cancelled: the cancel is asked for on every poll while the order may be open and the cancel is
 *   not in flight; it is forgotten once the order is no longer open (see the service's list below),
 *   or no longer in the ledger's open orders (cancelled, or never created), and its create is not in
 *   flight.
 * - A new generation (g+1) starts when the terms changed, or the id came back after removal, and
 *   no earlier generation of the id is still waiting for its cancel: one order per id at a time.
 *   An order that expired is not placed again with the same terms (change them, or the id).
 * The order account comes from the ledger (`TriggerOrdersSnapshot`), or, when the create's answer
 * left it out, from the service's list (`listedTriggerOrders`: an open order of the same terms).
 * Without either the strategy creates but never cancels or forgets.
 * A generation retired with its account still unknown waits (blocking the id) until a list shows its
 * order open, which is then cancelled, or shows none 60 s after it retired (never placed).
 *
 * The service's list is the orders' true state, where the snapshot carries it:
 * - A generation whose order the service lists as filled, cancelled or expired is `settled`: nothing
 *   is cancelled, and the same terms are not placed again (as after a TTL).
 * - A retired generation whose order the service lists as finished needs no cancel: it is forgotten.
 * - The list holds every open order (it is absent unless every page of them was read) but only the
 *   latest finished ones, and the service refuses to cancel an order that is not open. A retired
 *   generation whose order two polls with the list, 60 s or more apart, show on neither (and none in
 *   between showed) finished unseen: its cancel is forgotten, unblocking the id. The wait covers an
 *   order the service lists a little late.
 * - An id Keeper has no state for, whose terms match an order the service lists open, adopts that
 *   order as its generation 1 instead of placing a second one (state lost, or placed by hand).
 */

export const STRATEGY_NAME = "limit-orders";

/**
 * Proposed additive field of `Snapshot` (filled by the poll worker from the ledger): trigger
 * orders Keeper created for this wallet that it still considers open, i.e. createTrigger rows with
 * a recorded order account and no cancelTrigger for that order that reached a final outcome.
 */
export interface KnownTriggerOrder {
  /** The createTrigger intent key. */
  readonly key: string;
  /** The order account the create built. */
  readonly order: string;
}
export interface TriggerOrdersSnapshot extends Snapshot {
  readonly triggerOrders?: readonly KnownTriggerOrder[];
}

// ---- config ----

const DECIMAL_RULE = 'expected a decimal string above 0, such as "1.5" (quote it in YAML)';
const positiveDecimal = z
  .string({ error: DECIMAL_RULE })
  .refine((value) => (parseDecimal(value)?.units ?? 0n) > 0n, DECIMAL_RULE);

const orderSchema = z
  .strictObject(
    {
      id: planId,
      /** sell: `price` is output tokens per input token. buy: input tokens per output token. */
      side: z.enum(["sell", "buy"], { error: 'expected "sell" or "buy"' }),
      inputMint: mint,
      outputMint: mint,
      inputDecimals: wholeNumber(0, 30, "decimals"),
      outputDecimals: wholeNumber(0, 30, "decimals"),
      /** How much of the input token the order spends, in whole tokens (exact in inputDecimals). */
      amount: positiveDecimal,
      price: positiveDecimal,
      /** Cancel the order this long after it was asked for. */
      ttlSeconds: wholeNumber(1, 31_536_000, "seconds").optional(),
      slippageBps: wholeNumber(0, 10_000, "basis points").optional(),
    },
    expectedObject("an order: id, side, inputMint, outputMint, inputDecimals, outputDecimals, amount, price"),
  )
  .superRefine((order, ctx) => {
    if (order.inputMint === order.outputMint)
      ctx.addIssue({ code: "custom", path: ["outputMint"], message: "must differ from inputMint" });
    if (toRawUnits(order.amount, order.inputDecimals) === undefined)
      ctx.addIssue({
        code: "custom",
        path: ["amount"],
        message: `has more decimals than the input token's ${order.inputDecimals}`,
      });
  }, onlyWhenValid);

const configSchema = z
  .strictObject({
    orders: z
      .array(orderSchema, { error: "expected a list of orders" })
      .min(1, "expected at least one order"),
  })
  .superRefine((config, ctx) => refuseDuplicateIds(config.orders, "orders", ctx), onlyWhenValid);

export type LimitOrdersConfig = z.infer<typeof configSchema>;
export type LimitOrder = LimitOrdersConfig["orders"][number];

// ---- amounts ----

/**
 * The order's raw amounts, exactly. makingAmount is `amount` in raw input units (the config check
 * refuses an amount that would need rounding). takingAmount is what the price asks for in raw
 * output units, rounded up when it is not whole, so the order never fills at a worse price than
 * configured:
 * - sell: taking = amount * price             (price: output per input)
 * - buy:  taking = amount / price             (price: input per output)
 */
export function triggerAmounts(
  order: Pick<LimitOrder, "side" | "amount" | "price" | "inputDecimals" | "outputDecimals">,
): { makingAmount: string; takingAmount: string } {
  const making = toRawUnits(order.amount, order.inputDecimals);
  const price = parseDecimal(order.price);
  if (making === undefined || !price || price.units === 0n)
    throw new RangeError(`limit order: amount or price is not a valid decimal`);
  // Raw output = making / 10^inputDecimals * price * 10^outputDecimals (sell), or / price (buy).
  const sell = order.side === "sell";
  const numerator = making * pow10(order.outputDecimals) * (sell ? price.units : pow10(price.scale));
  const denominator = pow10(order.inputDecimals) * (sell ? pow10(price.scale) : price.units);
  return { makingAmount: making.toString(), takingAmount: ceilDiv(numerator, denominator).toString() };
}

/** What an order is, for telling a change of terms from a change of TTL or slippage. */
function termsOf(order: LimitOrder): string {
  const { makingAmount, takingAmount } = triggerAmounts(order);
  return [order.side, order.inputMint, order.outputMint, makingAmount, takingAmount].join("|");
}

export const limitOrderKeys = {
  create: (wallet: string, id: string, generation: number) => `limit-${wallet}-${id}-${generation}`,
  cancel: (createKey: string) => `${createKey}-cancel`,
} as const;

// ---- state ----

const generationSchema = z.object({
  generation: z.number().int().positive(),
  terms: z.string(),
  /** Kept for the cancel, which may come after the order left the config. */
  inputMint: z.string(),
  createdAt: z.number().int(),
  /**
   * open: placed (or being placed); expired, replaced, removed: retired, its cancel is pending or done;
   * settled: the service finished it (filled, cancelled or expired), nothing to cancel.
   */
  status: z.enum(["open", "expired", "replaced", "removed", "settled"]),
  /** The order account, when learnt from the service's list rather than the ledger. */
  order: z.string().optional(),
  /** The create intent key; absent on a generation started before keys carried the wallet. */
  key: z.string().optional(),
});
type Generation = z.infer<typeof generationSchema>;

/** The key a generation was created under: its own, or the wallet-less one of a generation from before. */
function createKeyOf(id: string, generation: Generation): string {
  return generation.key ?? `limit-${id}-${generation.generation}`;
}

const cancelSchema = z.object({
  id: z.string(),
  generation: z.number().int().positive(),
  inputMint: z.string(),
  reason: z.string(),
  order: z.string().optional(),
  /**
   * Set when the generation retired with its order account unknown (the create's answer left it out
   * and no list had shown it yet): its terms, to find the order in the service's list, and when it
   * retired, so a generation never placed is forgotten once the list had time to show it.
   */
  terms: z.string().optional(),
  retiredAt: z.number().int().optional(),
  /**
   * The first poll whose list (every open order read) showed the order on neither the open list nor
   * the history page, since it was last listed: a finished order the history page no longer reaches.
   */
  unlistedSince: z.number().int().optional(),
});
type PendingCancel = z.infer<typeof cancelSchema>;
const stateSchema = z.object({
  orders: z.record(z.string(), generationSchema),
  /** Retired generations waiting for their cancel, by create key. */
  cancels: z.record(z.string(), cancelSchema),
});

function readState(state: StrategyState): z.infer<typeof stateSchema> {
  const parsed = stateSchema.safeParse(state);
  return parsed.success ? parsed.data : { orders: {}, cancels: {} };
}

/** An order the service lists open whose mints and raw amounts are `terms`, not one of `taken`. */
function openOrderWithTerms(
  listed: Iterable<ListedOrder>,
  terms: string,
  taken: ReadonlySet<string>,
): string | undefined {
  const [, inputMint, outputMint, making, taking] = terms.split("|");
  for (const o of listed)
    if (
      o.state === "open" &&
      !taken.has(o.order) &&
      o.inputMint === inputMint &&
      o.outputMint === outputMint &&
      o.inAmountRaw === making &&
      o.outAmountRaw === taking
    )
      return o.order;
  return undefined;
}

/** Order accounts Keeper already holds for one of its generations. */
function ownOrders(
  orders: Record<string, Generation>,
  known: ReadonlyMap<string, string> | undefined,
): Set<string> {
  const own = new Set<string>(known?.values() ?? []);
  for (const g of Object.values(orders)) if (g.order !== undefined) own.add(g.order);
  return own;
}

export const limitOrders = defineStrategy<LimitOrdersConfig>({
  name: STRATEGY_NAME,
  contractVersion: 1,
  description: "Place configured trigger orders; cancel them on TTL, removal or a change of terms",
  configSchema,
  // The service's list of trigger orders is the orders' true state.
  needs: () => ({ orderLists: ["trigger"] }),
  tokenFields: (config) =>
    tokenPairFields("orders", config.orders, {
      input: "inputMint",
      output: "outputMint",
      inputDecimals: "inputDecimals",
      outputDecimals: "outputDecimals",
    }),
  checkTokens: (config) => sameTokenProblems("orders", config.orders, "inputMint", "outputMint"),
  spends: (config) =>
    config.orders.map((order) => ({
      kind: "createTrigger",
      input: order.inputMint,
      output: order.outputMint,
    })),
  evaluate({ snapshot, state, config, now }) {
    const ledgerOrders = (snapshot as TriggerOrdersSnapshot).triggerOrders;
    const previous = readState(state);
    const round: Round = {
      snapshot,
      config,
      nowSeconds: Math.floor(now.getTime() / 1000),
      inFlight: new Set(snapshot.inFlight.map((intent) => intent.key)),
      known: ledgerOrders ? new Map(ledgerOrders.map((o) => [o.key, o.order])) : undefined,
      service: snapshot.listedTriggerOrders
        ? new Map(snapshot.listedTriggerOrders.map((o) => [o.order, o]))
        : undefined,
      orders: { ...previous.orders },
      cancels: { ...previous.cancels },
      intents: [],
    };
    settleFromService(round);
    retireGenerations(round);
    cancelRetired(round);
    createConfigured(round);
    return { intents: round.intents, state: { orders: round.orders, cancels: round.cancels } };
  },
});

/** One evaluation's inputs and what it builds up: the generations, the pending cancels, the intents. */
interface Round {
  snapshot: Snapshot;
  config: LimitOrdersConfig;
  nowSeconds: number;
  inFlight: ReadonlySet<string>;
  /** The ledger's open trigger orders by create key; undefined when the snapshot has none. */
  known: ReadonlyMap<string, string> | undefined;
  /** The service's trigger orders by order account; undefined when not read this poll. */
  service: ReadonlyMap<string, ListedOrder> | undefined;
  orders: Record<string, Generation>;
  cancels: Record<string, PendingCancel>;
  intents: Intent[];
}

/** What the service lists: learn missing order accounts, settle generations it finished. */
function settleFromService(round: Round): void {
  const { service, known, orders, inFlight } = round;
  if (!service) return;
  const claimed = new Set<string>();
  for (const [id, current] of Object.entries(orders)) {
    const order = known?.get(createKeyOf(id, current)) ?? current.order;
    if (order !== undefined) claimed.add(order);
  }
  for (const [id, current] of Object.entries(orders)) {
    if (current.status !== "open") continue;
    const key = createKeyOf(id, current);
    let order = known?.get(key) ?? current.order;
    if (order === undefined && !inFlight.has(key)) {
      order = openOrderWithTerms(service.values(), current.terms, claimed);
      if (order !== undefined) {
        claimed.add(order);
        orders[id] = { ...current, order };
      }
    }
    const listed = order === undefined ? undefined : service.get(order)?.state;
    if (listed !== undefined && isFinished(listed))
      orders[id] = { ...(orders[id] ?? current), status: "settled" };
  }
}

/** Retires open generations whose order was removed, changed or outlived its TTL. */
function retireGenerations(round: Round): void {
  const configured = new Map(round.config.orders.map((order) => [order.id, order]));
  for (const [id, current] of Object.entries(round.orders)) {
    if (current.status !== "open") continue;
    const order = configured.get(id);
    let status: Generation["status"] | undefined;
    let reason = "";
    if (!order) {
      status = "removed";
      reason = `removed: order ${id} is no longer configured`;
    } else if (termsOf(order) !== current.terms) {
      status = "replaced";
      reason = `replaced: the terms of order ${id} changed`;
    } else if (order.ttlSeconds !== undefined && round.nowSeconds >= current.createdAt + order.ttlSeconds) {
      status = "expired";
      reason = `ttl: order ${id} is ${round.nowSeconds - current.createdAt}s old (ttl ${order.ttlSeconds}s)`;
    }
    if (!status) continue;
    round.orders[id] = { ...current, status };
    const createKey = createKeyOf(id, current);
    const isAccountKnown = current.order !== undefined || round.known?.has(createKey) === true;
    round.cancels[createKey] = {
      id,
      generation: current.generation,
      inputMint: current.inputMint,
      reason,
      ...(current.order === undefined ? {} : { order: current.order }),
      ...(isAccountKnown ? {} : { terms: current.terms, retiredAt: round.nowSeconds }),
    };
  }
}

/**
 * How long a retired generation whose order account was never learnt waits for the service's list to
 * show its order before it counts as never placed: a new order may be listed a little late.
 */
const UNLISTED_GRACE_SECONDS = 60;

/** Cancels retired orders that are open; forgets those that are gone. */
function cancelRetired(round: Round): void {
  const { known, service, inFlight, cancels } = round;
  for (const [createKey, cancel] of Object.entries(cancels)) {
    if (inFlight.has(createKey) || (!known && !service)) continue; // still being created, or nothing to go by
    const order = known?.get(createKey) ?? cancel.order ?? listedUnderTerms(round, cancel);
    if (order === undefined) {
      // Gone from the ledger's open orders; or, its account never learnt, not listed open.
      if (isForgettable(round, cancel)) delete cancels[createKey];
      continue;
    }
    if (cancel.order === undefined && !known?.has(createKey)) cancels[createKey] = { ...cancel, order };
    const listed = service?.get(order)?.state;
    // Finished by the service: nothing left to cancel.
    if (listed !== undefined && isFinished(listed)) {
      delete cancels[createKey];
      continue;
    }
    const tracked = trackUnlisted(round, cancels[createKey] ?? cancel, listed);
    cancels[createKey] = tracked;
    if (isFinishedUnseen(round, tracked, listed)) {
      delete cancels[createKey];
      continue;
    }
    const key = limitOrderKeys.cancel(createKey);
    if (inFlight.has(key)) continue;
    round.intents.push({
      kind: "cancelTrigger",
      key,
      wallet: round.snapshot.wallet,
      strategy: STRATEGY_NAME,
      order,
      inputMint: cancel.inputMint,
      reason: cancel.reason,
    });
  }
}

/**
 * The pending cancel with `unlistedSince` kept up to date from this poll's list: set by the first
 * poll with the list that shows the order nowhere, cleared by one that shows it; a poll without the
 * list changes nothing.
 */
function trackUnlisted(
  round: Round,
  cancel: PendingCancel,
  listed: ListedOrder["state"] | undefined,
): PendingCancel {
  if (!round.service) return cancel;
  if (listed === undefined)
    return cancel.unlistedSince === undefined ? { ...cancel, unlistedSince: round.nowSeconds } : cancel;
  const { unlistedSince: _listedAgain, ...rest } = cancel;
  return rest;
}

/**
 * Whether a retired generation's order finished without a list saying so: the service lists every
 * open order (a list not read whole is absent) but only the latest finished ones, and refuses to
 * cancel an order that is not open, so its cancel would fail for ever and block the id. The order must
 * be listed nowhere on this poll and on one the grace before it, and on none between: a new order may
 * be listed a little late.
 */
function isFinishedUnseen(
  round: Round,
  cancel: PendingCancel,
  listed: ListedOrder["state"] | undefined,
): boolean {
  if (!round.service || listed !== undefined || cancel.unlistedSince === undefined) return false;
  return round.nowSeconds >= cancel.unlistedSince + UNLISTED_GRACE_SECONDS;
}

/**
 * The order of a retired generation whose account was never learnt, found in the service's list: open,
 * of its terms, and not an order another generation holds.
 */
function listedUnderTerms(round: Round, cancel: PendingCancel): string | undefined {
  if (cancel.terms === undefined || !round.service) return undefined;
  const taken = ownOrders(round.orders, round.known);
  for (const other of Object.values(round.cancels)) if (other.order !== undefined) taken.add(other.order);
  return openOrderWithTerms(round.service.values(), cancel.terms, taken);
}

/**
 * Whether a pending cancel with no order to cancel may be forgotten (unblocking the id's next
 * generation). One whose account was known: at once, it left the ledger's open orders. One whose
 * account was never learnt: only after the list, read this poll, still shows no open order of its
 * terms a grace period after it retired; until then its order may be live, and the next generation
 * would make two.
 */
function isForgettable(round: Round, cancel: PendingCancel): boolean {
  if (cancel.terms === undefined) return true;
  return round.service !== undefined && round.nowSeconds >= (cancel.retiredAt ?? 0) + UNLISTED_GRACE_SECONDS;
}

/** Creates configured orders: a new generation where due, the current one again until it is known. */
function createConfigured(round: Round): void {
  const { snapshot, orders, known, service, inFlight, nowSeconds } = round;
  const waitingForCancel = new Set(Object.values(round.cancels).map((cancel) => cancel.id));
  for (const order of round.config.orders) {
    const current = orders[order.id];
    const terms = termsOf(order);
    let generation: Generation;
    const adopted =
      current === undefined && service
        ? openOrderWithTerms(service.values(), terms, ownOrders(orders, known))
        : undefined;
    if (current?.status === "open") {
      generation = current;
    } else if ((current?.status === "expired" || current?.status === "settled") && current.terms === terms) {
      continue; // it had its time (or the service finished it); the same terms are not placed again
    } else if (adopted !== undefined) {
      // Listed open with these terms, but Keeper has no state for the id: that order is generation 1.
      orders[order.id] = {
        generation: 1,
        terms,
        inputMint: order.inputMint,
        createdAt: nowSeconds,
        status: "open",
        key: limitOrderKeys.create(snapshot.wallet, order.id, 1),
        order: adopted,
      };
      continue;
    } else {
      if (waitingForCancel.has(order.id)) continue; // one order per id at a time
      const number = (current?.generation ?? 0) + 1;
      generation = {
        generation: number,
        terms,
        inputMint: order.inputMint,
        createdAt: nowSeconds,
        status: "open",
        key: limitOrderKeys.create(snapshot.wallet, order.id, number),
      };
      orders[order.id] = generation;
    }
    const key = createKeyOf(order.id, generation);
    if (inFlight.has(key) || known?.has(key) || generation.order !== undefined) continue;
    round.intents.push({
      kind: "createTrigger",
      key,
      wallet: snapshot.wallet,
      strategy: STRATEGY_NAME,
      inputMint: order.inputMint,
      outputMint: order.outputMint,
      ...triggerAmounts(order),
      // The service expires the order by itself too, so the TTL holds even while Keeper is down.
      ...(order.ttlSeconds === undefined ? {} : { expiredAt: generation.createdAt + order.ttlSeconds }),
      ...(order.slippageBps === undefined ? {} : { slippageBps: order.slippageBps }),
      reason: `limit: ${order.side} ${order.amount} at ${order.price} (order ${order.id}, generation ${generation.generation})`,
    });
  }
}
