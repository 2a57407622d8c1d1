import { describe, expect, it } from "vitest";
import { formatIssues } from "../../../src/config/format-issues.js";
import type { EventDetails } from "../../../src/core/event-details.js";
import { intentSchema } from "../../../src/core/intent.js";
import type { Position } from "../../../src/core/schemas/prediction.js";
import type { InFlightIntent, Snapshot } from "../../../src/core/snapshot.js";
import type { StrategyState } from "../../../src/core/strategy.js";
import { exitRules, nearestExitRule, specificity } from "../../../strategies/exit-rules/index.js";
import {
  eventMetadata,
  fakePubkey,
  inFlight,
  marketMetadata,
  position,
  snapshot,
  WALLET,
} from "../../helpers/fixtures.js";

// The fixture position: pnl 16.6 % (15 % after fees), mark $0.70, value $7.00, 10 contracts,
// market mkt-1 of event evt-1, closing at 1_700_100_000.
const NOW_SECONDS = 1_700_000_200;
const now = new Date(NOW_SECONDS * 1000);
const P = fakePubkey("Exit");

function at(overrides: Partial<Position> = {}): Position {
  return position({ pubkey: P, ...overrides });
}

function evaluate(
  config: Record<string, unknown>,
  positions: Position[],
  {
    state = {},
    inFlightIntents = [],
    events,
  }: { state?: StrategyState; inFlightIntents?: InFlightIntent[]; events?: Snapshot["events"] } = {},
) {
  return exitRules.evaluate({
    snapshot: snapshot({ positions, inFlight: inFlightIntents, ...(events ? { events } : {}) }),
    state,
    // These tests are of the rules on the mark basis (the realizable basis: exit-rules-realizable.test.ts).
    config: exitRules.configSchema.parse({ priceBasis: "mark", ...config }),
    now,
  });
}

function close(reason: string, extra: Record<string, unknown> = {}) {
  return {
    kind: "close",
    key: `close-${P}`,
    wallet: WALLET,
    strategy: "exit-rules",
    positionPubkey: P,
    reason,
    exitRule: reason.split(":")[0],
    costBasisMicroUsd: "6000000",
    ...extra,
  };
}

/** Runs one poll per position reading, carrying state; returns each poll's reasons ("-" for none). */
function polls(config: Record<string, unknown>, readings: Array<Partial<Position>>): string[] {
  let state: StrategyState = {};
  const out: string[] = [];
  for (const reading of readings) {
    const result = evaluate(config, [at(reading)], { state });
    state = result.state;
    out.push(result.intents.length === 0 ? "-" : String(result.intents[0]?.reason));
    expect(result.intents.length).toBeLessThanOrEqual(1);
  }
  return out;
}

describe("exit-rules: each rule on one poll", () => {
  it.each<[string, Record<string, unknown>, Partial<Position>, ReturnType<typeof close>[]]>([
    ["take-profit reached", { takeProfitPct: 15 }, {}, [close("take-profit: pnl 16.6% >= 15%")]],
    [
      "take-profit exactly at the threshold",
      { takeProfitPct: 16.6 },
      {},
      [close("take-profit: pnl 16.6% >= 16.6%")],
    ],
    ["take-profit not reached", { takeProfitPct: 20 }, {}, []],
    [
      "take-profit after fees reached",
      { basis: "after-fees", takeProfitPct: 15 },
      {},
      [close("take-profit: pnl after fees 15% >= 15%")],
    ],
    [
      "take-profit after fees not reached (before fees would be)",
      { basis: "after-fees", takeProfitPct: 16 },
      {},
      [],
    ],
    [
      "stop-loss reached",
      { stopLossPct: 20 },
      { pnlUsdPercent: -25 },
      [close("stop-loss: pnl -25% <= -20%")],
    ],
    ["stop-loss not reached", { stopLossPct: 20 }, { pnlUsdPercent: -19.9 }, []],
    [
      "stop-loss after fees reached (before fees would not be)",
      { basis: "after-fees", stopLossPct: 20 },
      { pnlUsdPercent: -19, pnlUsdAfterFeesPercent: -21 },
      [close("stop-loss: pnl after fees -21% <= -20%")],
    ],
    [
      "stop-loss before fees ignores the after-fees pnl",
      { stopLossPct: 20 },
      { pnlUsdPercent: -19, pnlUsdAfterFeesPercent: -21 },
      [],
    ],
    [
      "take-profit on the mark price (string)",
      { takeProfitPriceUsd: "0.7" },
      {},
      [close("take-profit-price: mark $0.70 >= $0.70")],
    ],
    [
      "take-profit on the mark price (number)",
      { takeProfitPriceUsd: 0.65 },
      {},
      [close("take-profit-price: mark $0.70 >= $0.65")],
    ],
    ["take-profit on the mark price not reached", { takeProfitPriceUsd: "0.700001" }, {}, []],
    [
      "stop-loss on the mark price",
      { stopLossPriceUsd: "0.3" },
      { markPriceUsd: "300000" },
      [close("stop-loss-price: mark $0.30 <= $0.30")],
    ],
    ["stop-loss on the mark price not reached", { stopLossPriceUsd: "0.3" }, { markPriceUsd: "300001" }, []],
    [
      "close before the market closes: due",
      { closeBeforeSeconds: 99_800 },
      {},
      [close("close-before: market closes in 99800s <= 99800s")],
    ],
    ["close before the market closes: not yet", { closeBeforeSeconds: 99_799 }, {}, []],
    [
      "several rules at once: the stop-loss names the reason",
      { stopLossPct: 10, closeBeforeSeconds: 200_000, takeProfitPriceUsd: "0.1" },
      { pnlUsdPercent: -50 },
      [close("stop-loss: pnl -50% <= -10%")],
    ],
    ["below the minimum size", { takeProfitPct: 15, minPositionUsd: 7.01 }, {}, []],
    [
      "at the minimum size",
      { takeProfitPct: 15, minPositionUsd: 7 },
      {},
      [close("take-profit: pnl 16.6% >= 15%")],
    ],
    [
      "slippage is passed on",
      { takeProfitPct: 15, slippageBps: 150 },
      {},
      [close("take-profit: pnl 16.6% >= 15%", { minSellPriceSlippageBps: 150 })],
    ],
  ])("%s", (_label, config, reading, expected) => {
    const { intents } = evaluate(config, [at(reading)]);
    expect(intents).toEqual(expected);
    for (const intent of intents) intentSchema.parse(intent); // what the engine will check
  });
});

