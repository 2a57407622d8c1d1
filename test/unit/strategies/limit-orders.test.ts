import { describe, expect, it } from "vitest";
import { formatIssues } from "../../../src/config/format-issues.js";
import { intentSchema } from "../../../src/core/intent.js";
import type { ListedOrder } from "../../../src/core/service-orders.js";
import type { StrategyState } from "../../../src/core/strategy.js";
import {
  type KnownTriggerOrder,
  limitOrders,
  type TriggerOrdersSnapshot,
  triggerAmounts,
} from "../../../strategies/limit-orders.js";
import { fakePubkey, inFlight, snapshot, WALLET } from "../../helpers/fixtures.js";

const USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const SOL = "So11111111111111111111111111111111111111112";
const T0 = 1_700_000_000;
const ORDER_1 = fakePubkey("Ord");
const ORDER_2 = fakePubkey("Ord");

const sellSol = {
  id: "sell-sol",
  side: "sell",
  inputMint: SOL,
  outputMint: USDC,
  inputDecimals: 9,
  outputDecimals: 6,
  amount: "1.5",
  price: "150.25",
  ttlSeconds: 3600,
};
const buySol = {
  ...sellSol,
  id: "buy-sol",
  side: "buy",
  inputMint: USDC,
  outputMint: SOL,
  inputDecimals: 6,
  outputDecimals: 9,
  amount: "300",
  price: "150",
};

describe("limit-orders: amounts, exactly", () => {
  const order = (
    side: string,
    amount: string,
    price: string,
    inputDecimals: number,
    outputDecimals: number,
  ) => ({
    side: side as "sell" | "buy",
    amount,
    price,
    inputDecimals,
    outputDecimals,
  });
  it.each<[string, ReturnType<typeof order>, string, string]>([
    ["sell 1.5 SOL at 150.25 USDC", order("sell", "1.5", "150.25", 9, 6), "1500000000", "225375000"],
    ["buy SOL with 300 USDC at 150", order("buy", "300", "150", 6, 9), "300000000", "2000000000"],
    [
      "buy SOL with 300 USDC at 150.25 (rounded up)",
      order("buy", "300", "150.25", 6, 9),
      "300000000",
      "1996672213",
    ],
    ["a token without decimals", order("sell", "7", "0.333333", 0, 6), "7", "2333331"],
    ["half a raw unit rounds up to one", order("sell", "0.000001", "0.5", 6, 6), "1", "1"],
    ["a tiny price", order("sell", "1", "0.000000000001", 9, 6), "1000000000", "1"],
    ["trailing zeros beyond the decimals", order("sell", "1.500", "2", 1, 0), "15", "3"],
    [
      "more output decimals than input",
      order("sell", "2500000", "0.000025", 5, 6),
      "250000000000",
      "62500000",
    ],
    [
      "beyond 2^53, no floats",
      order("sell", "123456789012.123456789", "1234.5678", 9, 6),
      "123456789012123456789",
      "152415776405761429377",
    ],
  ])("%s", (_label, input, makingAmount, takingAmount) => {
    expect(triggerAmounts(input)).toEqual({ makingAmount, takingAmount });
  });
});

/** The create intent of a generation placed at `createdAt` (its TTL is sent as `expiredAt`). */
function create(order: typeof sellSol, generation: number, createdAt = T0) {
  return {
    kind: "createTrigger",
    key: `limit-${WALLET}-${order.id}-${generation}`,
    wallet: WALLET,
    strategy: "limit-orders",
    inputMint: order.inputMint,
    outputMint: order.outputMint,
    ...triggerAmounts({ ...order, side: order.side as "sell" | "buy" }),
    ...(order.ttlSeconds === undefined ? {} : { expiredAt: createdAt + order.ttlSeconds }),
    reason: `limit: ${order.side} ${order.amount} at ${order.price} (order ${order.id}, generation ${generation})`,
  };
}

