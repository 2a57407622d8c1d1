import { type Connection, Keypair, PublicKey, SolanaJSONRPCError } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import {
  nonZeroPercentile,
  type PriorityFeeSettings,
  priorityFeePrice,
  priorityFeeSettings,
  recentPriorityFeesOn,
} from "../../../src/chain/priority-fee.js";
import { captureLogger } from "../../helpers/capture-logger.js";

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

describe("priorityFeeSettings", () => {
  it("takes each setting from its own key of the signer section", () => {
    expect(
      priorityFeeSettings({
        priorityFeePercentile: 90,
        minPriorityFeeMicroLamports: 2,
        priorityFeeEscalation: 1.25,
        maxComputeUnitPriceMicroLamports: 3,
        maxPriorityFeeLamports: 4,
      }),
    ).toEqual({
      percentile: 90,
      minMicroLamports: 2,
      escalation: 1.25,
      maxUnitPriceMicroLamports: 3,
      maxPriorityFeeLamports: 4,
    });
  });
});

describe("priorityFeePrice edges", () => {
  it("bids the floor x escalation on the first build even when build is given as 0 or less", () => {
    for (const build of [0, -1]) {
      expect(priorityFeePrice({ samples: [4_000], build, settings })).toBe(4_000);
    }
  });

  it("treats a unit limit below 1 as 1 and one above 1,400,000 as 1,400,000", () => {
    // A 1-unit limit leaves the whole budget for that unit: only the per-unit ceiling holds the price.
    expect(priorityFeePrice({ samples: [3_000_000], build: 1, settings, unitLimit: 0 })).toBe(2_000_000);
    expect(
      priorityFeePrice({
        samples: [3_000_000],
        build: 1,
        settings: { ...settings, maxUnitPriceMicroLamports: Number.MAX_SAFE_INTEGER },
        unitLimit: 0,
      }),
    ).toBe(3_000_000);
    expect(priorityFeePrice({ samples: [900_000], build: 1, settings, unitLimit: 5_000_000 })).toBe(700_000);
  });

  it("bids 0 when the fee budget does not cover the base fee reserve", () => {
    for (const maxPriorityFeeLamports of [20_000, 10_000]) {
      expect(
        priorityFeePrice({ samples: [5_000], build: 1, settings: { ...settings, maxPriorityFeeLamports } }),
      ).toBe(0);
    }
    // One lamport above the reserve: 1e6 / 1,400,000 micro-lamports per unit, rounded down.
    expect(
      priorityFeePrice({
        samples: [5_000],
        build: 1,
        settings: { ...settings, maxPriorityFeeLamports: 20_001 },
      }),
    ).toBe(0);
    expect(
      priorityFeePrice({
        samples: [5_000],
        build: 1,
        settings: { ...settings, maxPriorityFeeLamports: 20_001 },
        unitLimit: 1_000,
      }),
    ).toBe(1_000);
  });
});

describe("recentPriorityFeesOn", () => {
  const writable = [Keypair.generate().publicKey.toBase58(), Keypair.generate().publicKey.toBase58()];

  function fakeConnection(answer: (calls: number) => Promise<{ slot: number; prioritizationFee: number }[]>) {
    const asked: string[][] = [];
    const connection = {
      async getRecentPrioritizationFees(config?: { lockedWritableAccounts?: PublicKey[] }) {
        asked.push((config?.lockedWritableAccounts ?? []).map((k) => k.toBase58()));
        return answer(asked.length);
      },
    } as unknown as Connection;
    return { connection, asked };
  }

  it("asks for the fees on the accounts the transaction writes and answers them per slot", async () => {
    const { connection, asked } = fakeConnection(async () => [
      { slot: 1, prioritizationFee: 0 },
      { slot: 2, prioritizationFee: 7_000 },
    ]);
    const { logger, lines } = captureLogger();
    expect(await recentPriorityFeesOn(connection, logger)(writable)).toEqual([0, 7_000]);
    expect(asked).toEqual([writable]);
    expect(asked[0]?.every((a) => new PublicKey(a).toBase58() === a)).toBe(true);
    expect(lines()).toEqual([]);
  });

  it("retries a failed request once", async () => {
    const { connection, asked } = fakeConnection(async (calls) => {
      if (calls === 1) throw new Error("fetch failed");
      return [{ slot: 3, prioritizationFee: 9 }];
    });
    const { logger } = captureLogger();
    expect(await recentPriorityFeesOn(connection, logger)(writable)).toEqual([9]);
    expect(asked).toHaveLength(2);
  });

  it("gives up after one retry when the node keeps failing for a while", async () => {
    const { connection, asked } = fakeConnection(async () => {
      throw new Error("fetch failed");
    });
    const { logger, lines } = captureLogger();
    expect(await recentPriorityFeesOn(connection, logger)(writable)).toEqual([]);
    expect(asked).toHaveLength(2);
    expect(lines()).toMatchObject([{ err: { message: "getRecentPrioritizationFees: fetch failed" } }]);
  });

  it("answers no samples and logs why when the node keeps failing, so the bid falls back to the floor", async () => {
    const { connection, asked } = fakeConnection(async () => {
      throw new SolanaJSONRPCError({ code: -32601, message: "Method not found" });
    });
    const { logger, lines } = captureLogger();
    expect(await recentPriorityFeesOn(connection, logger)(writable)).toEqual([]);
    expect(asked).toHaveLength(1);
    expect(lines()).toMatchObject([
      {
        level: "warn",
        msg: "recent priority fees unavailable: bidding the floor",
        err: { message: "getRecentPrioritizationFees: RPC error -32601: Method not found" },
      },
    ]);
  });
});