describe("exit-rules: positions that get no intent", () => {
  const config = { takeProfitPct: 15 };
  it.each<[string, Partial<Position>, InFlightIntent[]]>([
    ["open orders on the position", { openOrders: 1 }, []],
    ["its close already in flight", {}, [inFlight(`close-${P}`, "close")]],
    ["another intent for it in flight", {}, [inFlight(`claim-${P}`, "claim", { positionPubkey: P })]],
    ["a close-all of the wallet in flight", {}, [inFlight("close-all-x", "closeAll")]],
    ["nothing left (no size, no contracts)", { contracts: "0", sizeUsd: "0", valueUsd: "0" }, []],
    ["claimable", { claimable: true }, []],
    ["claimed", { claimed: true }, []],
    ["market closed", { marketMetadata: marketMetadata({ status: "closed" }) }, []],
    ["market cancelled", { marketMetadata: marketMetadata({ status: "cancelled" }) }, []],
  ])("%s", (_label, reading, inFlightIntents) => {
    expect(evaluate(config, [at(reading)], { inFlightIntents }).intents).toEqual([]);
  });

  it("an intent in flight for another position does not hold this one back", () => {
    const other = fakePubkey("Other");
    const result = evaluate(config, [at()], {
      inFlightIntents: [inFlight(`close-${other}`, "close", { positionPubkey: other })],
    });
    expect(result.intents).toEqual([close("take-profit: pnl 16.6% >= 15%")]);
  });
});

describe("exit-rules: figures the live service sends as null", () => {
  // The fixture's pnl is 16.6 %, mark $0.70, value $7.00: each rule below would fire on it.
  const closedMarketNulls: Partial<Position> = {
    valueUsd: null,
    markPriceUsd: null,
    sellPriceUsd: null,
    pnlUsd: null,
    pnlUsdAfterFees: null,
    pnlUsdPercent: null,
    pnlUsdAfterFeesPercent: null,
  };
  it.each<[string, Record<string, unknown>, Partial<Position>]>([
    ["take-profit on a null pnl", { takeProfitPct: 15 }, { pnlUsdPercent: null }],
    ["stop-loss on a null pnl", { stopLossPct: 10 }, { pnlUsdPercent: null }],
    [
      "take-profit after fees on a null pnl",
      { takeProfitPct: 10, basis: "after-fees" },
      { pnlUsdAfterFeesPercent: null },
    ],
    ["take-profit price on a null mark", { takeProfitPriceUsd: "0.60" }, { markPriceUsd: null }],
    ["stop-loss price on a null mark", { stopLossPriceUsd: "0.80" }, { markPriceUsd: null }],
    [
      "every figure null (the market just closed, still listed open)",
      { takeProfitPct: 15, stopLossPriceUsd: "0.80" },
      closedMarketNulls,
    ],
  ])("%s does not fire", (_label, config, reading) => {
    expect(evaluate(config, [at(reading)]).intents).toEqual([]);
  });

  it("a null value keeps the trailing peak and does not fire; the next valued poll does", () => {
    expect(
      polls({ trailingStopPct: 10 }, [{ valueUsd: "8000000" }, { valueUsd: null }, { valueUsd: "7200000" }]),
    ).toEqual(["-", "-", "trailing-stop: value $7.20 is 10% below peak $8.00 >= 10%"]);
  });

  it("a rule that entered is not held by a null reading: it starts again", () => {
    const config = { takeProfitPct: 15, confirmPolls: 2 };
    expect(polls(config, [{}, { pnlUsdPercent: null }, {}, {}])).toEqual([
      "-",
      "-",
      "-",
      "take-profit: pnl 16.6% >= 15%",
    ]);
  });

  it("a position under one contract (contracts floored to 0) is still watched through its USD size", () => {
    expect(evaluate({ takeProfitPct: 15 }, [at({ contracts: "0" })]).intents).toEqual([
      close("take-profit: pnl 16.6% >= 15%"),
    ]);
  });

  it("without a valuation the size decides minPositionUsd", () => {
    const reading = { valueUsd: null, sizeUsd: "400000" };
    expect(evaluate({ closeBeforeSeconds: 200_000, minPositionUsd: 1 }, [at(reading)]).intents).toEqual([]);
    expect(
      evaluate({ closeBeforeSeconds: 200_000, minPositionUsd: 0.3 }, [at(reading)]).intents,
    ).toHaveLength(1);
  });

  it("a market without closeTime in its metadata never fires close-before", () => {
    const { closeTime: _closeTime, ...withoutClose } = at().marketMetadata;
    expect(evaluate({ closeBeforeSeconds: 200_000 }, [at({ marketMetadata: withoutClose })]).intents).toEqual(
      [],
    );
  });
});