function cancel(order: typeof sellSol, generation: number, account: string, reason: string) {
  return {
    kind: "cancelTrigger",
    key: `limit-${WALLET}-${order.id}-${generation}-cancel`,
    wallet: WALLET,
    strategy: "limit-orders",
    order: account,
    inputMint: order.inputMint,
    reason,
  };
}

interface Poll {
  at: number;
  orders: Array<typeof sellSol>;
  inFlightKeys?: string[];
  /** Undefined: the engine does not fill `triggerOrders`. */
  known?: KnownTriggerOrder[];
}

/** One poll per entry, state carried; returns each poll's intents. */
function run(schedule: Poll[]) {
  let state: StrategyState = {};
  return schedule.map((poll) => {
    const snap: TriggerOrdersSnapshot = {
      ...snapshot({ inFlight: (poll.inFlightKeys ?? []).map((key) => inFlight(key, "createTrigger")) }),
      ...(poll.known ? { triggerOrders: poll.known } : {}),
    };
    const result = limitOrders.evaluate({
      snapshot: snap,
      state,
      config: limitOrders.configSchema.parse({ orders: poll.orders }),
      now: new Date(poll.at * 1000),
    });
    state = result.state;
    for (const intent of result.intents) intentSchema.parse(intent); // what the engine will check
    return result.intents;
  });
}

const known = (key: string, order: string) => ({ key, order });

