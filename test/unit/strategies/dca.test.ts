import { describe, expect, it } from "vitest";
import { formatIssues } from "../../../src/config/format-issues.js";
import { intentSchema } from "../../../src/core/intent.js";
import type { ListedOrder } from "../../../src/core/service-orders.js";
import type { InFlightIntent } from "../../../src/core/snapshot.js";
import type { StrategyState } from "../../../src/core/strategy.js";
import {
  checkDcaMinimums,
  DCA_UNSEEN_GRACE_SECONDS,
  dca,
  dcaRounds,
  dcaUnmatched,
  nextRounds,
} from "../../../strategies/dca.js";
import { fakePubkey, inFlight, snapshot, WALLET } from "../../helpers/fixtures.js";

const USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const SOL = "So11111111111111111111111111111111111111112";
const T0 = 1_700_000_000;
const DAY = 86_400;

const weekly = {
  id: "weekly-sol",
  inputMint: USDC,
  outputMint: SOL,
  inAmountRaw: "400000000",
  numberOfOrders: 4,
  intervalSeconds: DAY,
};

function createRecurring(round: number, plan: typeof weekly = weekly) {
  return {
    kind: "createRecurring",
    key: `dca-${WALLET}-${plan.id}-${round}`,
    wallet: WALLET,
    strategy: "dca",
    inputMint: plan.inputMint,
    outputMint: plan.outputMint,
    inAmount: plan.inAmountRaw,
    numberOfOrders: plan.numberOfOrders,
    intervalSeconds: plan.intervalSeconds,
    reason: `dca: plan ${plan.id} round ${round}, ${plan.numberOfOrders} orders every ${plan.intervalSeconds}s`,
  };
}

interface Poll {
  at: number;
  plans?: Array<Record<string, unknown>>;
  inFlightKeys?: string[];
}

/**
 * One poll per entry, state carried; returns the intent keys of each poll. Each poll read the
 * service's list of recurring orders, and it listed none.
 */
function run(plans: Array<Record<string, unknown>>, schedule: Poll[], initial: StrategyState = {}) {
  let state = initial;
  return schedule.map((poll) => {
    const inFlightIntents: InFlightIntent[] = (poll.inFlightKeys ?? []).map((key) =>
      inFlight(key, "createRecurring", { strategy: "dca" }),
    );
    const result = dca.evaluate({
      snapshot: snapshot({ inFlight: inFlightIntents, listedRecurringOrders: [] }),
      state,
      config: dca.configSchema.parse({ plans: poll.plans ?? plans }),
      now: new Date(poll.at * 1000),
    });
    state = result.state;
    for (const intent of result.intents) intentSchema.parse(intent); // what the engine will check
    return result.intents.map((intent) => intent.key);
  });
}