describe("exit-rules: trailing stop across polls", () => {
  it.each<[string, Record<string, unknown>, Array<Partial<Position>>, string[]]>([
    [
      "closes 10% below the peak, not before",
      { trailingStopPct: 10 },
      [{ valueUsd: "7000000" }, { valueUsd: "8000000" }, { valueUsd: "7300000" }, { valueUsd: "7200000" }],
      ["-", "-", "-", "trailing-stop: value $7.20 is 10% below peak $8.00 >= 10%"],
    ],
    [
      "the peak only rises",
      { trailingStopPct: 10 },
      [{ valueUsd: "8000000" }, { valueUsd: "7500000" }, { valueUsd: "7900000" }, { valueUsd: "7100000" }],
      ["-", "-", "-", "trailing-stop: value $7.10 is 11.25% below peak $8.00 >= 10%"],
    ],
    [
      "waits for the activation profit before it arms",
      { trailingStopPct: 10, trailingActivationPct: 20 },
      [
        { valueUsd: "8000000", pnlUsdPercent: 16 },
        { valueUsd: "7000000", pnlUsdPercent: 5 },
        { valueUsd: "9000000", pnlUsdPercent: 25 },
        { valueUsd: "8200000", pnlUsdPercent: 14 },
        { valueUsd: "8100000", pnlUsdPercent: 12 },
      ],
      ["-", "-", "-", "-", "trailing-stop: value $8.10 is 10% below peak $9.00 >= 10%"],
    ],
    [
      "stays armed once the activation was reached",
      { trailingStopPct: 10, trailingActivationPct: 20 },
      [
        { valueUsd: "9000000", pnlUsdPercent: 25 },
        { valueUsd: "8000000", pnlUsdPercent: 5 },
      ],
      ["-", "trailing-stop: value $8.00 is 11.11% below peak $9.00 >= 10%"],
    ],
    [
      "a change of size starts a new peak",
      { trailingStopPct: 10 },
      [
        { valueUsd: "8000000", sizeUsd: "6000000" },
        { valueUsd: "4000000", sizeUsd: "3000000" },
        { valueUsd: "3600000", sizeUsd: "3000000" },
      ],
      ["-", "-", "trailing-stop: value $3.60 is 10% below peak $4.00 >= 10%"],
    ],
  ])("%s", (_label, config, readings, expected) => {
    expect(polls(config, readings)).toEqual(expected);
  });

  it("keeps the peak in state and prunes positions that are gone", () => {
    const gone = position({ valueUsd: "5000000" });
    const claimable = position({ claimable: true });
    const first = evaluate({ trailingStopPct: 10, trailingActivationPct: 20 }, [at(), gone, claimable]);
    expect(first.state).toEqual({
      positions: {
        [P]: { peakValueMicroUsd: "7000000", sizeMicroUsd: "6000000", trailingArmed: false, polls: {} },
        [gone.pubkey]: {
          peakValueMicroUsd: "5000000",
          sizeMicroUsd: "6000000",
          trailingArmed: false,
          polls: {},
        },
      },
    });
    const second = evaluate({ trailingStopPct: 10, trailingActivationPct: 20 }, [at({ pnlUsdPercent: 21 })], {
      state: first.state,
    });
    expect(second.state).toEqual({
      positions: {
        [P]: { peakValueMicroUsd: "7000000", sizeMicroUsd: "6000000", trailingArmed: true, polls: {} },
      },
    });
  });

  it("reads state written before sizeMicroUsd (with contracts): the counts stay, the peak starts again", () => {
    const old = {
      peakValueMicroUsd: "9000000",
      contracts: "10",
      trailingArmed: true,
      polls: { "take-profit": 1 },
    };
    const result = evaluate({ takeProfitPct: 15, confirmPolls: 2, trailingStopPct: 10 }, [at()], {
      state: { positions: { [P]: old } },
    });
    expect(result.intents).toEqual([close("take-profit: pnl 16.6% >= 15%")]);
    expect(result.state).toEqual({
      positions: {
        [P]: {
          peakValueMicroUsd: "7000000",
          sizeMicroUsd: "6000000",
          trailingArmed: true,
          polls: { "take-profit": 2 },
        },
      },
    });
  });

  it("starts again from state it cannot read", () => {
    const result = evaluate({ trailingStopPct: 10 }, [at({ valueUsd: "1000000" })], {
      state: { positions: { [P]: { peakValueMicroUsd: "not a number" } } },
    });
    expect(result.intents).toEqual([]);
    expect(result.state).toEqual({
      positions: {
        [P]: { peakValueMicroUsd: "1000000", sizeMicroUsd: "6000000", trailingArmed: true, polls: {} },
      },
    });
  });
});

