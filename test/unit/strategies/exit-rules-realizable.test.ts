import { describe, expect, it } from "vitest";
import type { Position } from "../../../src/core/schemas/prediction.js";
import type { StrategyState } from "../../../src/core/strategy.js";
import { closeAtMultiple } from "../../../strategies/examples/close-at-multiple.js";
import { exitRules, exitThresholds } from "../../../strategies/exit-rules/index.js";
import { position, snapshot } from "../../helpers/fixtures.js";

// Exits on what can be realized: a position bought at $0.65 (10 contracts, $6.60 with fees) whose
// mark is $0.80 while the best bid is $0.60. The mark says +23 %; a sale would bring in
// 10 x 0.60 less 1.5 % = $5.91, 10.45 % below what it cost.
const NOW_SECONDS = 1_700_000_200;
const now = new Date(NOW_SECONDS * 1000);

function thinBook(overrides: Partial<Position> = {}): Position {
  return position({
    avgPriceUsd: "650000",
    sizeUsd: "6500000",
    totalCostUsd: "6600000",
    markPriceUsd: "800000",
    valueUsd: "8000000",
    pnlUsd: "1500000",
    pnlUsdPercent: 23,
    pnlUsdAfterFeesPercent: 21.2,
    sellPriceUsd: "600000",
    ...overrides,
  });
}

function run(config: Record<string, unknown>, p: Position, state: StrategyState = {}) {
  return exitRules.evaluate({
    snapshot: snapshot({ positions: [p] }),
    state,
    config: exitRules.configSchema.parse(config),
    now,
  });
}
const reasons = (config: Record<string, unknown>, p: Position) =>
  run(config, p).intents.map((intent) => intent.reason);

describe("exit-rules on the realizable basis (the default)", () => {
  it.each<[string, Record<string, unknown>, Partial<Position>, string[]]>([
    [
      "take-profit at a mark of 0.80 whose bid is 0.60, below the entry: no exit",
      { takeProfitPct: 20 },
      {},
      [],
    ],
    ["take-profit price reached by the mark only: no exit", { takeProfitPriceUsd: "0.75" }, {}, []],
    [
      "take-profit whose bid meets it: exit, on the realizable pnl",
      { takeProfitPct: 20 },
      { sellPriceUsd: "820000" },
      ["take-profit: realizable pnl 22.38% >= 20%"],
    ],
    [
      "take-profit price on the bid net of fees",
      { takeProfitPriceUsd: "0.75" },
      { sellPriceUsd: "770000" },
      ["take-profit-price: bid net of fees $0.75845 >= $0.75"],
    ],
    [
      "stop-loss the bid reaches while the mark is in profit",
      { stopLossPct: 10 },
      {},
      ["stop-loss: realizable pnl -10.45% <= -10%"],
    ],
    [
      "stop-loss price on the bid",
      { stopLossPriceUsd: "0.6" },
      {},
      ["stop-loss-price: bid net of fees $0.591 <= $0.60"],
    ],
    [
      "the fee estimate counts: at 0 bps the same bid is not a loss of 10 %",
      { stopLossPct: 10, estimatedSellFeeBps: 0 },
      {},
      [],
    ],
    [
      "the exact count (contractsMicro), not the floored one",
      { takeProfitPct: 20 },
      { sellPriceUsd: "820000", contracts: "9", contractsMicro: "9990000" },
      ["take-profit: realizable pnl 22.26% >= 20%"],
    ],
  ])("%s", (_label, config, overrides, expected) => {
    expect(reasons(config, thinBook(overrides))).toEqual(expected);
  });

  it.each<[string, Record<string, unknown>]>([
    ["take-profit", { takeProfitPct: 20 }],
    ["stop-loss", { stopLossPct: 5 }],
    ["take-profit price", { takeProfitPriceUsd: "0.5" }],
    ["close-before", { closeBeforeSeconds: 100_000 }],
  ])("no bid (sellPriceUsd null): no exit on %s, and the reason is kept", (_label, config) => {
    const result = run(config, thinBook({ sellPriceUsd: null, pnlUsdPercent: 23 }));
    expect(result.intents).toEqual([]);
    if (config.closeBeforeSeconds !== undefined) {
      const positions = (result.state as { positions: Record<string, { withheld?: string }> }).positions;
      expect(Object.values(positions)[0]?.withheld).toMatch(/no bid \(sellPriceUsd null\): no exit/);
    }
  });

  it("the status page says why a due close was not asked for", () => {
    const p = thinBook({ sellPriceUsd: null });
    const config = exitRules.configSchema.parse({ closeBeforeSeconds: 100_000 });
    const { state } = run({ closeBeforeSeconds: 100_000 }, p);
    const view = exitRules.statusView?.({ config, state, positions: [p], nowSeconds: NOW_SECONDS });
    expect(view?.positions?.[p.pubkey]).toEqual({
      nearestRule: "close-before reached",
      nearestDetail: expect.stringMatching(/^close-before: .*no bid/),
      isAlert: true,
    });
  });
});