describe("dca: rounds", () => {
  it("the first poll creates round 1, exactly", () => {
    const result = dca.evaluate({
      snapshot: snapshot({ listedRecurringOrders: [] }),
      state: {},
      config: dca.configSchema.parse({ plans: [weekly] }),
      now: new Date(T0 * 1000),
    });
    expect(result.intents).toEqual([createRecurring(1)]);
    expect(result.state).toEqual({
      plans: {
        "weekly-sol": {
          round: 1,
          startedAt: T0,
          endsAt: T0 + 4 * DAY,
          retryUntil: T0 + DAY,
          key: `dca-${WALLET}-weekly-sol-1`,
        },
      },
    });
  });

  it.each<[string, Array<Record<string, unknown>>, Poll[], string[][]]>([
    [
      "not created again while its order is live",
      [weekly],
      [{ at: T0 }, { at: T0 + DAY }, { at: T0 + 2 * DAY }, { at: T0 + 4 * DAY - 1 }],
      [[`dca-${WALLET}-weekly-sol-1`], [], [], []],
    ],
    [
      "asked again in the round's first interval only when not in flight (a failed create is retried)",
      [weekly],
      [
        { at: T0 },
        { at: T0 + 60, inFlightKeys: [`dca-${WALLET}-weekly-sol-1`] },
        { at: T0 + 120 },
        { at: T0 + DAY - 1 },
        { at: T0 + DAY },
      ],
      [
        [`dca-${WALLET}-weekly-sol-1`],
        [],
        [`dca-${WALLET}-weekly-sol-1`],
        [`dca-${WALLET}-weekly-sol-1`],
        [],
      ],
    ],
    [
      "without repeat, the plan is done after its round",
      [weekly],
      [{ at: T0 }, { at: T0 + 4 * DAY }, { at: T0 + 9 * DAY }],
      [[`dca-${WALLET}-weekly-sol-1`], [], []],
    ],
    [
      "with repeat, the next round starts when one ends",
      [{ ...weekly, repeat: true }],
      [{ at: T0 }, { at: T0 + DAY }, { at: T0 + 4 * DAY }, { at: T0 + 5 * DAY }, { at: T0 + 8 * DAY + 5 }],
      [
        [`dca-${WALLET}-weekly-sol-1`],
        [],
        [`dca-${WALLET}-weekly-sol-2`],
        [],
        [`dca-${WALLET}-weekly-sol-3`],
      ],
    ],
    [
      "waits for startAt",
      [{ ...weekly, startAt: T0 + 100 }],
      [{ at: T0 }, { at: T0 + 99 }, { at: T0 + 100 }],
      [[], [], [`dca-${WALLET}-weekly-sol-1`]],
    ],
    [
      "plans run independently",
      [weekly, { ...weekly, id: "daily", intervalSeconds: 3600, numberOfOrders: 2, repeat: true }],
      [{ at: T0 }, { at: T0 + 7200 }, { at: T0 + 4 * DAY }],
      [
        [`dca-${WALLET}-weekly-sol-1`, `dca-${WALLET}-daily-1`],
        [`dca-${WALLET}-weekly-sol-1`, `dca-${WALLET}-daily-2`],
        [`dca-${WALLET}-daily-3`],
      ],
    ],
    [
      "a plan removed and added again continues its round numbering",
      [{ ...weekly, repeat: true }],
      [{ at: T0 }, { at: T0 + 5 * DAY, plans: [{ ...weekly, id: "other" }] }, { at: T0 + 6 * DAY }],
      [[`dca-${WALLET}-weekly-sol-1`], [`dca-${WALLET}-other-1`], [`dca-${WALLET}-weekly-sol-2`]],
    ],
  ])("%s", (_label, plans, schedule, expected) => {
    expect(run(plans, schedule)).toEqual(expected);
  });

  it("a change of amount takes effect with the next round", () => {
    let state: StrategyState = {};
    const poll = (at: number, plan: typeof weekly) => {
      const result = dca.evaluate({
        snapshot: snapshot({ listedRecurringOrders: [] }),
        state,
        config: dca.configSchema.parse({ plans: [{ ...plan, repeat: true }] }),
        now: new Date(at * 1000),
      });
      state = result.state;
      return result.intents;
    };
    const bigger = { ...weekly, inAmountRaw: "800000000" };
    expect(poll(T0, weekly)).toEqual([createRecurring(1)]);
    expect(poll(T0 + 2 * DAY, bigger)).toEqual([]);
    expect(poll(T0 + 4 * DAY, bigger)).toEqual([createRecurring(2, bigger)]);
  });

  it("state it cannot read starts the plan again (the ledger refuses a round that is done)", () => {
    expect(run([weekly], [{ at: T0 }], { plans: { "weekly-sol": { round: "one" } } })).toEqual([
      [`dca-${WALLET}-weekly-sol-1`],
    ]);
  });
});

