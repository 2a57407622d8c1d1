import { describe, expect, it } from "vitest";
import type { ConfiguredStrategy } from "../../../../src/config/load-config.js";
import type { Market } from "../../../../src/core/schemas/prediction.js";
import type { Strategy } from "../../../../src/core/strategy.js";
import { type Holding, holdingsOf, isHeld } from "../../../../src/keeper/state/holdings.js";
import { decideTriggers, sideMark } from "../../../../src/keeper/watch/market-watcher.js";
import { autoClaim } from "../../../../strategies/auto-claim.js";
import { closeAtMultiple } from "../../../../strategies/examples/close-at-multiple.js";
import { type ExitRulesConfig, exitRules, exitThresholds } from "../../../../strategies/exit-rules/index.js";
import { marketMetadata, OTHER_WALLET, position, WALLET } from "../../../helpers/fixtures.js";

// The thresholds on the mark basis: the mark is what the watcher sees (the realizable basis raises
// them by the sell fee: test/unit/strategies/exit-rules-realizable.test.ts).
const markBasis = (config: unknown) => ({ priceBasis: "mark", ...(config as object) });
const rules = (config: unknown) => exitRules.configSchema.parse(markBasis(config)) as ExitRulesConfig;
/** A configured entry of a strategy, its config parsed by its own schema. */
function configured<C>(strategy: Strategy<C>, config: unknown): ConfiguredStrategy {
  return { name: strategy.name, strategy: strategy as Strategy, config: strategy.configSchema.parse(config) };
}

function market(overrides: Partial<Market> = {}): Market {
  return {
    marketId: "mkt-1",
    status: "open",
    result: null,
    openTime: 1_699_000_000,
    closeTime: 1_700_100_000,
    resolveAt: null,
    pricing: {
      buyYesPriceUsd: 710_000,
      sellYesPriceUsd: 690_000,
      buyNoPriceUsd: 310_000,
      sellNoPriceUsd: 290_000,
    },
    ...overrides,
  };
}

function holding(overrides: Partial<Holding> = {}): Holding {
  return {
    wallet: WALLET,
    position: "pos-1",
    marketId: "mkt-1",
    eventId: "evt-1",
    side: "yes",
    sizeUsd: "6000000",
    costUsd: "6100000",
    claimable: false,
    resolvedSeen: false,
    markUsd: "650000",
    sweptAt: 1_700_000_000,
    ...overrides,
  };
}

describe("exit thresholds as mark prices", () => {
  it("turns price and pnl rules into the nearest price on each side", () => {
    // avg 0.60: take-profit 50 % enters at 0.90, stop-loss 20 % at 0.48.
    const p = position({ avgPriceUsd: "600000" });
    expect(exitThresholds(rules({ takeProfitPct: 50, stopLossPct: 20 }), p)).toEqual({
      above: "900000",
      below: "480000",
    });
    // A price rule nearer than the pnl rule wins on its side.
    expect(
      exitThresholds(rules({ takeProfitPct: 50, takeProfitPriceUsd: "0.8", stopLossPriceUsd: "0.5" }), p),
    ).toEqual({ above: "800000", below: "500000" });
    expect(exitThresholds(rules({ trailingStopPct: 10 }), p)).toEqual({ trailingStopPct: 10 });
  });

  it("follows overrides, and has none for a rule-less or closed position", () => {
    const p = position({ marketId: "mkt-quiet" });
    const config = rules({
      takeProfitPct: 50,
      overrides: [{ match: { marketId: "mkt-quiet" }, rules: { takeProfitPct: null } }],
    });
    expect(exitThresholds(config, p)).toBeUndefined();
    // The time rule is a moment, not a price: when the market's close less its seconds comes.
    expect(exitThresholds(rules({ closeBeforeSeconds: 60 }), position())).toEqual({
      atSeconds: 1_700_100_000 - 60,
    });
    // A close time with a fraction gives whole seconds (the hook's answer must be an integer); one
    // that is not a usable time gives no moment, and the price rules stay.
    const at = (closeTime: number) =>
      exitThresholds(
        rules({ closeBeforeSeconds: 60, takeProfitPct: 50 }),
        position({ avgPriceUsd: "600000", marketMetadata: marketMetadata({ closeTime }) }),
      );
    expect(at(1_700_100_000.5)).toEqual({ above: "900000", atSeconds: 1_700_099_940 });
    expect(at(30)).toEqual({ above: "900000" });
    expect(at(Number.POSITIVE_INFINITY)).toEqual({ above: "900000" });
    // Positions the strategy would not close whatever the price: an order on it, or worth too little.
    expect(exitThresholds(rules({ takeProfitPct: 50 }), position({ openOrders: 1 }))).toBeUndefined();
    expect(exitThresholds(rules({ takeProfitPct: 50, minPositionUsd: 8 }), position())).toBeUndefined();
    expect(exitThresholds(rules({ takeProfitPct: 50, minPositionUsd: 6 }), position())).toEqual({
      above: "900000",
    });
    const closed = position({ marketMetadata: marketMetadata({ status: "closed", result: "yes" }) });
    expect(exitThresholds(rules({ takeProfitPct: 50 }), closed)).toBeUndefined();
  });
});

