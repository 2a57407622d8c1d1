import { describe, expect, it } from "vitest";
import {
  nonZeroPercentile,
  type PriorityFeeSettings,
  priorityFeePrice,
} from "../../src/chain/priority-fee.js";

const settings: PriorityFeeSettings = {
  percentile: 75,
  minMicroLamports: 1_000,
  escalation: 1.5,
  maxUnitPriceMicroLamports: 2_000_000,
  maxPriorityFeeLamports: 1_000_000,
};

describe("nonZeroPercentile", () => {
  it.each([
    { values: [], p: 75, expected: undefined },
    { values: [0, 0, 0], p: 75, expected: undefined },
    { values: [5], p: 1, expected: 5 },
    { values: [40, 10, 30, 20], p: 75, expected: 30 },
    { values: [40, 10, 30, 20], p: 50, expected: 20 },
    { values: [40, 10, 30, 20], p: 100, expected: 40 },
    { values: [40, 10, 30, 20], p: 1, expected: 10 },
    // zeros (slots with no fee on these accounts) are left out, not counted as the low end
    { values: [0, 0, 0, 0, 0, 0, 100, 200], p: 50, expected: 100 },
  ])("$values at p$p is $expected", ({ values, p, expected }) => {
    expect(nonZeroPercentile(values, p)).toBe(expected);
  });
});

describe("priorityFeePrice", () => {
  it.each([
    {
      what: "the percentile of the samples",
      samples: [4_000, 8_000, 2_000, 6_000],
      build: 1,
      expected: 6_000,
    },
    { what: "the floor when every sample is zero", samples: [0, 0], build: 1, expected: 1_000 },
    { what: "the floor when there are no samples", samples: [], build: 1, expected: 1_000 },
    { what: "the floor above a lower percentile", samples: [10, 20], build: 1, expected: 1_000 },
    { what: "x1.5 on the second build", samples: [4_000, 8_000, 2_000, 6_000], build: 2, expected: 9_000 },
    { what: "x2.25 on the third build", samples: [4_000, 8_000, 2_000, 6_000], build: 3, expected: 13_500 },
    { what: "rounded up", samples: [1_001], build: 2, expected: 1_502 },
    {
      what: "the per-unit ceiling",
      samples: [3_000_000],
      build: 1,
      unitLimit: 100_000,
      expected: 2_000_000,
    },
    {
      what: "limit x price within the fee ceiling at an unknown limit (1,400,000 units)",
      samples: [900_000],
      build: 1,
      expected: 700_000,
    },
    {
      what: "limit x price within the fee ceiling at a known limit",
      samples: [1_600_000],
      build: 1,
      unitLimit: 800_000,
      expected: 1_225_000,
    },
    { what: "escalation stopped by the fee ceiling", samples: [400_000], build: 3, expected: 700_000 },
  ])("$what", ({ samples, build, unitLimit, expected }) => {
    const price = priorityFeePrice({ samples, build, settings, ...(unitLimit ? { unitLimit } : {}) });
    expect(price).toBe(expected);
    const limit = BigInt(unitLimit ?? 1_400_000);
    // What the policy computes (price x limit rounded up, plus the base fee of up to four signatures)
    // stays within its budget.
    expect((BigInt(price) * limit + 999_999n) / 1_000_000n + 4n * 5_000n).toBeLessThanOrEqual(1_000_000n);
  });

  it("rises on every rebuild until a ceiling holds it", () => {
    const prices = [1, 2, 3, 4, 5].map((build) => priorityFeePrice({ samples: [100_000], build, settings }));
    expect(prices).toEqual([100_000, 150_000, 225_000, 337_500, 506_250]);
  });
});