describe("dca: checkDcaMinimums", () => {
  it.each<[string, { inAmountRaw: string; numberOfOrders: number }, number | string, number, string[]]>([
    ["$100 in 2 orders of USDC", { inAmountRaw: "100000000", numberOfOrders: 2 }, 1, 6, []],
    [
      "$100 in 3 orders is under $50 an order",
      { inAmountRaw: "100000000", numberOfOrders: 3 },
      1,
      6,
      ["numberOfOrders: 3 orders of $33.333333 each, below the minimum of $50.00 an order"],
    ],
    [
      "$80 in 2 orders is under both",
      { inAmountRaw: "80000000", numberOfOrders: 2 },
      "1",
      6,
      [
        "inAmountRaw: worth $80.00 in total, below the minimum of $100.00",
        "numberOfOrders: 2 orders of $40.00 each, below the minimum of $50.00 an order",
      ],
    ],
    ["1 SOL at $150.25 in 3 orders", { inAmountRaw: "1000000000", numberOfOrders: 3 }, "150.25", 9, []],
    [
      "1 SOL at $150.25 in 4 orders",
      { inAmountRaw: "1000000000", numberOfOrders: 4 },
      150.25,
      9,
      ["numberOfOrders: 4 orders of $37.5625 each, below the minimum of $50.00 an order"],
    ],
    [
      "a price in exponent notation, exactly",
      { inAmountRaw: "80000000000000", numberOfOrders: 2 },
      1.25e-7,
      5,
      [],
    ],
    [
      "just under by one micro-dollar",
      { inAmountRaw: "99999999", numberOfOrders: 2 },
      1,
      6,
      [
        "inAmountRaw: worth $99.999999 in total, below the minimum of $100.00",
        "numberOfOrders: 2 orders of $49.999999 each, below the minimum of $50.00 an order",
      ],
    ],
    [
      "a negative price",
      { inAmountRaw: "1", numberOfOrders: 2 },
      -1,
      6,
      ["usdPrice: expected a price in dollars >= 0, got -1"],
    ],
    [
      "bad decimals",
      { inAmountRaw: "1", numberOfOrders: 2 },
      1,
      1.5,
      ["decimals: expected a whole number >= 0, got 1.5"],
    ],
  ])("%s", (_label, plan, price, decimals, expected) => {
    expect(checkDcaMinimums(plan, price, decimals)).toEqual(expected);
  });
});

