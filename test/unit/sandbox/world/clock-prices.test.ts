import { describe, expect, it } from "vitest";
import { DrivenClock, WallClock } from "../../../../src/sandbox/world/clock.js";
import { marketView, positionView } from "../../../../src/sandbox/world/views.js";
import { createWorld } from "../../../../src/sandbox/world/world.js";
import { defined } from "./helpers.js";

describe("clocks", () => {
  it("a driven clock moves only when told", () => {
    const clock = new DrivenClock(1_000);
    expect(clock.advance(60)).toBe(1_060);
    expect(clock.set(5)).toBe(5);
    expect(() => clock.advance(-1)).toThrow(RangeError);
  });

  it("a wall clock follows real time, sped up", () => {
    let ms = 0;
    const clock = new WallClock({ startSeconds: 100, speed: 60, nowMs: () => ms });
    ms = 2_000;
    expect(clock.nowSeconds()).toBe(220);
  });

  it("a wall clock jumps ahead when advanced, and real time runs on from there", () => {
    let ms = 0;
    const clock = new WallClock({ startSeconds: 100, nowMs: () => ms });
    expect(clock.advance(3_600)).toBe(3_700);
    ms = 5_000;
    expect(clock.nowSeconds()).toBe(3_705);
    expect(() => clock.advance(-1)).toThrow(RangeError);
  });
});

describe("a market closed by hand", () => {
  it("is closed and unresolved from then on, showing the close time given, its price frozen, until resolved", () => {
    const world = createWorld();
    const market = defined(world.markets.find((m) => world.marketState(m).status === "open"));
    const before = world.pricing(market);
    const shownClose = world.now() + 7_200;
    world.closeMarket(market.marketId, shownClose);
    expect(world.marketState(market)).toEqual({ status: "closed", result: null, resolveAt: null });
    expect(marketView(world, market).closeTime).toBe(shownClose);
    expect(world.pricing(market).buyYesPriceUsd).toBe(before.buyYesPriceUsd);
    world.resolveMarket(market.marketId, "yes");
    expect(world.marketState(market)).toMatchObject({ status: "closed", result: "yes" });
  });
});

describe("a market cancelled by hand", () => {
  it("is cancelled from then on, with no result and nothing claimable", () => {
    const world = createWorld();
    const market = defined(world.markets.find((m) => world.marketState(m).status === "open"));
    world.cancelMarket(market.marketId);
    expect(world.marketState(market)).toEqual({ status: "cancelled", result: null, resolveAt: null });
    const held = world.positions.filter((p) => p.marketIndex === market.index);
    expect(held.some((p) => world.isClaimable(p))).toBe(false);
  });
});

describe("prices and resolution follow the clock", () => {
  it("open prices move over time and stay strictly inside (0, $1)", () => {
    const clock = new DrivenClock();
    const world = createWorld({ clock });
    const open = world.markets.filter((m) => world.marketState(m).status === "open" && m.phase === "open");
    const before = open.map((m) => world.pricing(m).buyYesPriceUsd);
    let moved = 0;
    for (let hour = 0; hour < 24; hour++) {
      clock.advance(3_600);
      for (const m of open) {
        const p = world.pricing(m);
        for (const price of [p.buyYesPriceUsd, p.sellYesPriceUsd, p.buyNoPriceUsd, p.sellNoPriceUsd]) {
          expect(price).toBeGreaterThan(0);
          expect(price).toBeLessThan(1_000_000);
          expect(Number.isInteger(price)).toBe(true);
        }
      }
    }
    open.forEach((m, i) => {
      if (world.pricing(m).buyYesPriceUsd !== before[i]) moved += 1;
    });
    expect(moved).toBeGreaterThan(open.length / 2);
  });

  it("going back in time gives the same prices again", () => {
    const clock = new DrivenClock();
    const world = createWorld({ clock });
    const market = defined(world.markets.find((m) => m.phase === "open"));
    clock.advance(7_200);
    const at2h = world.pricing(market).buyYesPriceUsd;
    clock.advance(7_200);
    clock.advance(0);
    clock.set(clock.nowSeconds() - 7_200);
    expect(world.pricing(market).buyYesPriceUsd).toBe(at2h);
  });

  it("setPrice holds a price so a test can cross a threshold", () => {
    const clock = new DrivenClock();
    const world = createWorld({ clock });
    const market = defined(world.markets.find((m) => m.phase === "open"));
    world.setPrice(market.marketId, 910_000);
    clock.advance(600);
    expect(world.pricing(market).sellYesPriceUsd).toBe(905_000);
    world.setPrice(market.marketId, 300_000, { drift: true });
    clock.advance(3_600);
    expect(world.pricing(market).buyYesPriceUsd).not.toBe(305_000);
  });

  it("markets closing soon close, then resolve, as the clock passes their times", () => {
    const clock = new DrivenClock();
    const world = createWorld({ clock });
    const market = defined(world.markets.find((m) => m.phase === "closing"));
    expect(marketView(world, market).status).toBe("open");
    clock.set(market.closeTime);
    expect(marketView(world, market)).toMatchObject({ status: "closed", result: null });
    clock.set(market.resolveTime);
    const resolved = marketView(world, market);
    expect(resolved.result).toMatch(/^(yes|no)$/);
    // An ISO string once resolved, as the live service sends it.
    expect(resolved.resolveAt).toBe(new Date(market.resolveTime * 1000).toISOString());
    expect(resolved.pricing?.buyYesPriceUsd).toBeNull();
  });

  it("resolving a market makes winners claimable with payout = contracts × $1, and losers worth nothing", () => {
    const clock = new DrivenClock();
    const world = createWorld({ clock });
    const held = defined(
      world.positions.find((p) => world.marketOf(p).phase === "open" && p.closedAt === undefined),
    );
    const market = world.marketOf(held);
    const others = world.positions.filter((p) => p.marketIndex === market.index && p.closedAt === undefined);
    expect(positionView(world, held).claimable).toBe(false);
    world.resolveMarket(market.marketId, held.isYes ? "yes" : "no");
    for (const p of others) {
      const view = positionView(world, p);
      if (p.isYes === held.isYes) {
        // The market is closed: no valuation (null), the payout says what the claim brings.
        expect(view).toMatchObject({
          claimable: true,
          markPriceUsd: null,
          valueUsd: null,
          pnlUsdPercent: null,
          payoutUsd: String(p.contracts * 1_000_000),
        });
        expect(view.claimableAt).toBe(world.now());
      } else {
        expect(view).toMatchObject({
          claimable: false,
          valueUsd: null,
          markPriceUsd: null,
          claimableAt: null,
        });
      }
    }
  });

  it("open position figures follow the price", () => {
    const clock = new DrivenClock();
    const world = createWorld({ clock });
    const p = defined(
      world.positions.find((x) => world.marketOf(x).phase === "open" && x.closedAt === undefined && x.isYes),
    );
    world.setPrice(world.marketOf(p).marketId, 800_000);
    const view = positionView(world, p);
    expect(view.markPriceUsd).toBe("800000");
    expect(view.sellPriceUsd).toBe("795000");
    expect(view.valueUsd).toBe(String(p.contracts * 800_000));
    expect(view.pnlUsd).toBe(String(p.contracts * 800_000 - p.contracts * p.avgPriceMicro));
    expect(view.pnlUsdAfterFees).toBe(
      String(p.contracts * 800_000 - p.contracts * p.avgPriceMicro - p.feesMicro),
    );
  });
});