describe("exit-rules: confirmation and hysteresis", () => {
  const pnl = (...values: number[]) => values.map((pnlUsdPercent) => ({ pnlUsdPercent }));
  it.each<[string, Record<string, unknown>, Array<Partial<Position>>, string[]]>([
    [
      "one poll is enough by default",
      { takeProfitPct: 30 },
      pnl(29, 31, 29, 31),
      ["-", "take-profit: pnl 31% >= 30%", "-", "take-profit: pnl 31% >= 30%"],
    ],
    [
      "confirmPolls 2: a flicker never confirms",
      { takeProfitPct: 30, confirmPolls: 2 },
      pnl(31, 29, 31, 29, 31),
      ["-", "-", "-", "-", "-"],
    ],
    [
      "confirmPolls 2: two polls in a row do",
      { takeProfitPct: 30, confirmPolls: 2 },
      pnl(31, 32, 33),
      ["-", "take-profit: pnl 32% >= 30%", "take-profit: pnl 33% >= 30%"],
    ],
    [
      "hysteresis: a dip inside the band still counts towards confirmation",
      { takeProfitPct: 30, confirmPolls: 2, hysteresisPct: 2 },
      pnl(31, 29),
      ["-", "take-profit: pnl 29% held (>= 30%, hysteresis 2%)"],
    ],
    [
      "hysteresis: a dip below the band resets the count",
      { takeProfitPct: 30, confirmPolls: 2, hysteresisPct: 2 },
      pnl(31, 27.9, 31),
      ["-", "-", "-"],
    ],
    [
      "hysteresis: a fired rule keeps asking for the same close inside the band, stops outside it",
      { takeProfitPct: 30, hysteresisPct: 2 },
      pnl(31, 29.5, 31, 27, 29.5, 30),
      [
        "take-profit: pnl 31% >= 30%",
        "take-profit: pnl 29.5% held (>= 30%, hysteresis 2%)",
        "take-profit: pnl 31% >= 30%",
        "-",
        "-",
        "take-profit: pnl 30% >= 30%",
      ],
    ],
    [
      "hysteresis on the stop-loss",
      { stopLossPct: 20, hysteresisPct: 1 },
      pnl(-20, -19.5, -18.9),
      ["stop-loss: pnl -20% <= -20%", "stop-loss: pnl -19.5% held (<= -20%, hysteresis 1%)", "-"],
    ],
    [
      "hysteresis on the mark price is a percent of the threshold",
      { takeProfitPriceUsd: "0.8", hysteresisPct: 5 },
      [{ markPriceUsd: "800000" }, { markPriceUsd: "760000" }, { markPriceUsd: "759999" }],
      [
        "take-profit-price: mark $0.80 >= $0.80",
        "take-profit-price: mark $0.76 held (>= $0.80, hysteresis 5%)",
        "-",
      ],
    ],
    [
      "hysteresis on the trailing stop is in points of drawdown",
      { trailingStopPct: 10, hysteresisPct: 2 },
      [{ valueUsd: "10000000" }, { valueUsd: "9000000" }, { valueUsd: "9200000" }, { valueUsd: "9300000" }],
      [
        "-",
        "trailing-stop: value $9.00 is 10% below peak $10.00 >= 10%",
        "trailing-stop: value $9.20 is 8% below peak $10.00 held (>= 10%, hysteresis 2%)",
        "-",
      ],
    ],
    [
      "the time rule ignores confirmPolls",
      { closeBeforeSeconds: 99_800, confirmPolls: 3 },
      [{}],
      ["close-before: market closes in 99800s <= 99800s"],
    ],
  ])("%s", (_label, config, readings, expected) => {
    expect(polls(config, readings)).toEqual(expected);
  });

  it("a close already in flight gets no second intent while the rule holds", () => {
    const first = evaluate({ takeProfitPct: 30 }, [at({ pnlUsdPercent: 31 })]);
    expect(first.intents).toEqual([close("take-profit: pnl 31% >= 30%")]);
    const second = evaluate({ takeProfitPct: 30 }, [at({ pnlUsdPercent: 32 })], {
      state: first.state,
      inFlightIntents: [inFlight(`close-${P}`, "close", { positionPubkey: P })],
    });
    expect(second.intents).toEqual([]);
  });
});