describe("dca: config refusals", () => {
  const RAW = "expected a positive integer string of raw token units";
  const TOKEN = "expected a token: its mint address, symbol or name (1 to 64 characters, no ',')";
  it.each<[string, Record<string, unknown>, string[]]>([
    ["no plans key", {}, ["plans: expected a list of plans"]],
    ["an empty list", { plans: [] }, ["plans: expected at least one plan"]],
    [
      "one order",
      { plans: [{ ...weekly, numberOfOrders: 1 }] },
      ["plans[0].numberOfOrders: expected a whole number of orders between 2 and 1000"],
    ],
    ["a decimal amount", { plans: [{ ...weekly, inAmountRaw: "1.5" }] }, [`plans[0].inAmountRaw: ${RAW}`]],
    ["a zero amount", { plans: [{ ...weekly, inAmountRaw: "0" }] }, [`plans[0].inAmountRaw: ${RAW}`]],
    ["an amount as a number", { plans: [{ ...weekly, inAmountRaw: 100 }] }, [`plans[0].inAmountRaw: ${RAW}`]],
    [
      "an amount past 2^53 (the service takes a JSON number)",
      { plans: [{ ...weekly, inAmountRaw: "9007199254740993" }] },
      ["plans[0].inAmountRaw: must be at most 9007199254740991 (the service takes a JSON number)"],
    ],
    [
      "less than a raw unit per order",
      { plans: [{ ...weekly, inAmountRaw: "3" }] },
      ["plans[0].inAmountRaw: must be at least one raw unit per order (numberOfOrders)"],
    ],
    ["an empty token", { plans: [{ ...weekly, inputMint: " " }] }, [`plans[0].inputMint: ${TOKEN}`]],
    ["a token list", { plans: [{ ...weekly, inputMint: "USDC,SOL" }] }, [`plans[0].inputMint: ${TOKEN}`]],
    [
      "the same mint twice",
      { plans: [{ ...weekly, outputMint: USDC }] },
      ["plans[0].outputMint: must differ from inputMint"],
    ],
    [
      "an id with a colon",
      { plans: [{ ...weekly, id: "a:b" }] },
      ["plans[0].id: expected 1 to 64 letters, digits, '-' or '_'"],
    ],
    ["a duplicate id", { plans: [weekly, weekly] }, ['plans[1].id: duplicate id "weekly-sol"']],
    [
      "a zero interval",
      { plans: [{ ...weekly, intervalSeconds: 0 }] },
      ["plans[0].intervalSeconds: expected a whole number of seconds between 1 and 31536000"],
    ],
    [
      "repeat as a string",
      { plans: [{ ...weekly, repeat: "yes" }] },
      ["plans[0].repeat: expected true or false"],
    ],
    ["an unknown key", { plans: [{ ...weekly, amount: "1" }] }, ["plans[0].amount: unknown key"]],
    [
      "a stopAt not after startAt",
      { plans: [{ ...weekly, startAt: T0, stopAt: T0 }] },
      ["plans[0].stopAt: must be after startAt"],
    ],
    [
      "a plan that is not an object",
      { plans: [weekly, null] },
      ["plans[1]: expected a plan: id, inputMint, outputMint, inAmountRaw, numberOfOrders, intervalSeconds"],
    ],
  ])("%s", (_label, config, expected) => {
    const parsed = dca.configSchema.safeParse(config);
    expect(parsed.success).toBe(false);
    expect(parsed.error && formatIssues(parsed.error)).toEqual(expected);
  });

  it("defaults", () => {
    expect(dca.configSchema.parse({ plans: [weekly] })).toEqual({ plans: [{ ...weekly, repeat: false }] });
  });
});