describe("holdings of a wallet", () => {
  it("keeps open and claimable positions and winners awaiting settlement; drops claimed, sold and lost ones", () => {
    const open = position();
    const claimable = position({
      claimable: true,
      marketMetadata: marketMetadata({ status: "closed", result: "yes" }),
    });
    const unsettledWinner = position({
      isYes: false,
      marketMetadata: marketMetadata({ status: "closed", result: "no" }),
    });
    const loser = position({ marketMetadata: marketMetadata({ status: "closed", result: "no" }) });
    const claimed = position({ claimed: true, claimable: false });
    const sold = position({ sizeUsd: "0", contracts: "0" });
    // Closed and waiting for its result: the watcher must see the result to claim it from the index.
    const awaitingResult = position({ marketMetadata: marketMetadata({ status: "closed", result: null }) });
    expect([open, claimable, unsettledWinner, loser, claimed, sold, awaitingResult].map(isHeld)).toEqual([
      true,
      true,
      true,
      false,
      false,
      false,
      true,
    ]);
    // Exact counts decide where the service sends them: 0.4 contract (floored to 0) of a position
    // whose size reads 0 is still held; a position with no contracts left is not, whatever its size.
    const underOne = position({ contracts: "0", contractsMicro: "400000", sizeUsd: "0" });
    const emptied = position({ contracts: "0", contractsMicro: "0", sizeUsd: "240000" });
    expect([underOne, emptied].map(isHeld)).toEqual([true, false]);
    const held = holdingsOf(WALLET, [open, loser, claimable], {
      strategies: [
        configured(exitRules, markBasis({ takeProfitPct: 30, stopLossPct: 10, closeBeforeSeconds: 600 })),
        configured(closeAtMultiple, { multiple: 1.2 }),
        configured(autoClaim, {}),
      ],
      nowSeconds: 1_700_000_500,
    });
    expect(held.map((h) => h.position)).toEqual([open.pubkey, claimable.pubkey]);
    // exit-rules acts at 0.78 and 0.54 (avg 0.60), close-at-multiple at 1.2 x 0.60: the nearest of each side.
    expect(held[0]).toMatchObject({
      side: "yes",
      sizeUsd: "6000000",
      costUsd: "6000000",
      sweptAt: 1_700_000_500,
    });
    expect(held[0]?.exit).toEqual({ above: "720000", below: "540000", atSeconds: 1_700_100_000 - 600 });
    expect(held[1]?.exit).toBeUndefined();
    expect(held[1]?.claimable).toBe(true);
  });
});

describe("price thresholds from the strategies' hooks", () => {
  const hooked = (priceThresholds: Strategy["priceThresholds"]): ConfiguredStrategy => ({
    name: "hooked",
    strategy: { ...closeAtMultiple, name: "hooked", priceThresholds } as Strategy,
    config: {},
  });

  it.each<[string, Strategy["priceThresholds"], string]>([
    [
      "throws",
      () => {
        throw new Error("boom");
      },
      "priceThresholds() failed: boom",
    ],
    [
      "answers a price that is not micro-USD",
      () => ({ above: "0.9" }),
      "priceThresholds() answered expected micro-USD as an integer string",
    ],
  ])("a hook that %s is left out, reported once, and the others still count", (_label, hook, error) => {
    const errors: string[] = [];
    const held = holdingsOf(WALLET, [position(), position()], {
      strategies: [hooked(hook), configured(exitRules, markBasis({ takeProfitPct: 50 }))],
      nowSeconds: 1_700_000_500,
      onHookError: (strategy, message) => errors.push(`${strategy}: ${message}`),
    });
    expect(held.map((h) => h.exit)).toEqual([{ above: "900000" }, { above: "900000" }]);
    expect(errors).toEqual([`hooked: ${error}`]);
  });

  it("gives no thresholds without a strategy that has the hook", () => {
    const held = holdingsOf(WALLET, [position()], {
      strategies: [configured(autoClaim, {})],
      nowSeconds: 1_700_000_500,
    });
    expect(held[0]?.exit).toBeUndefined();
  });
});