describe("exit-rules: selector precedence", () => {
  // The fixture position's event (evt-1), as the snapshot carries it when a strategy needs it.
  const EVT_1: EventDetails = {
    category: "crypto",
    subcategory: "bitcoin",
    tags: ["Bitcoin", "majors"],
    provider: "polymarket",
  };
  const events = { "evt-1": EVT_1 };
  // Each override sets its own take-profit, so the reason tells which one won.
  const selectors = {
    marketId: { match: { marketId: "mkt-1" }, rules: { takeProfitPct: 11 } },
    eventId: { match: { eventId: "evt-1" }, rules: { takeProfitPct: 12 } },
    titleContains: { match: { titleContains: "bitcoin" }, rules: { takeProfitPct: 13 } },
    tags: { match: { tags: ["majors"] }, rules: { takeProfitPct: 14 } },
    category: { match: { category: "crypto" }, rules: { takeProfitPct: 15.5 } },
    provider: { match: { provider: "polymarket" }, rules: { takeProfitPct: 16 } },
    side: { match: { side: "yes" }, rules: { takeProfitPct: 16.5 } },
  } as const;
  type Key = keyof typeof selectors;
  /** Most specific first. */
  const ORDER = Object.keys(selectors) as Key[];
  const target = () =>
    at({ marketMetadata: marketMetadata({ title: "Bitcoin above 100k?" }), eventMetadata: eventMetadata() });
  const winnerOf = (overrides: unknown[], eventDetails: Snapshot["events"] = events) =>
    evaluate({ takeProfitPct: 15, overrides }, [target()], { events: eventDetails }).intents.map(
      (i) => i.reason,
    );

  const pairs = ORDER.flatMap((strong, i) => ORDER.slice(i + 1).map((weak) => [strong, weak] as const));
  it.each(
    pairs.flatMap(([strong, weak]) => [
      [strong, weak, "listed first"],
      [strong, weak, "listed last"],
    ]),
  )("%s beats %s (%s)", (strong, weak, order) => {
    const a = selectors[strong as Key];
    const b = selectors[weak as Key];
    const expected = `take-profit: pnl 16.6% >= ${a.rules.takeProfitPct}%`;
    expect(winnerOf(order === "listed first" ? [a, b] : [b, a])).toEqual([expected]);
  });

  it.each<[string, unknown[], string[]]>([
    [
      "no override matches: the global rules",
      [{ match: { eventId: "evt-2" }, rules: { takeProfitPct: 1 } }],
      ["15%"],
    ],
    [
      "a selector matches only when every key matches",
      [{ match: { marketId: "mkt-1", side: "no" }, rules: { takeProfitPct: 1 } }],
      ["15%"],
    ],
    [
      "more keys of the same rank win: { eventId, side } over { eventId }",
      [
        { match: { eventId: "evt-1" }, rules: { takeProfitPct: 12 } },
        { match: { eventId: "evt-1", side: "yes" }, rules: { takeProfitPct: 10 } },
      ],
      ["10%"],
    ],
    [
      "one higher key beats all lower ones: { marketId } over every other key at once",
      [
        {
          match: {
            eventId: "evt-1",
            titleContains: "bitcoin",
            tags: ["majors"],
            category: "crypto",
            provider: "polymarket",
            side: "yes",
          },
          rules: { takeProfitPct: 12 },
        },
        { match: { marketId: "mkt-1" }, rules: { takeProfitPct: 11 } },
      ],
      ["11%"],
    ],
    [
      "{ tags } over { category, provider, side }",
      [
        { match: { category: "crypto", provider: "polymarket", side: "yes" }, rules: { takeProfitPct: 9 } },
        { match: { tags: ["majors"] }, rules: { takeProfitPct: 8 } },
      ],
      ["8%"],
    ],
    [
      "{ category, side } over { category }",
      [
        { match: { category: "crypto" }, rules: { takeProfitPct: 9 } },
        { match: { category: "crypto", side: "yes" }, rules: { takeProfitPct: 8 } },
      ],
      ["8%"],
    ],
    [
      "a tie goes to the override listed first",
      [
        { match: { side: "yes" }, rules: { takeProfitPct: 9 } },
        { match: { side: "yes" }, rules: { takeProfitPct: 8 } },
      ],
      ["9%"],
    ],
    [
      "the title match reads the event title too, case-insensitively",
      [{ match: { titleContains: "EVENT" }, rules: { takeProfitPct: 7 } }],
      ["7%"],
    ],
  ])("%s", (_label, overrides, thresholds) => {
    expect(winnerOf(overrides)).toEqual(thresholds.map((t) => `take-profit: pnl 16.6% >= ${t}`));
  });

  it("only the winner's rules are merged over the global ones; null turns a rule off", () => {
    const config = {
      takeProfitPct: 15,
      stopLossPct: 10,
      overrides: [
        { match: { eventId: "evt-1" }, rules: { takeProfitPct: 1, stopLossPct: 50 } },
        { match: { marketId: "mkt-1" }, rules: { takeProfitPct: null } },
      ],
    };
    // The market override wins: take-profit off, the global stop-loss (10 %) stays; the event's 50 % is not used.
    expect(evaluate(config, [target()]).intents).toEqual([]);
    expect(evaluate(config, [at({ pnlUsdPercent: -12 })]).intents).toEqual([
      close("stop-loss: pnl -12% <= -10%"),
    ]);
  });

  it("specificity weights", () => {
    expect([
      specificity({ marketId: "m" }),
      specificity({
        eventId: "e",
        titleContains: "t",
        tags: ["a"],
        category: "crypto",
        provider: "kalshi",
        side: "no",
      }),
      specificity({ tags: ["a", "b", "c"] }),
      specificity({ category: "sports", provider: "polymarket", side: "no" }),
      specificity({ side: "yes" }),
    ]).toEqual([64, 63, 8, 7, 1]);
  });
});