describe("dca: the service's list of recurring orders is the rounds' true state", () => {
  const ORDER = fakePubkey("Rec");
  const OTHER = fakePubkey("Rec");
  const repeating = { ...weekly, repeat: true };
  const listedOrder = (state: ListedOrder["state"], order = ORDER, plan = weekly): ListedOrder => ({
    order,
    inputMint: plan.inputMint,
    outputMint: plan.outputMint,
    inAmountRaw: plan.inAmountRaw,
    state,
  });

  interface ListedPoll extends Poll {
    listed: ListedOrder[];
  }

  /** One poll per entry with the service's list, state carried; returns each poll's intents. */
  function runListed(plans: Array<Record<string, unknown>>, schedule: ListedPoll[]) {
    let state: StrategyState = {};
    return schedule.map((poll) => {
      const result = dca.evaluate({
        snapshot: snapshot({
          inFlight: (poll.inFlightKeys ?? []).map((key) =>
            inFlight(key, "createRecurring", { strategy: "dca" }),
          ),
          listedRecurringOrders: poll.listed,
        }),
        state,
        config: dca.configSchema.parse({ plans: poll.plans ?? plans }),
        now: new Date(poll.at * 1000),
      });
      state = result.state;
      for (const intent of result.intents) intentSchema.parse(intent);
      return result.intents;
    });
  }
  const keys = (polls: ReadonlyArray<ReadonlyArray<{ key: string }>>) =>
    polls.map((intents) => intents.map((i) => i.key));

  it("a round the service lists completed lets the next round start at once (repeat)", () => {
    const polls = runListed(
      [repeating],
      [
        { at: T0, listed: [] },
        { at: T0 + 10, listed: [], inFlightKeys: [`dca-${WALLET}-weekly-sol-1`] },
        { at: T0 + 20, listed: [listedOrder("open")] },
        { at: T0 + DAY, listed: [listedOrder("open")] },
        // Completed well before the four days the round was planned for.
        { at: T0 + DAY + 10, listed: [listedOrder("completed")] },
      ],
    );
    expect(keys(polls)).toEqual([[`dca-${WALLET}-weekly-sol-1`], [], [], [], [`dca-${WALLET}-weekly-sol-2`]]);
  });

  it("without repeat, a completed round ends the plan; a completed earlier order is not the next round's", () => {
    const polls = runListed(
      [weekly],
      [
        { at: T0, listed: [] },
        { at: T0 + 20, listed: [listedOrder("open")] },
        { at: T0 + DAY, listed: [listedOrder("completed")] },
        { at: T0 + 10 * DAY, listed: [listedOrder("completed")] },
      ],
    );
    expect(keys(polls)).toEqual([[`dca-${WALLET}-weekly-sol-1`], [], [], []]);
  });

  it("a round whose order is still listed open stays live past its planned end: no second order", () => {
    const polls = runListed(
      [repeating],
      [
        { at: T0, listed: [] },
        { at: T0 + 20, listed: [listedOrder("open")] },
        { at: T0 + 5 * DAY, listed: [listedOrder("open")] },
        { at: T0 + 5 * DAY + 10, listed: [listedOrder("completed")] },
      ],
    );
    expect(keys(polls)).toEqual([[`dca-${WALLET}-weekly-sol-1`], [], [], [`dca-${WALLET}-weekly-sol-2`]]);
  });

  it("an order listed open that Keeper has no state for is taken as round 1, not placed again", () => {
    const polls = runListed(
      [weekly],
      [
        { at: T0, listed: [listedOrder("open")] },
        { at: T0 + DAY, listed: [listedOrder("open")] },
        { at: T0 + 10 * DAY, listed: [listedOrder("open")] },
      ],
    );
    expect(keys(polls)).toEqual([[], [], []]);
  });

  it("an order of other mints is not the plan's", () => {
    const other = { ...weekly, id: "other", outputMint: fakePubkey("Mint") };
    const polls = runListed([weekly], [{ at: T0, listed: [listedOrder("open", OTHER, other)] }]);
    expect(keys(polls)).toEqual([[`dca-${WALLET}-weekly-sol-1`]]);
  });

  it("a plan removed from config is stopped: its open order is cancelled, once it is cancelled nothing more", () => {
    const daily = { ...weekly, id: "daily", inAmountRaw: "200000000", numberOfOrders: 2 };
    const dailyOrder = listedOrder("open", OTHER, daily);
    const polls = runListed(
      [weekly, daily],
      [
        { at: T0, listed: [] },
        { at: T0 + 20, listed: [listedOrder("open"), dailyOrder] },
        { at: T0 + 30, plans: [daily], listed: [listedOrder("open"), dailyOrder] },
        {
          at: T0 + 40,
          plans: [daily],
          listed: [listedOrder("open"), dailyOrder],
          inFlightKeys: [`dca-${WALLET}-weekly-sol-1-cancel`],
        },
        { at: T0 + 50, plans: [daily], listed: [listedOrder("cancelled"), dailyOrder] },
      ],
    );
    expect(keys(polls)).toEqual([
      [`dca-${WALLET}-weekly-sol-1`, `dca-${WALLET}-daily-1`],
      [],
      [`dca-${WALLET}-weekly-sol-1-cancel`],
      [],
      [],
    ]);
    expect(polls[2]?.[0]).toEqual({
      kind: "cancelRecurring",
      key: `dca-${WALLET}-weekly-sol-1-cancel`,
      wallet: WALLET,
      strategy: "dca",
      order: ORDER,
      inputMint: USDC,
      reason: "dca: plan weekly-sol is no longer configured; stopping round 1",
    });
  });

  it("a plan past its stopAt is stopped: its open order is cancelled and no round starts after", () => {
    const stopping = { ...repeating, stopAt: T0 + DAY };
    const polls = runListed(
      [stopping],
      [
        { at: T0, listed: [] },
        { at: T0 + 20, listed: [listedOrder("open")] },
        { at: T0 + DAY, listed: [listedOrder("open")] },
        { at: T0 + DAY + 10, listed: [listedOrder("cancelled")] },
        { at: T0 + 10 * DAY, listed: [listedOrder("cancelled")] },
      ],
    );
    expect(keys(polls)).toEqual([
      [`dca-${WALLET}-weekly-sol-1`],
      [],
      [`dca-${WALLET}-weekly-sol-1-cancel`],
      [],
      [],
    ]);
    expect(polls[2]?.[0]).toMatchObject({
      kind: "cancelRecurring",
      order: ORDER,
      reason: `dca: plan weekly-sol reached its stopAt ${T0 + DAY}; stopping round 1`,
    });
  });
});

