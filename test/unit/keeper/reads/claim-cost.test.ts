import pino from "pino";
import { describe, expect, it } from "vitest";
import { PolicyRefusal } from "../../../../src/core/errors.js";
import {
  CLAIM_BASE_FEE_LAMPORTS,
  ClaimCostEstimator,
  claimCostLamports,
  lamportsToMicroUsd,
} from "../../../../src/keeper/reads/claim-cost.js";

const settings = {
  percentile: 75,
  minMicroLamports: 1_000,
  escalation: 1.5,
  maxUnitPriceMicroLamports: 1_000_000,
  maxPriorityFeeLamports: 1_000_000,
};
const logger = pino({ level: "silent" });

describe("what a claim costs", () => {
  it.each([
    // unit price (micro-lamports), lamports: 10,000 base + price x 200,000 units / 1e6, rounded up
    [0, 10_000n],
    [1_000, 10_200n],
    [1, 10_001n],
    [50_000, 20_000n],
  ])("at %d micro-lamports a unit: %d lamports", (price, lamports) => {
    expect(claimCostLamports(price)).toBe(lamports);
  });

  it.each([
    [10_200n, 150, 1_530n],
    [10_000n, 1_000, 10_000n],
    [1n, 150, 1n], // a fraction of a micro-dollar is rounded up, never down
  ])("%d lamports at $%d a SOL are %d micro-USD", (lamports, price, micro) => {
    expect(lamportsToMicroUsd(lamports, price)).toBe(micro);
  });

  it("bids as Keeper would (floor, percentile) and prices SOL from the token search, once a minute", async () => {
    let nowMs = 0;
    let samples = 0;
    let searches = 0;
    const estimator = new ClaimCostEstimator({
      recentFees: async () => {
        samples += 1;
        return [0, 0, 5_000];
      },
      settings,
      solPrice: async () => {
        searches += 1;
        return 200;
      },
      logger,
      nowMs: () => nowMs,
    });
    // 5,000 micro-lamports x 200,000 units = 1,000 lamports; 11,000 lamports at $200 = $0.0022.
    expect(await estimator.microUsd()).toBe("2200");
    nowMs = 59_999;
    expect(await estimator.microUsd()).toBe("2200");
    expect([samples, searches]).toEqual([1, 1]);
    nowMs = 60_000;
    await estimator.microUsd();
    expect([samples, searches]).toEqual([2, 2]);
  });

  it("takes SOL at a conservative $1,000 when the service gives no price", async () => {
    const estimator = new ClaimCostEstimator({
      recentFees: async () => [],
      settings,
      solPrice: async () => {
        throw new PolicyRefusal("price_unknown", "no price");
      },
      logger,
    });
    // The floor (1,000 micro-lamports): 10,200 lamports at $1,000 = $0.0102.
    expect(await estimator.microUsd()).toBe(
      String(lamportsToMicroUsd(CLAIM_BASE_FEE_LAMPORTS + 200n, 1_000)),
    );
    expect(await estimator.microUsd()).toBe("10200");
  });
});