describe("exit-rules: selectors on the event's category, tags and provider", () => {
  // Global take-profit 15 % fires on the fixture (pnl 16.6 %); an override that matches turns it off,
  // so each row asserts exactly whether the override applied.
  const closed = [close("take-profit: pnl 16.6% >= 15%")];
  const details = (extra: Partial<EventDetails> = {}): EventDetails => ({
    category: "sports",
    subcategory: "basketball",
    tags: ["NBA", "playoffs"],
    provider: "kalshi",
    ...extra,
  });
  const { provider: _provider, ...withoutProvider } = details();
  it.each<[string, Record<string, unknown>, Snapshot["events"], ReturnType<typeof close>[]]>([
    ["category matches", { category: "sports" }, { "evt-1": details() }, []],
    ["category differs", { category: "crypto" }, { "evt-1": details() }, closed],
    ["tags: one listed tag is enough", { tags: ["mlb", "nba"] }, { "evt-1": details() }, []],
    ["tags: compared case-insensitively", { tags: ["Playoffs"] }, { "evt-1": details() }, []],
    ["tags: none of them held", { tags: ["mlb", "nfl"] }, { "evt-1": details() }, closed],
    ["tags: the event has none", { tags: ["nba"] }, { "evt-1": details({ tags: [] }) }, closed],
    ["provider matches", { provider: "kalshi" }, { "evt-1": details() }, []],
    ["provider differs", { provider: "polymarket" }, { "evt-1": details() }, closed],
    [
      "provider unknown: no provider selector matches",
      { provider: "kalshi" },
      { "evt-1": withoutProvider },
      closed,
    ],
    [
      "provider unknown: a category selector still matches",
      { category: "sports" },
      { "evt-1": withoutProvider },
      [],
    ],
    [
      "every key must match: category and provider",
      { category: "sports", provider: "polymarket" },
      { "evt-1": details() },
      closed,
    ],
    ["every key must match: tags and side", { tags: ["nba"], side: "yes" }, { "evt-1": details() }, []],
    [
      "every key must match: category and the wrong side",
      { category: "sports", side: "no" },
      { "evt-1": details() },
      closed,
    ],
    // Which override applies is unknown without the event: nothing fires (the global take-profit
    // would close a position whose override turned it off).
    [
      "the event's details are missing (fetch failed): category",
      { category: "sports" },
      { "evt-2": details() },
      [],
    ],
    ["the event's details are missing: tags", { tags: ["nba"] }, {}, []],
    ["the snapshot carries no events at all", { category: "sports" }, undefined, []],
    ["the event's details are missing, category differs", { category: "crypto" }, {}, []],
  ])("%s", (_label, match, events, expected) => {
    const config = { takeProfitPct: 15, overrides: [{ match, rules: { takeProfitPct: null } }] };
    const { intents } = evaluate(config, [at()], events ? { events } : {});
    expect(intents).toEqual(expected);
  });

  it("a position whose event is missing is left alone and keeps its state until the event is read", () => {
    const config = {
      takeProfitPct: 50,
      overrides: [
        { match: { category: "sports" }, rules: { takeProfitPct: null } },
        { match: { side: "yes" }, rules: { takeProfitPct: 15 } },
      ],
    };
    const known = evaluate(config, [at()], { events: { "evt-1": details({ category: "politics" }) } });
    expect(known.intents).toEqual(closed);
    const missing = evaluate(config, [at()], { state: known.state, events: {} });
    expect(missing.intents).toEqual([]);
    expect(missing.state).toEqual(known.state);
  });

  it("each position reads its own event's details", () => {
    const other = fakePubkey("Other");
    const config = {
      takeProfitPct: 15,
      overrides: [{ match: { category: "sports" }, rules: { takeProfitPct: null } }],
    };
    const { intents } = evaluate(
      config,
      [
        at(),
        position({ pubkey: other, eventId: "evt-2", eventMetadata: eventMetadata({ eventId: "evt-2" }) }),
      ],
      { events: { "evt-1": details({ category: "politics" }), "evt-2": details() } },
    );
    expect(intents).toEqual(closed);
  });

  it.each<[string, unknown[], { events: boolean; eventProviders: boolean }]>([
    ["no overrides", [], { events: false, eventProviders: false }],
    [
      "position selectors only",
      [{ match: { marketId: "m", eventId: "e", titleContains: "t", side: "yes" }, rules: {} }],
      { events: false, eventProviders: false },
    ],
    [
      "a category selector",
      [{ match: { category: "tech" }, rules: {} }],
      { events: true, eventProviders: false },
    ],
    ["a tags selector", [{ match: { tags: ["ai"] }, rules: {} }], { events: true, eventProviders: false }],
    [
      "a provider selector",
      [
        { match: { side: "no" }, rules: {} },
        { match: { provider: "polymarket" }, rules: {} },
      ],
      { events: true, eventProviders: true },
    ],
  ])("needs: %s", (_label, overrides, expected) => {
    expect(exitRules.needs?.(exitRules.configSchema.parse({ takeProfitPct: 5, overrides }))).toEqual(
      expected,
    );
  });
});