describe("dca: stopAt", () => {
  it("starts no round at or after stopAt, even with repeat", () => {
    expect(
      run([{ ...weekly, repeat: true, stopAt: T0 + 2 * DAY }], [{ at: T0 }, { at: T0 + 5 * DAY }]),
    ).toEqual([[`dca-${WALLET}-weekly-sol-1`], []]);
  });
});

describe("dca: a round starts only when the service says the previous one is over (issue 22, finding 8)", () => {
  const ORDER = fakePubkey("Rec");
  const NEXT = fakePubkey("Rec");
  const STRANGER = fakePubkey("Rec");
  const repeating = { ...weekly, repeat: true };
  const key = (round: number) => `dca-${WALLET}-weekly-sol-${round}`;
  const listedOrder = (state: ListedOrder["state"], order = ORDER, inAmountRaw = weekly.inAmountRaw) => ({
    order,
    inputMint: weekly.inputMint,
    outputMint: weekly.outputMint,
    inAmountRaw,
    state,
  });

  interface MaybeListedPoll extends Poll {
    /** The service's list on this poll; absent: the poll did not read it. */
    listed?: ListedOrder[];
  }

  /** Polls with state carried; each poll's intents, notices and state. */
  function runPolls(schedule: MaybeListedPoll[], plans = [repeating], initial: StrategyState = {}) {
    let state = initial;
    return schedule.map((poll) => {
      const result = dca.evaluate({
        snapshot: snapshot({
          inFlight: (poll.inFlightKeys ?? []).map((k) => inFlight(k, "createRecurring", { strategy: "dca" })),
          ...(poll.listed ? { listedRecurringOrders: poll.listed } : {}),
        }),
        state,
        config: dca.configSchema.parse({ plans }),
        now: new Date(poll.at * 1000),
      });
      state = result.state;
      for (const intent of result.intents) intentSchema.parse(intent);
      return {
        keys: result.intents.map((i) => i.key),
        notices: (result as { notices?: Array<{ code: string }> }).notices?.map((n) => n.code) ?? [],
        state,
      };
    });
  }
  /** Round 1 asked at T0, its create done, its order learnt from the list. */
  const roundOneLive: MaybeListedPoll[] = [
    { at: T0, listed: [] },
    { at: T0 + 10, listed: [], inFlightKeys: [key(1)] },
    { at: T0 + 20, listed: [listedOrder("open")] },
  ];

  it("a round past its clock on a poll without the order list places nothing", () => {
    const polls = runPolls([...roundOneLive, { at: T0 + 5 * DAY }, { at: T0 + 30 * DAY }]);
    expect(polls.map((p) => p.keys)).toEqual([[key(1)], [], [], [], []]);
  });

  it("a round whose order was never matched, past its clock, places nothing on a poll without the list", () => {
    const polls = runPolls([{ at: T0, listed: [] }, { at: T0 + 5 * DAY }, { at: T0 + 6 * DAY }]);
    expect(polls.map((p) => p.keys)).toEqual([[key(1)], [], []]);
  });

  it("no first round on a poll without the list (a Redis restart lost the state): the listed order is taken", () => {
    const polls = runPolls([{ at: T0 }, { at: T0 + 10 }, { at: T0 + 20, listed: [listedOrder("open")] }]);
    expect(polls.map((p) => p.keys)).toEqual([[], [], []]);
    expect(dcaRounds(polls[2]?.state ?? {})["weekly-sol"]).toMatchObject({ round: 1, order: ORDER });
  });

  it("with the previous order still listed open past its schedule, places nothing, however long", () => {
    const polls = runPolls([
      ...roundOneLive,
      { at: T0 + 5 * DAY, listed: [listedOrder("open")] },
      { at: T0 + 5 * DAY + 1 },
      { at: T0 + 90 * DAY, listed: [listedOrder("open")] },
    ]);
    expect(polls.slice(3).map((p) => p.keys)).toEqual([[], [], []]);
  });

  it("once the list shows it finished, the next round is placed exactly once", () => {
    const polls = runPolls([
      ...roundOneLive,
      { at: T0 + 5 * DAY, listed: [listedOrder("open")] },
      { at: T0 + 5 * DAY + 10, listed: [listedOrder("completed")] },
      { at: T0 + 5 * DAY + 20, listed: [listedOrder("completed")], inFlightKeys: [key(2)] },
      { at: T0 + 5 * DAY + 30 },
      { at: T0 + 5 * DAY + 40, listed: [listedOrder("completed"), listedOrder("open", NEXT)] },
      { at: T0 + 12 * DAY, listed: [listedOrder("completed"), listedOrder("open", NEXT)] },
    ]);
    // Asked again early in its round while its order is not listed yet: the same key, which the
    // ledger admits once.
    expect(polls.slice(3).map((p) => p.keys)).toEqual([[], [key(2)], [], [key(2)], [], []]);
    expect(dcaRounds(polls.at(-1)?.state ?? {})["weekly-sol"]).toMatchObject({ round: 2, order: NEXT });
  });

  it("an order no longer listed is over once two list reads in a row miss it (it may slip between pages)", () => {
    const polls = runPolls([
      ...roundOneLive,
      { at: T0 + DAY, listed: [] },
      { at: T0 + DAY + 10, listed: [listedOrder("open")] },
      { at: T0 + DAY + 20, listed: [] },
      { at: T0 + DAY + 25 },
      { at: T0 + DAY + 30, listed: [] },
    ]);
    expect(polls.slice(3).map((p) => p.keys)).toEqual([[], [], [], [], [key(2)]]);
  });

  it("a round whose order was never listed waits a grace after its create was last in flight", () => {
    const quick = { ...repeating, numberOfOrders: 2, intervalSeconds: 1 };
    const at = (seconds: number, inFlightKeys: string[] = []) => ({
      at: T0 + seconds,
      listed: [],
      inFlightKeys,
    });
    const polls = runPolls(
      [
        at(0),
        at(5, [key(1)]),
        at(30, [key(1)]),
        // Landed, but the service does not list it yet: its planned end (2 s) is long past.
        at(31),
        at(30 + DCA_UNSEEN_GRACE_SECONDS - 1),
        at(30 + DCA_UNSEEN_GRACE_SECONDS),
      ],
      [quick],
    );
    expect(polls.map((p) => p.keys)).toEqual([[key(1)], [], [], [], [], [key(2)]]);
    expect(polls.at(-1)?.notices).toEqual(["dca_round_order_unseen"]);
  });

  it("an open order of the plan's mints Keeper cannot match is reported once and not replaced", () => {
    const stranger = listedOrder("open", STRANGER, "123456789");
    const polls = runPolls([
      { at: T0, listed: [] },
      // Round 1's order listed with an amount that is not the plan's: it cannot be matched.
      { at: T0 + 20, listed: [stranger] },
      { at: T0 + 5 * DAY, listed: [stranger] },
      // A poll without the list in between: nothing starts, nothing is reported again.
      { at: T0 + 5 * DAY + 10 },
      { at: T0 + 6 * DAY, listed: [stranger] },
      { at: T0 + 7 * DAY, listed: [{ ...stranger, state: "completed" }] },
    ]);
    expect(polls.map((p) => p.keys)).toEqual([[key(1)], [key(1)], [], [], [], [key(2)]]);
    expect(polls.map((p) => p.notices)).toEqual([
      [],
      [],
      ["dca_round_order_unseen", "dca_order_unmatched"],
      [],
      [],
      [],
    ]);
    for (const poll of polls.slice(2, 5))
      expect(dcaUnmatched(poll.state)).toEqual({ "weekly-sol": { order: STRANGER, since: T0 + 5 * DAY } });
    expect(dcaUnmatched(polls[5]?.state ?? {})).toEqual({});
    // The status page says what the plan waits on.
    const view = dca.statusView?.({
      config: dca.configSchema.parse({ plans: [repeating] }),
      state: polls[4]?.state ?? {},
      positions: [],
    } as never);
    const row = view?.tables?.[0]?.rows[0];
    expect(view?.tables?.[0]?.columns.at(-1)).toBe("waiting on");
    expect(row?.at(-1)).toMatchObject({ isAlert: true });
    expect(row?.at(-1)?.text).toContain(STRANGER);
  });

  it("a plan with no state does not start beside an open order of its mints it cannot match", () => {
    const polls = runPolls([{ at: T0, listed: [listedOrder("open", STRANGER, "999000000")] }]);
    expect(polls[0]?.keys).toEqual([]);
    expect(polls[0]?.notices).toEqual(["dca_order_unmatched"]);
  });

  it("a round whose order was never listed open ends at its planned time on a poll with the list, reported", () => {
    const polls = runPolls([
      { at: T0, listed: [] },
      { at: T0 + 4 * DAY, listed: [] },
    ]);
    expect(polls[1]?.keys).toEqual([key(2)]);
    expect(polls[1]?.notices).toEqual(["dca_round_order_unseen"]);
  });
});

