import { describe, expect, it } from "vitest";
import type { Market } from "../../../../src/core/schemas/prediction.js";
import {
  hotMarkets,
  isNearExit,
  isPastCloseUnresolved,
  type MarketSeen,
} from "../../../../src/keeper/watch/market-watcher.js";
import { WALLET } from "../../../helpers/fixtures.js";
import { testHolding } from "../../../helpers/holdings.js";

const CLOSE = 1_700_000_000;
const HOT_SECONDS = 300;
const seen = (fields: Partial<MarketSeen> = {}): MarketSeen => ({
  eventId: "evt-1",
  status: "open",
  result: null,
  closeTime: CLOSE,
  ...fields,
});

describe("hot cadence: a market past its close time and not resolved", () => {
  it.each([
    ["a second before its close", seen(), CLOSE - 1, false],
    ["at its close", seen(), CLOSE, true],
    ["closed by the service, unresolved, a minute on", seen({ status: "closed" }), CLOSE + 60, true],
    ["just inside hotSeconds", seen({ status: "closed" }), CLOSE + HOT_SECONDS - 1, true],
    ["past hotSeconds (waits long for its result)", seen({ status: "closed" }), CLOSE + HOT_SECONDS, false],
    ["resolved", seen({ status: "closed", result: "yes" }), CLOSE + 1, false],
    ["cancelled", seen({ status: "cancelled" }), CLOSE + 1, false],
  ])("%s", (_, market, nowSeconds, hot) => {
    expect(isPastCloseUnresolved(market, nowSeconds * 1000, HOT_SECONDS)).toBe(hot);
  });
});

describe("hot cadence: a market near a holder's exit threshold", () => {
  const market = (yesMid: number, fields: Partial<Market> = {}): Market => ({
    marketId: "mkt-1",
    status: "open",
    result: null,
    openTime: CLOSE - 86_400,
    closeTime: CLOSE,
    resolveAt: null,
    pricing: {
      buyYesPriceUsd: yesMid + 10_000,
      sellYesPriceUsd: yesMid - 10_000,
      buyNoPriceUsd: 1_000_000 - yesMid + 10_000,
      sellNoPriceUsd: 1_000_000 - yesMid - 10_000,
    },
    ...fields,
  });
  const holder = (exit: { above?: string; below?: string }) =>
    testHolding({ wallet: WALLET, marketId: "mkt-1", eventId: "evt-1", position: "pos-1", exit });

  it.each([
    ["far below a take-profit of 0.90", 700_000, { above: "900000" }, false],
    ["within 5 % of the take-profit", 860_000, { above: "900000" }, true],
    ["past the take-profit", 920_000, { above: "900000" }, true],
    ["within 5 % of a stop-loss of 0.40", 415_000, { below: "400000" }, true],
    ["far above the stop-loss", 600_000, { below: "400000" }, false],
  ])("%s", (_, mid, exit, near) => {
    expect(isNearExit(market(mid), [holder(exit)], 5)).toBe(near);
  });

  it("a holding without thresholds, or a market no longer open, is never near", () => {
    expect(
      isNearExit(
        market(890_000),
        [testHolding({ wallet: WALLET, marketId: "mkt-1", eventId: "e", position: "p", exit: {} })],
        5,
      ),
    ).toBe(false);
    expect(isNearExit(market(890_000, { status: "closed" }), [holder({ above: "900000" })], 5)).toBe(false);
  });
});

describe("hot cadence: which markets it reads", () => {
  it("those past close first (the latest close first), then those near an exit, each once", () => {
    const markets = new Map<string, MarketSeen>([
      ["m-old", seen({ eventId: "e-old", closeTime: CLOSE - 100 })],
      ["m-new", seen({ eventId: "e-new", closeTime: CLOSE - 10 })],
      ["m-new-2", seen({ eventId: "e-new", closeTime: CLOSE - 20 })],
      ["m-open", seen({ eventId: "e-open", closeTime: CLOSE + 3_600 })],
      ["m-near", seen({ eventId: "e-near", closeTime: CLOSE + 3_600 })],
      ["m-resolved", seen({ eventId: "e-resolved", result: "no", closeTime: CLOSE - 5 })],
    ]);
    expect(hotMarkets(markets, new Set(["m-near", "m-new", "m-gone"]), CLOSE * 1000, HOT_SECONDS)).toEqual([
      "m-new",
      "m-new-2",
      "m-old",
      "m-near",
    ]);
  });

  it("at rest (nothing past close, nothing near) nothing", () => {
    const markets = new Map([["m", seen({ closeTime: CLOSE + 60 })]]);
    expect(hotMarkets(markets, new Set(), CLOSE * 1000, HOT_SECONDS)).toEqual([]);
  });
});