describe("exit-rules: config refusals", () => {
  const between = (a: number, b: number) => `expected a number between ${a} and ${b}`;
  const PRICE = "expected a price in dollars above 0 and at most 1, with at most 6 decimals";
  it.each<[string, Record<string, unknown>, string]>([
    ["take-profit of 0", { takeProfitPct: 0 }, `takeProfitPct: ${between(0, 10_000)}`],
    ["take-profit as a string", { takeProfitPct: "30" }, `takeProfitPct: ${between(0, 10_000)}`],
    ["stop-loss over 100", { stopLossPct: 150 }, `stopLossPct: ${between(0, 100)}`],
    ["trailing of 100", { trailingStopPct: 100.5 }, `trailingStopPct: ${between(0, 100)}`],
    ["price over $1", { takeProfitPriceUsd: "1.5" }, `takeProfitPriceUsd: ${PRICE}`],
    ["price with 7 decimals", { stopLossPriceUsd: "0.1234567" }, `stopLossPriceUsd: ${PRICE}`],
    ["price of 0", { stopLossPriceUsd: 0 }, `stopLossPriceUsd: ${PRICE}`],
    [
      "a bad price beside a good one (the cross-field check stays quiet)",
      { takeProfitPriceUsd: "0.7", stopLossPriceUsd: "0.1234567" },
      `stopLossPriceUsd: ${PRICE}`,
    ],
    ["unknown basis", { basis: "gross", takeProfitPct: 10 }, 'basis: expected "before-fees" or "after-fees"'],
    [
      "no rule at all",
      {},
      "(root): configure at least one exit rule: takeProfitPct, stopLossPct, takeProfitPriceUsd, stopLossPriceUsd, trailingStopPct, closeBeforeSeconds",
    ],
    [
      "activation without a trailing stop",
      { takeProfitPct: 5, trailingActivationPct: 10 },
      "trailingActivationPct: needs trailingStopPct",
    ],
    [
      "stop-loss price above take-profit price",
      { takeProfitPriceUsd: "0.7", stopLossPriceUsd: "0.8" },
      "stopLossPriceUsd: must be below takeProfitPriceUsd",
    ],
    [
      "confirmPolls of 0",
      { takeProfitPct: 5, confirmPolls: 0 },
      "confirmPolls: expected a whole number between 1 and 100",
    ],
    ["hysteresis over 100", { takeProfitPct: 5, hysteresisPct: 101 }, `hysteresisPct: ${between(0, 100)}`],
    [
      "fractional seconds",
      { closeBeforeSeconds: 1.5 },
      "closeBeforeSeconds: expected a whole number of seconds > 0",
    ],
    ["negative minimum", { takeProfitPct: 5, minPositionUsd: -1 }, "minPositionUsd: expected dollars >= 0"],
    ["slippage over 10000", { takeProfitPct: 5, slippageBps: 10_001 }, `slippageBps: ${between(0, 10_000)}`],
    ["unknown key", { takeProfitPct: 5, takeProfit: 5 }, "takeProfit: unknown key"],
    [
      "empty selector",
      { takeProfitPct: 5, overrides: [{ match: {}, rules: {} }] },
      "overrides[0].match: expected at least one of marketId, eventId, titleContains, tags, category, provider, side",
    ],
    [
      "unknown side",
      { takeProfitPct: 5, overrides: [{ match: { side: "maybe" }, rules: {} }] },
      'overrides[0].match.side: expected "yes" or "no"',
    ],
    [
      "a selector key that does not exist",
      { takeProfitPct: 5, overrides: [{ match: { series: "crypto" }, rules: {} }] },
      "overrides[0].match.series: unknown key",
    ],
    [
      "an empty category",
      { takeProfitPct: 5, overrides: [{ match: { category: " " }, rules: {} }] },
      "overrides[0].match.category: expected a category name such as crypto or sports",
    ],
    [
      'the "all" category (a filter, not a category)',
      { takeProfitPct: 5, overrides: [{ match: { category: "all" }, rules: {} }] },
      "overrides[0].match.category: all is a filter of the events list, not a category",
    ],
    [
      "tags as one string",
      { takeProfitPct: 5, overrides: [{ match: { tags: "nba" }, rules: {} }] },
      "overrides[0].match.tags: expected a list of tags",
    ],
    [
      "no tags",
      { takeProfitPct: 5, overrides: [{ match: { tags: [] }, rules: {} }] },
      "overrides[0].match.tags: expected a list of tags",
    ],
    [
      "an empty tag",
      { takeProfitPct: 5, overrides: [{ match: { tags: ["nba", ""] }, rules: {} }] },
      "overrides[0].match.tags[1]: expected a tag",
    ],
    [
      "an empty provider",
      { takeProfitPct: 5, overrides: [{ match: { provider: "" }, rules: {} }] },
      "overrides[0].match.provider: expected a provider name such as polymarket, kalshi or bisonfi",
    ],
    [
      "bad rule in an override",
      { takeProfitPct: 5, overrides: [{ match: { side: "no" }, rules: { stopLossPct: -1 } }] },
      `overrides[0].rules.stopLossPct: ${between(0, 100)}`,
    ],
    [
      "an override's take-profit price at or under the global stop-loss price",
      {
        stopLossPriceUsd: "0.4",
        overrides: [{ match: { side: "no" }, rules: { takeProfitPriceUsd: "0.4" } }],
      },
      "overrides[0].rules.takeProfitPriceUsd: must be above stopLossPriceUsd",
    ],
    [
      "a global mistake is reported once, not under each override",
      {
        takeProfitPriceUsd: "0.7",
        stopLossPriceUsd: "0.8",
        overrides: [{ match: { side: "no" }, rules: { confirmPolls: 2 } }],
      },
      "stopLossPriceUsd: must be below takeProfitPriceUsd",
    ],
    [
      "activation without trailing once merged",
      { takeProfitPct: 5, overrides: [{ match: { side: "no" }, rules: { trailingActivationPct: 5 } }] },
      "overrides[0].rules.trailingActivationPct: needs trailingStopPct",
    ],
  ])("%s", (_label, config, expected) => {
    const parsed = exitRules.configSchema.safeParse(config);
    expect(parsed.success).toBe(false);
    expect(parsed.error && formatIssues(parsed.error)).toEqual([expected]);
  });

  it("names the strategy entry as the config check does", () => {
    const parsed = exitRules.configSchema.safeParse({ takeProfitPct: -3 });
    expect(parsed.error && formatIssues(parsed.error, ["strategies", 1])).toEqual([
      `strategies[1].takeProfitPct: ${between(0, 10_000)}`,
    ]);
  });

  it("an override that turns the trailing stop off needs no activation of its own", () => {
    const parsed = exitRules.configSchema.safeParse({
      trailingStopPct: 10,
      trailingActivationPct: 15,
      overrides: [{ match: { side: "no" }, rules: { trailingStopPct: null } }],
    });
    expect(parsed.success).toBe(true);
  });

  it("a rule set only in an override is enough", () => {
    const parsed = exitRules.configSchema.safeParse({
      overrides: [{ match: { side: "no" }, rules: { stopLossPct: 5 } }],
    });
    expect(parsed.success).toBe(true);
  });

  it("defaults", () => {
    expect(exitRules.configSchema.parse({ takeProfitPct: 30 })).toEqual({
      priceBasis: "realizable",
      estimatedSellFeeBps: 150,
      basis: "before-fees",
      takeProfitPct: 30,
      minPositionUsd: 0,
      confirmPolls: 1,
      hysteresisPct: 0,
      overrides: [],
    });
  });
});