describe("limit-orders: lifecycle", () => {
  it.each<[string, Poll[], unknown[][]]>([
    [
      "created once; not asked again while in flight or once its order is known",
      [
        { at: T0, orders: [sellSol], known: [] },
        { at: T0 + 10, orders: [sellSol], known: [], inFlightKeys: [`limit-${WALLET}-sell-sol-1`] },
        { at: T0 + 20, orders: [sellSol], known: [known(`limit-${WALLET}-sell-sol-1`, ORDER_1)] },
      ],
      [[create(sellSol, 1)], [], []],
    ],
    [
      "asked again while neither in flight nor known (a failed create is retried)",
      [
        { at: T0, orders: [sellSol], known: [] },
        { at: T0 + 10, orders: [sellSol], known: [] },
      ],
      [[create(sellSol, 1)], [create(sellSol, 1)]],
    ],
    [
      "cancelled when its TTL passed, once, and not placed again",
      [
        { at: T0, orders: [sellSol], known: [] },
        { at: T0 + 3599, orders: [sellSol], known: [known(`limit-${WALLET}-sell-sol-1`, ORDER_1)] },
        { at: T0 + 3600, orders: [sellSol], known: [known(`limit-${WALLET}-sell-sol-1`, ORDER_1)] },
        {
          at: T0 + 3700,
          orders: [sellSol],
          known: [known(`limit-${WALLET}-sell-sol-1`, ORDER_1)],
          inFlightKeys: [`limit-${WALLET}-sell-sol-1-cancel`],
        },
        { at: T0 + 3800, orders: [sellSol], known: [] },
        { at: T0 + 9000, orders: [sellSol], known: [] },
      ],
      [
        [create(sellSol, 1)],
        [],
        [cancel(sellSol, 1, ORDER_1, "ttl: order sell-sol is 3600s old (ttl 3600s)")],
        [],
        [],
        [],
      ],
    ],
    [
      "cancelled when removed from config",
      [
        { at: T0, orders: [sellSol, buySol], known: [] },
        {
          at: T0 + 10,
          orders: [buySol],
          known: [known(`limit-${WALLET}-sell-sol-1`, ORDER_1), known(`limit-${WALLET}-buy-sol-1`, ORDER_2)],
        },
        { at: T0 + 20, orders: [buySol], known: [known(`limit-${WALLET}-buy-sol-1`, ORDER_2)] },
      ],
      [
        [create(sellSol, 1), create(buySol, 1)],
        [cancel(sellSol, 1, ORDER_1, "removed: order sell-sol is no longer configured")],
        [],
      ],
    ],
    [
      "a change of terms cancels the old order, then places generation 2",
      [
        { at: T0, orders: [sellSol], known: [] },
        {
          at: T0 + 10,
          orders: [{ ...sellSol, price: "160" }],
          known: [known(`limit-${WALLET}-sell-sol-1`, ORDER_1)],
        },
        {
          at: T0 + 20,
          orders: [{ ...sellSol, price: "160" }],
          known: [known(`limit-${WALLET}-sell-sol-1`, ORDER_1)],
          inFlightKeys: [`limit-${WALLET}-sell-sol-1-cancel`],
        },
        { at: T0 + 30, orders: [{ ...sellSol, price: "160" }], known: [] },
      ],
      [
        [create(sellSol, 1)],
        [cancel(sellSol, 1, ORDER_1, "replaced: the terms of order sell-sol changed")],
        [],
        [create({ ...sellSol, price: "160" }, 2, T0 + 30)],
      ],
    ],
    [
      "a change of TTL or slippage is not a change of terms",
      [
        { at: T0, orders: [sellSol], known: [] },
        {
          at: T0 + 10,
          orders: [{ ...sellSol, ttlSeconds: 7200, price: "150.250" }],
          known: [known(`limit-${WALLET}-sell-sol-1`, ORDER_1)],
        },
        {
          at: T0 + 3600,
          orders: [{ ...sellSol, ttlSeconds: 7200 }],
          known: [known(`limit-${WALLET}-sell-sol-1`, ORDER_1)],
        },
      ],
      [[create(sellSol, 1)], [], []],
    ],
    [
      "an expired order with new terms gets a new generation",
      [
        { at: T0, orders: [sellSol], known: [] },
        { at: T0 + 3600, orders: [sellSol], known: [known(`limit-${WALLET}-sell-sol-1`, ORDER_1)] },
        { at: T0 + 3700, orders: [sellSol], known: [] },
        { at: T0 + 3800, orders: [{ ...sellSol, amount: "2" }], known: [] },
      ],
      [
        [create(sellSol, 1)],
        [cancel(sellSol, 1, ORDER_1, "ttl: order sell-sol is 3600s old (ttl 3600s)")],
        [],
        [create({ ...sellSol, amount: "2" }, 2, T0 + 3800)],
      ],
    ],
    [
      "an id removed and added again continues at the next generation, once the old order is cancelled",
      [
        { at: T0, orders: [sellSol, buySol], known: [] },
        {
          at: T0 + 10,
          orders: [buySol],
          known: [known(`limit-${WALLET}-sell-sol-1`, ORDER_1), known(`limit-${WALLET}-buy-sol-1`, ORDER_2)],
        },
        // Its cancel confirmed: the ledger no longer holds the order open.
        { at: T0 + 20, orders: [sellSol, buySol], known: [known(`limit-${WALLET}-buy-sol-1`, ORDER_2)] },
      ],
      [
        [create(sellSol, 1), create(buySol, 1)],
        [cancel(sellSol, 1, ORDER_1, "removed: order sell-sol is no longer configured")],
        [create(sellSol, 2, T0 + 20)],
      ],
    ],
    [
      "the TTL cancel waits while the create is still in flight",
      [
        { at: T0, orders: [sellSol], known: [] },
        { at: T0 + 3600, orders: [sellSol], known: [], inFlightKeys: [`limit-${WALLET}-sell-sol-1`] },
        { at: T0 + 3700, orders: [sellSol], known: [known(`limit-${WALLET}-sell-sol-1`, ORDER_1)] },
      ],
      [
        [create(sellSol, 1)],
        [],
        [cancel(sellSol, 1, ORDER_1, "ttl: order sell-sol is 3600s old (ttl 3600s)")],
      ],
    ],
    [
      "without triggerOrders from the engine: creates, never cancels or forgets",
      [
        { at: T0, orders: [sellSol] },
        { at: T0 + 10, orders: [sellSol] },
        { at: T0 + 3600, orders: [sellSol] },
        { at: T0 + 3700, orders: [sellSol], known: [known(`limit-${WALLET}-sell-sol-1`, ORDER_1)] },
      ],
      [
        [create(sellSol, 1)],
        [create(sellSol, 1)],
        [],
        [cancel(sellSol, 1, ORDER_1, "ttl: order sell-sol is 3600s old (ttl 3600s)")],
      ],
    ],
  ])("%s", (_label, schedule, expected) => {
    expect(run(schedule)).toEqual(expected);
  });

  it("passes slippage on and keeps its state in plain JSON", () => {
    const result = limitOrders.evaluate({
      snapshot: snapshot(),
      state: {},
      config: limitOrders.configSchema.parse({ orders: [{ ...sellSol, slippageBps: 50 }] }),
      now: new Date(T0 * 1000),
    });
    expect(result.intents).toEqual([{ ...create(sellSol, 1), slippageBps: 50 }]);
    expect(result.state).toEqual({
      orders: {
        "sell-sol": {
          generation: 1,
          terms: `sell|${SOL}|${USDC}|1500000000|225375000`,
          inputMint: SOL,
          createdAt: T0,
          status: "open",
          key: `limit-${WALLET}-sell-sol-1`,
        },
      },
      cancels: {},
    });
  });
});