describe("the status page's figures of a position", () => {
  it.each<[string, Record<string, unknown>, Partial<Position>, string | undefined]>([
    ["10 contracts at a bid of $0.60, less 1.5 %", { takeProfitPct: 20 }, {}, "5910000"],
    ["no bid: nothing to realize", { takeProfitPct: 20 }, { sellPriceUsd: null }, undefined],
    // What a sale brings in, whatever basis the rules decide on.
    ["on the mark basis too", { takeProfitPct: 20, priceBasis: "mark" }, {}, "5910000"],
  ])("realizable: %s", (_label, raw, overrides, micro) => {
    const p = thinBook(overrides);
    const config = exitRules.configSchema.parse(raw);
    const view = exitRules.statusView?.({ config, state: {}, positions: [p], nowSeconds: NOW_SECONDS });
    expect(view?.positions?.[p.pubkey]?.realizableMicroUsd).toBe(micro);
  });

  // Realizable $5.91 against a cost of $6.60 (-10.45 %): the bid must move by (1 + limit) / (1 + pnl) - 1.
  it.each<[string, Record<string, unknown>, Partial<Position>, string]>([
    ["take-profit 20 %: the bid must rise by 34 %", { takeProfitPct: 20 }, {}, "take-profit in +34.0 %"],
    ["stop-loss 20 %: the bid may fall 10.7 % more", { stopLossPct: 20 }, {}, "stop-loss in -10.7 %"],
    [
      "take-profit price $0.75 on the bid net of fees ($0.591)",
      { takeProfitPriceUsd: "0.75" },
      {},
      "take-profit-price in +26.9 %",
    ],
    ["a rule already entered", { stopLossPct: 5 }, {}, "stop-loss reached"],
    [
      "the time rule, in time left",
      { closeBeforeSeconds: 3_600 },
      { marketMetadata: { marketId: "mkt-1", status: "open", closeTime: NOW_SECONDS + 3_600 + 7_500 } },
      "close-before in 2h 5m",
    ],
  ])("nearest rule in one unit: %s", (_label, raw, overrides, text) => {
    const p = thinBook(overrides);
    const config = exitRules.configSchema.parse(raw);
    const view = exitRules.statusView?.({ config, state: {}, positions: [p], nowSeconds: NOW_SECONDS });
    expect(view?.positions?.[p.pubkey]?.nearestRule).toBe(text);
  });

  it("says what Keeper does when the rule fires, and when a time rule is due", () => {
    const closeTime = NOW_SECONDS + 10_000;
    const p = thinBook({ marketMetadata: { marketId: "mkt-1", title: "Rain", status: "open", closeTime } });
    const config = exitRules.configSchema.parse({ closeBeforeSeconds: 3_600 });
    const view = exitRules.statusView?.({ config, state: {}, positions: [p], nowSeconds: NOW_SECONDS });
    expect(view?.next).toEqual([
      {
        text: 'close-before in 1h 46m: sells 10 YES of "Rain" at the bid (about $5.91 now)',
        at: closeTime - 3_600,
      },
    ]);
  });
});