describe("nearestExitRule (the status page's view of a position)", () => {
  const nearest = (config: Record<string, unknown>, p: Position = at(), state: StrategyState = {}) =>
    nearestExitRule(exitRules.configSchema.parse({ priceBasis: "mark", ...config }), p, state, NOW_SECONDS);

  // The fixture: pnl 16.6 %, mark $0.70, closing 99,800 s after NOW_SECONDS.
  it.each([
    [{ takeProfitPct: 20, stopLossPct: 50 }, "take-profit", false, "take-profit: pnl 16.6% (>= 20%)"],
    [{ takeProfitPct: 90, stopLossPct: 10 }, "stop-loss", false, "stop-loss: pnl 16.6% (<= -10%)"],
    [{ takeProfitPct: 15, stopLossPct: 10 }, "take-profit", true, "take-profit: pnl 16.6% (>= 15%)"],
    [
      { takeProfitPriceUsd: "0.75", takeProfitPct: 50 },
      "take-profit-price",
      false,
      "take-profit-price: mark $0.70 (>= $0.75)",
    ],
    [
      { closeBeforeSeconds: 100_000, takeProfitPct: 500 },
      "close-before",
      true,
      "close-before: market closes in 99800s (<= 100000s)",
    ],
    [
      { closeBeforeSeconds: 60, takeProfitPct: 500 },
      "take-profit",
      false,
      "take-profit: pnl 16.6% (>= 500%)",
    ],
  ])("%j: %s", (config, rule, isEntered, detail) => {
    expect(nearest(config)).toEqual({
      rule,
      isEntered,
      detail,
      gap: expect.any(Number),
      short: expect.any(String),
    });
  });

  it("names no rule for a position that is not open or has no figure a rule reads", () => {
    expect(nearest({ takeProfitPct: 20 }, at({ claimable: true }))).toBeUndefined();
    expect(nearest({ takeProfitPct: 20 }, at({ pnlUsdPercent: null }))).toBeUndefined();
  });
});