describe("limit-orders: config refusals", () => {
  const DECIMAL = 'expected a decimal string above 0, such as "1.5" (quote it in YAML)';
  it.each<[string, Record<string, unknown>, string[]]>([
    ["no orders key", {}, ["orders: expected a list of orders"]],
    ["an empty list", { orders: [] }, ["orders: expected at least one order"]],
    [
      "an amount finer than the token",
      { orders: [{ ...sellSol, amount: "0.0000000001" }] },
      ["orders[0].amount: has more decimals than the input token's 9"],
    ],
    ["a price as a YAML number", { orders: [{ ...sellSol, price: 150 }] }, [`orders[0].price: ${DECIMAL}`]],
    ["a zero price", { orders: [{ ...sellSol, price: "0.000" }] }, [`orders[0].price: ${DECIMAL}`]],
    ["a negative amount", { orders: [{ ...sellSol, amount: "-1" }] }, [`orders[0].amount: ${DECIMAL}`]],
    ["exponent notation", { orders: [{ ...sellSol, amount: "1e3" }] }, [`orders[0].amount: ${DECIMAL}`]],
    [
      "an unknown side",
      { orders: [{ ...sellSol, side: "long" }] },
      ['orders[0].side: expected "sell" or "buy"'],
    ],
    [
      "too many decimals",
      { orders: [{ ...sellSol, outputDecimals: 31 }] },
      ["orders[0].outputDecimals: expected a whole number of decimals between 0 and 30"],
    ],
    [
      "a zero TTL",
      { orders: [{ ...sellSol, ttlSeconds: 0 }] },
      ["orders[0].ttlSeconds: expected a whole number of seconds between 1 and 31536000"],
    ],
    [
      "the same mint twice",
      { orders: [{ ...sellSol, outputMint: SOL }] },
      ["orders[0].outputMint: must differ from inputMint"],
    ],
    ["a duplicate id", { orders: [sellSol, sellSol] }, ['orders[1].id: duplicate id "sell-sol"']],
    ["an unknown key", { orders: [{ ...sellSol, expiry: 5 }] }, ["orders[0].expiry: unknown key"]],
    [
      "an order that is not an object",
      { orders: ["sell 1 SOL"] },
      [
        "orders[0]: expected an order: id, side, inputMint, outputMint, inputDecimals, outputDecimals, amount, price",
      ],
    ],
  ])("%s", (_label, config, expected) => {
    const parsed = limitOrders.configSchema.safeParse(config);
    expect(parsed.success).toBe(false);
    expect(parsed.error && formatIssues(parsed.error)).toEqual(expected);
  });
});