describe("which holders a market change polls", () => {
  const settings = { bandPct: 2 };
  const wallets = (decisions: ReturnType<typeof decideTriggers>) =>
    decisions.map((d) => `${d.wallet}:${d.trigger}`);

  it("a resolved market polls its winners only; a cancelled one every holder; a closed one nobody yet", () => {
    const yes = holding({ wallet: WALLET, side: "yes" });
    const no = holding({ wallet: OTHER_WALLET, side: "no", position: "pos-2" });
    expect(wallets(decideTriggers(market({ status: "closed", result: "yes" }), [yes, no], settings))).toEqual(
      [`${WALLET}:resolved`],
    );
    expect(wallets(decideTriggers(market({ status: "cancelled" }), [yes, no], settings))).toEqual([
      `${WALLET}:resolved`,
      `${OTHER_WALLET}:resolved`,
    ]);
    expect(decideTriggers(market({ status: "closed" }), [yes, no], settings)).toEqual([]);
    // The winner's last poll saw the result: polled again only while its claim waits for settlement.
    const resolved = market({ status: "closed", result: "yes" });
    expect(decideTriggers(resolved, [{ ...yes, resolvedSeen: true, claimable: true }], settings)).toEqual([]);
    expect(decideTriggers(resolved, [{ ...yes, resolvedSeen: true }], settings)).toHaveLength(1);
  });

  it("a price its holder's poll saw already polls nobody again", () => {
    const h = holding({ markUsd: "700000", exit: { above: "700000" } });
    expect(decideTriggers(market(), [h], settings)).toEqual([]);
    expect(decideTriggers(market(), [{ ...h, markUsd: "690000" }], settings)).toHaveLength(1);
  });

  it("an open market polls a holder whose mark is past or within the band of a threshold", () => {
    // Yes mark 0.70, no mark 0.30.
    const m = market();
    const check = (exit: Holding["exit"], side: "yes" | "no" = "yes") =>
      decideTriggers(m, [holding({ exit, side })], settings).map((d) => d.trigger);
    expect(check({ above: "700000" })).toEqual(["price"]);
    expect(check({ above: "714000" })).toEqual(["price"]); // 0.70 is within 2 % of 0.714
    expect(check({ above: "720000" })).toEqual([]);
    expect(check({ below: "690000" })).toEqual(["price"]); // 0.70 <= 0.69 x 1.02
    expect(check({ below: "680000" })).toEqual([]);
    expect(check({ below: "310000" }, "no")).toEqual(["price"]);
    expect(check(undefined)).toEqual([]);
  });

  it("a time rule polls its holder once its moment came after the holder's last poll", () => {
    // Last poll at 1_700_000_000; the rule's moment 1_700_000_100.
    const h = holding({ markUsd: "700000", exit: { atSeconds: 1_700_000_100 } });
    const triggers = (nowSeconds: number, held = h) =>
      decideTriggers(market(), [held], settings, new Map(), nowSeconds).map((d) => d.trigger);
    expect(triggers(1_700_000_099)).toEqual([]);
    expect(triggers(1_700_000_100)).toEqual(["time"]);
    // The price sits still (the poll saw 0.70): the time alone polls it.
    expect(triggers(1_700_003_600)).toEqual(["time"]);
    // A poll at or after the moment decided already: nothing more.
    expect(triggers(1_700_000_200, { ...h, sweptAt: 1_700_000_150 })).toEqual([]);
    // Without the time, as before: nothing.
    expect(decideTriggers(market(), [h], settings)).toEqual([]);
  });

  it("a trailing stop fires from the highest mark seen, the sweep's or the watcher's", () => {
    const h = holding({ markUsd: "720000", exit: { trailingStopPct: 10 } });
    expect(decideTriggers(market(), [h], settings)).toEqual([]);
    // The watcher saw 0.80 earlier: 0.70 is 12.5 % down.
    expect(decideTriggers(market(), [h], settings, new Map([["pos-1", 800_000]]))).toHaveLength(1);
    // Sweep mark 0.78: 0.70 is 10.3 % down.
    expect(decideTriggers(market(), [{ ...h, markUsd: "780000" }], settings)).toHaveLength(1);
  });

  it("reads the held side's mark from the market's prices", () => {
    expect(sideMark(market(), "yes")).toBe(700_000);
    expect(sideMark(market(), "no")).toBe(300_000);
    expect(
      sideMark(
        market({
          pricing: {
            buyYesPriceUsd: null,
            sellYesPriceUsd: 650_000,
            buyNoPriceUsd: null,
            sellNoPriceUsd: null,
          },
        }),
        "yes",
      ),
    ).toBe(650_000);
    expect(sideMark(market({ pricing: undefined }), "no")).toBeUndefined();
  });
});