describe("exit-rules on the mark basis (priceBasis: mark, the old behaviour)", () => {
  it.each<[string, Record<string, unknown>, Partial<Position>, string[]]>([
    ["take-profit at a mark of 0.80 fires", { takeProfitPct: 20 }, {}, ["take-profit: pnl 23% >= 20%"]],
    [
      "take-profit price on the mark fires",
      { takeProfitPriceUsd: "0.75" },
      {},
      ["take-profit-price: mark $0.80 >= $0.75"],
    ],
    [
      "no bid does not hold it back",
      { takeProfitPct: 20 },
      { sellPriceUsd: null },
      ["take-profit: pnl 23% >= 20%"],
    ],
    ["the stop-loss the bid reaches does not fire", { stopLossPct: 10 }, {}, []],
  ])("%s", (_label, config, overrides, expected) => {
    expect(reasons({ priceBasis: "mark", ...config }, thinBook(overrides))).toEqual(expected);
  });

  it("an override may set the basis of the positions it matches", () => {
    const config = {
      takeProfitPct: 20,
      overrides: [{ match: { marketId: "mkt-1" }, rules: { priceBasis: "mark" } }],
    };
    expect(reasons(config, thinBook())).toEqual(["take-profit: pnl 23% >= 20%"]);
  });

  it("refuses a basis it does not know, naming the field", () => {
    const parsed = exitRules.configSchema.safeParse({ takeProfitPct: 20, priceBasis: "bid" });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]).toMatchObject({
      path: ["priceBasis"],
      message: 'expected "realizable" or "mark"',
    });
  });
});

describe("read before selling: closeStillDue", () => {
  const check = (config: Record<string, unknown>, p: Position, exitRule: string, state: StrategyState = {}) =>
    exitRules.closeStillDue?.({
      config: exitRules.configSchema.parse(config),
      position: p,
      state,
      exitRule,
      nowSeconds: NOW_SECONDS,
    });

  it.each<[string, Record<string, unknown>, Partial<Position>, string, boolean, RegExp]>([
    [
      "the bid still meets the take-profit",
      { takeProfitPct: 20 },
      { sellPriceUsd: "820000" },
      "take-profit",
      true,
      /^take-profit: realizable pnl/,
    ],
    [
      "the bid fell back below it",
      { takeProfitPct: 20 },
      {},
      "take-profit",
      false,
      /^no longer met: take-profit/,
    ],
    [
      "inside the hysteresis band it still holds",
      { takeProfitPct: 23, hysteresisPct: 1 },
      { sellPriceUsd: "820000" },
      "take-profit",
      true,
      /take-profit/,
    ],
    ["no one bids any more", { takeProfitPct: 20 }, { sellPriceUsd: null }, "take-profit", false, /no bid/],
    [
      "a rule no longer configured",
      { stopLossPct: 10 },
      { sellPriceUsd: "820000" },
      "take-profit",
      false,
      /rule is off/,
    ],
    [
      "a close that names no rule of exit-rules (a close-all's)",
      { takeProfitPct: 20 },
      {},
      "close-all",
      true,
      /names no rule/,
    ],
  ])("%s", (_label, config, overrides, rule, isDue, reason) => {
    expect(check(config, thinBook(overrides), rule)).toEqual({
      isDue,
      reason: expect.stringMatching(reason),
    });
  });
});

describe("the watcher's thresholds on the realizable basis", () => {
  it("raises each price to the mark that nets it after the sell fee", () => {
    const config = exitRules.configSchema.parse({ takeProfitPriceUsd: "0.788", stopLossPriceUsd: "0.394" });
    expect(exitThresholds(config, thinBook())).toEqual({ above: "800000", below: "400000" });
  });
});

describe("example close-at-multiple on the realizable basis", () => {
  const closes = (config: Record<string, unknown>, p: Position) =>
    closeAtMultiple.evaluate({
      snapshot: snapshot({ positions: [p] }),
      state: {},
      config: closeAtMultiple.configSchema.parse(config),
      now,
    }).intents.length;
  it.each<[string, Record<string, unknown>, Partial<Position>, number]>([
    ["worth 1.2 x its cost on the mark, not at the bid", { multiple: 1.2 }, {}, 0],
    ["the same on the mark basis", { multiple: 1.2, priceBasis: "mark" }, {}, 1],
    ["a bid that reaches it", { multiple: 1.2 }, { sellPriceUsd: "810000" }, 1],
    ["no bid", { multiple: 1.2 }, { sellPriceUsd: null }, 0],
  ])("%s", (_label, config, overrides, expected) => {
    expect(closes(config, thinBook(overrides))).toBe(expected);
  });
});