describe("limit-orders: the service's list of trigger orders is the orders' true state", () => {
  const listed = (order: typeof sellSol, account: string, state: ListedOrder["state"]): ListedOrder => {
    const amounts = triggerAmounts({ ...order, side: order.side as "sell" | "buy" });
    return {
      order: account,
      inputMint: order.inputMint,
      outputMint: order.outputMint,
      inAmountRaw: amounts.makingAmount,
      outAmountRaw: amounts.takingAmount,
      state,
    };
  };

  interface ListedPoll extends Poll {
    /** Undefined: this poll could not read the list. */
    listed: ListedOrder[] | undefined;
  }

  function runListed(schedule: ListedPoll[]) {
    let state: StrategyState = {};
    return schedule.map((poll) => {
      const snap: TriggerOrdersSnapshot = {
        ...snapshot({
          inFlight: (poll.inFlightKeys ?? []).map((key) => inFlight(key, "createTrigger")),
          ...(poll.listed ? { listedTriggerOrders: poll.listed } : {}),
        }),
        ...(poll.known ? { triggerOrders: poll.known } : {}),
      };
      const result = limitOrders.evaluate({
        snapshot: snap,
        state,
        config: limitOrders.configSchema.parse({ orders: poll.orders }),
        now: new Date(poll.at * 1000),
      });
      state = result.state;
      for (const intent of result.intents) intentSchema.parse(intent);
      return result.intents;
    });
  }
  const mine = [known(`limit-${WALLET}-sell-sol-1`, ORDER_1)];

  it.each<[string, ListedOrder["state"]]>([
    ["filled", "filled"],
    ["cancelled", "cancelled"],
    ["expired", "expired"],
  ])(
    "an order Keeper believes open but the service lists %s moves on: no cancel, not placed again",
    (_n, state) => {
      const polls = runListed([
        { at: T0, orders: [sellSol], known: [], listed: [] },
        { at: T0 + 10, orders: [sellSol], known: mine, listed: [listed(sellSol, ORDER_1, "open")] },
        { at: T0 + 20, orders: [sellSol], known: mine, listed: [listed(sellSol, ORDER_1, state)] },
        // Past its TTL: nothing to cancel. Removed: nothing to cancel either.
        { at: T0 + 3600, orders: [sellSol], known: mine, listed: [listed(sellSol, ORDER_1, state)] },
        { at: T0 + 3700, orders: [buySol], known: mine, listed: [listed(sellSol, ORDER_1, state)] },
      ]);
      expect(polls).toEqual([[create(sellSol, 1)], [], [], [], [create(buySol, 1, T0 + 3700)]]);
    },
  );

  it("a retired order whose cancel is pending is forgotten once the service lists it finished", () => {
    const polls = runListed([
      { at: T0, orders: [sellSol], known: [], listed: [] },
      { at: T0 + 3600, orders: [sellSol], known: mine, listed: [listed(sellSol, ORDER_1, "open")] },
      // The service filled it before the cancel was built: the cancel is not asked for again.
      { at: T0 + 3610, orders: [sellSol], known: mine, listed: [listed(sellSol, ORDER_1, "filled")] },
    ]);
    expect(polls).toEqual([
      [create(sellSol, 1)],
      [cancel(sellSol, 1, ORDER_1, "ttl: order sell-sol is 3600s old (ttl 3600s)")],
      [],
    ]);
  });

  it("an order listed open with the terms of an id Keeper has no state for is adopted, not placed twice", () => {
    const polls = runListed([
      { at: T0, orders: [sellSol], known: [], listed: [listed(sellSol, ORDER_1, "open")] },
      { at: T0 + 10, orders: [sellSol], known: [], listed: [listed(sellSol, ORDER_1, "open")] },
      // Its TTL counts from the poll that adopted it; the cancel names the listed order.
      { at: T0 + 3600, orders: [sellSol], known: [], listed: [listed(sellSol, ORDER_1, "open")] },
    ]);
    expect(polls).toEqual([
      [],
      [],
      [cancel(sellSol, 1, ORDER_1, "ttl: order sell-sol is 3600s old (ttl 3600s)")],
    ]);
  });

  it("a create answered without its order account learns it from the list, and cancels it at TTL", () => {
    const polls = runListed([
      { at: T0, orders: [sellSol], known: [], listed: [] },
      { at: T0 + 10, orders: [sellSol], known: [], listed: [], inFlightKeys: [`limit-${WALLET}-sell-sol-1`] },
      // Confirmed, but the ledger holds no account: the open order of the same terms is it.
      { at: T0 + 20, orders: [sellSol], known: [], listed: [listed(sellSol, ORDER_1, "open")] },
      { at: T0 + 3600, orders: [sellSol], known: [], listed: [listed(sellSol, ORDER_1, "open")] },
    ]);
    expect(polls).toEqual([
      [create(sellSol, 1)],
      [],
      [],
      [cancel(sellSol, 1, ORDER_1, "ttl: order sell-sol is 3600s old (ttl 3600s)")],
    ]);
  });

  it("an order of other terms is not taken for the configured one", () => {
    const polls = runListed([
      {
        at: T0,
        orders: [sellSol],
        known: [],
        listed: [listed({ ...sellSol, price: "151" }, ORDER_2, "open")],
      },
    ]);
    expect(polls).toEqual([[create(sellSol, 1)]]);
  });

  it("after a fill, new terms start the next generation", () => {
    const polls = runListed([
      { at: T0, orders: [sellSol], known: [], listed: [] },
      { at: T0 + 10, orders: [sellSol], known: mine, listed: [listed(sellSol, ORDER_1, "filled")] },
      {
        at: T0 + 20,
        orders: [{ ...sellSol, price: "160" }],
        known: mine,
        listed: [listed(sellSol, ORDER_1, "filled")],
      },
    ]);
    expect(polls).toEqual([[create(sellSol, 1)], [], [create({ ...sellSol, price: "160" }, 2, T0 + 20)]]);
  });

  // The live service's create may answer without the order account: until a list shows the order,
  // Keeper does not know it, yet it may be live. Retiring it then must not make two orders for the id.
  const createdUnknown = (price: string): ListedPoll[] => [
    { at: T0, orders: [{ ...sellSol, price }], known: [], listed: [] },
    {
      at: T0 + 10,
      orders: [{ ...sellSol, price }],
      known: [],
      listed: [],
      inFlightKeys: [`limit-${WALLET}-sell-sol-1`],
    },
  ];
  const repriced = { ...sellSol, price: "160" };

  it("new terms before the old order's account is known: no second order until the old one is cancelled", () => {
    const polls = runListed([
      ...createdUnknown("150.25"),
      // Confirmed without an account; the list does not carry the order yet; the price changes.
      { at: T0 + 20, orders: [repriced], known: [], listed: [] },
      // The list now shows the old order open: it is cancelled, and the new terms still wait.
      { at: T0 + 30, orders: [repriced], known: [], listed: [listed(sellSol, ORDER_1, "open")] },
      { at: T0 + 40, orders: [repriced], known: [], listed: [listed(sellSol, ORDER_1, "cancelled")] },
    ]);
    const reason = "replaced: the terms of order sell-sol changed";
    expect(polls).toEqual([
      [create(sellSol, 1)],
      [],
      [],
      [cancel(sellSol, 1, ORDER_1, reason)],
      [create(repriced, 2, T0 + 40)],
    ]);
  });

  it("an id removed before its order's account is known: the order is cancelled when a list shows it", () => {
    const polls = runListed([
      ...createdUnknown("150.25"),
      { at: T0 + 20, orders: [buySol], known: [], listed: [] },
      // A poll without the list keeps the cancel waiting; the next list shows the order open.
      { at: T0 + 30, orders: [buySol], known: [], listed: [] },
      { at: T0 + 40, orders: [buySol], known: [], listed: [listed(sellSol, ORDER_1, "open")] },
    ]);
    const cancels = polls.map((intents) => intents.filter((i) => i.kind === "cancelTrigger"));
    expect(cancels.slice(2)).toEqual([
      [],
      [],
      [cancel(sellSol, 1, ORDER_1, "removed: order sell-sol is no longer configured")],
    ]);
  });

  // The service lists every open order but only the latest finished ones: an order filled (or
  // cancelled, or expired) behind many newer ones is on neither list, and a cancel of it is refused.
  const retiredThenGone = (own: KnownTriggerOrder[], listedOpen: ListedOrder[]): ListedPoll[] => [
    { at: T0, orders: [sellSol], known: [], listed: [] },
    { at: T0 + 10, orders: [sellSol], known: own, listed: listedOpen },
    { at: T0 + 20, orders: [repriced], known: own, listed: listedOpen },
  ];
  const replacedCancel = cancel(sellSol, 1, ORDER_1, "replaced: the terms of order sell-sol changed");

  it.each<[string, KnownTriggerOrder[]]>([
    ["from the ledger", mine],
    ["learnt from the list", []],
  ])(
    "a retired order (account %s) on neither list, polls 60 s apart, is no longer open: its cancel is forgotten and the next generation starts",
    (_label, own) => {
      const polls = runListed([
        ...retiredThenGone(own, [listed(sellSol, ORDER_1, "open")]),
        // Gone from the lists: it may only be listed late, so the cancel is still asked for a while.
        { at: T0 + 30, orders: [repriced], known: own, listed: [] },
        { at: T0 + 60, orders: [repriced], known: own, listed: [listed(buySol, ORDER_2, "filled")] },
        { at: T0 + 90, orders: [repriced], known: own, listed: [] },
      ]);
      expect(polls).toEqual([
        [create(sellSol, 1)],
        [],
        [replacedCancel],
        [replacedCancel],
        [replacedCancel],
        [create(repriced, 2, T0 + 90)],
      ]);
    },
  );

  it("a retired order is never taken as gone on a poll without the list, nor while the list shows it again", () => {
    const polls = runListed([
      ...retiredThenGone(mine, [listed(sellSol, ORDER_1, "open")]),
      { at: T0 + 30, orders: [repriced], known: mine, listed: [] },
      // Not read: says nothing, however long it lasts.
      { at: T0 + 200, orders: [repriced], known: mine, listed: undefined },
      // Listed open again (the service was late): a later absence starts its wait anew.
      { at: T0 + 210, orders: [repriced], known: mine, listed: [listed(sellSol, ORDER_1, "open")] },
      { at: T0 + 220, orders: [repriced], known: mine, listed: [] },
      { at: T0 + 270, orders: [repriced], known: mine, listed: [] },
      { at: T0 + 280, orders: [repriced], known: mine, listed: [] },
    ]);
    expect(polls).toEqual([
      [create(sellSol, 1)],
      [],
      [replacedCancel],
      [replacedCancel],
      [replacedCancel],
      [replacedCancel],
      [replacedCancel],
      [replacedCancel],
      [create(repriced, 2, T0 + 280)],
    ]);
  });

  it("a retired order created just now and not listed yet keeps its cancel for the grace", () => {
    const polls = runListed([
      { at: T0, orders: [sellSol], known: [], listed: [] },
      // Still being placed when its terms change; confirmed later, the list does not carry it yet.
      {
        at: T0 + 10,
        orders: [repriced],
        known: [],
        listed: [],
        inFlightKeys: [`limit-${WALLET}-sell-sol-1`],
      },
      { at: T0 + 200, orders: [repriced], known: mine, listed: [] },
      { at: T0 + 250, orders: [repriced], known: mine, listed: [] },
      { at: T0 + 260, orders: [repriced], known: mine, listed: [] },
    ]);
    expect(polls).toEqual([
      [create(sellSol, 1)],
      [],
      [replacedCancel],
      [replacedCancel],
      [create(repriced, 2, T0 + 260)],
    ]);
  });

  it("a retired generation the list never shows is taken as never placed after a grace, then replaced", () => {
    const polls = runListed([
      ...createdUnknown("150.25"),
      { at: T0 + 20, orders: [repriced], known: [], listed: [] },
      { at: T0 + 50, orders: [repriced], known: [], listed: [] },
      { at: T0 + 80, orders: [repriced], known: [], listed: [] },
    ]);
    expect(polls).toEqual([[create(sellSol, 1)], [], [], [], [create(repriced, 2, T0 + 80)]]);
  });
});
