import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { measureIoFloor } from "../../../bench/io-floor.js";
import { REDIS_URL } from "../../helpers/redis.js";

describe("the benchmark's I/O floor, measured in a process of its own", () => {
  const redis = new Redis(REDIS_URL);
  afterAll(() => redis.quit());

  it("times real jobs, commands and requests, and leaves no key behind", async () => {
    const prefix = `test-io-floor-${randomBytes(4).toString("hex")}`;
    const floor = await measureIoFloor(
      { keeperRuntime: "tsx", keeperNodeFlags: [], redisUrl: REDIS_URL },
      prefix,
      1,
    );
    for (const part of [floor.jobMs, floor.commandMs, floor.requestMs]) {
      expect(Number.isFinite(part)).toBe(true);
      expect(part).toBeGreaterThan(0);
    }
    // A job is three scripts at least (add, take, finish); a plain HGETALL is one command.
    expect(floor.jobMs).toBeGreaterThan(floor.commandMs);
    expect(await redis.keys(`${prefix}*`)).toEqual([]);
  }, 120_000);

  it("says so when Redis cannot be reached, and does not hang", async () => {
    await expect(
      measureIoFloor(
        { keeperRuntime: "tsx", keeperNodeFlags: [], redisUrl: "redis://127.0.0.1:1" },
        "test-io-floor-x",
        1,
      ),
    ).rejects.toThrow(/I\/O floor/);
  }, 60_000);
});