describe("dca: what is next, for the status page", () => {
  const next = (plans: Array<Record<string, unknown>>, state: StrategyState, at: number) =>
    nextRounds(dca.configSchema.parse({ plans }), state, at);
  const round = (n: number, extra: Record<string, unknown> = {}) => ({
    plans: {
      "weekly-sol": { round: n, startedAt: T0, endsAt: T0 + 4 * DAY, retryUntil: T0 + DAY, ...extra },
    },
  });

  it("a plan not started: round 1 at its start time, or at the next poll", () => {
    expect(next([{ ...weekly, startAt: T0 + DAY }], {}, T0)).toEqual([
      {
        text: "plan weekly-sol: round 1 (400 USDC in 4 orders) starts at the first poll from then",
        at: T0 + DAY,
      },
    ]);
    expect(next([weekly], {}, T0)[0]?.at).toBe(T0);
  });

  it("a repeating plan's next round is due when the live one ends; a plan's last round says it is its last", () => {
    expect(next([{ ...weekly, repeat: true }], round(2), T0 + DAY)).toEqual([
      {
        text: "plan weekly-sol: round 2 runs until then; round 3 (400 USDC in 4 orders) is due then",
        at: T0 + 4 * DAY,
      },
    ]);
    expect(next([weekly], round(1), T0 + DAY)).toEqual([
      { text: "plan weekly-sol: round 1, its last, runs until then", at: T0 + 4 * DAY },
    ]);
  });

  it("a round that ended: the next at the next poll if it repeats, nothing if not; nothing past stopAt", () => {
    const ended = round(2, { endedAt: T0 + 4 * DAY });
    expect(next([{ ...weekly, repeat: true }], ended, T0 + 5 * DAY)).toEqual([
      { text: "plan weekly-sol: round 3 (400 USDC in 4 orders) starts at the next poll", at: T0 + 5 * DAY },
    ]);
    expect(next([weekly], ended, T0 + 5 * DAY)).toEqual([]);
    expect(next([{ ...weekly, repeat: true, stopAt: T0 + 2 * DAY }], round(2), T0 + 3 * DAY)).toEqual([]);
  });
});
