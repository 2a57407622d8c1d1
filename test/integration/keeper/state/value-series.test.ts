import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { redisKeys } from "../../../../src/keeper/names.js";
import { SAMPLE_BUCKET_SECONDS, SAMPLE_CAP, ValueSeries } from "../../../../src/keeper/state/value-series.js";
import { OTHER_WALLET, WALLET } from "../../../helpers/fixtures.js";
import { testRedis } from "../../../helpers/redis.js";

/** A bucket's start: 2027-01-15 08:00 UTC. */
const T0 = 1_800_000_000 - (1_800_000_000 % SAMPLE_BUCKET_SECONDS);

describe("fleet value series in Redis", () => {
  let redis: Awaited<ReturnType<typeof testRedis>>;
  const series = (prefix: string) => new ValueSeries(redis.redis, redisKeys(prefix, "live"));

  beforeAll(async () => {
    redis = await testRedis("value-series");
  });
  afterAll(async () => redis?.cleanup());

  it("keeps one sample a bucket, the fleet total as each wallet's last poll saw it", async () => {
    const values = series(`${redis.prefix}-a`);
    expect(await values.record(WALLET, 10_000_000n, T0 + 5)).toBe(10_000_000n);
    expect(await values.record(OTHER_WALLET, 4_000_000n, T0 + 30)).toBe(14_000_000n);
    // The same wallet again in the same bucket: its value replaces its last one, not added to it.
    expect(await values.record(WALLET, 12_500_000n, T0 + 90)).toBe(16_500_000n);
    expect(await values.samples()).toEqual([{ at: T0, valueMicroUsd: 16_500_000n }]);
    // The next bucket starts a sample of its own; the last one stays as it ended.
    await values.record(OTHER_WALLET, 1_000_000n, T0 + SAMPLE_BUCKET_SECONDS + 1);
    expect(await values.samples()).toEqual([
      { at: T0, valueMicroUsd: 16_500_000n },
      { at: T0 + SAMPLE_BUCKET_SECONDS, valueMicroUsd: 13_500_000n },
    ]);
  });

  it("keeps the total exact past 2^53 micro-USD", async () => {
    const values = series(`${redis.prefix}-b`);
    await values.record(WALLET, 9_007_199_254_740_000n, T0);
    expect(await values.record(OTHER_WALLET, 993n, T0)).toBe(9_007_199_254_740_993n);
  });

  it("is capped: the oldest samples go", async () => {
    const values = series(`${redis.prefix}-c`);
    for (let i = 0; i < SAMPLE_CAP + 3; i += 1)
      await values.record(WALLET, BigInt(i), T0 + i * SAMPLE_BUCKET_SECONDS);
    const samples = await values.samples();
    expect(samples).toHaveLength(SAMPLE_CAP);
    expect(samples[0]).toEqual({ at: T0 + 3 * SAMPLE_BUCKET_SECONDS, valueMicroUsd: 3n });
    expect(samples.at(-1)?.valueMicroUsd).toBe(BigInt(SAMPLE_CAP + 2));
  });

  it("forgets the wallets no longer run: their value leaves the total", async () => {
    const values = series(`${redis.prefix}-d`);
    await values.record(WALLET, 10_000_000n, T0);
    await values.record(OTHER_WALLET, 4_000_000n, T0);
    await values.forget([WALLET]);
    expect(await values.record(WALLET, 10_000_000n, T0 + SAMPLE_BUCKET_SECONDS)).toBe(10_000_000n);
  });
});
