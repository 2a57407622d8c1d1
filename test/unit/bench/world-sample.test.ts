import { describe, expect, it } from "vitest";
import { closeMarketsToResolve, resolveSample } from "../../../bench/world-sample.js";
import { marketView } from "../../../src/sandbox/world/views.js";
import { createWorld } from "../../../src/sandbox/world/world.js";

describe("bench: closing the claim sample's markets before they resolve", () => {
  it("closes the very markets the sample then resolves, showing the close time given", () => {
    const open = createWorld({ walletCount: 40 });
    const expected = resolveSample(open, 10, new Set()).marketIds;

    const world = createWorld({ walletCount: 40 });
    const closeAt = world.now() + 3_600;
    const closed = closeMarketsToResolve(world, 10, new Set(), closeAt);
    expect([...closed]).toEqual(expected);
    for (const id of closed) {
      const market = world.findMarket(id);
      if (!market) throw new Error(`no market ${id}`);
      expect(marketView(world, market)).toMatchObject({ status: "closed", result: null, closeTime: closeAt });
    }
    const sample = resolveSample(world, 10, new Set(), 0, closed);
    expect(sample.marketIds).toEqual(expected);
    expect(sample.positions.length).toBeGreaterThanOrEqual(10);
  });
});
