import { afterEach, describe, expect, it } from "vitest";
import { createApiClient } from "../../../src/api/client.js";
import { apiKeyFingerprint } from "../../../src/api/rate-limiter.js";
import { SlidingWindowLimiter } from "../../../src/api/sliding-window.js";
import { testRedis } from "../../helpers/redis.js";
import { sandboxOnPlan as sharedSandboxOnPlan } from "./plan-sandbox.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * The sandbox on a plan of 20 requests a second counted over a sliding 10 s window (200 per window;
 * the live service counts 60 s). Keeper's window limiter aims at 95 % of it (190). The service's own
 * count (its 429s, the most it held in one window) is the verdict, not the test's clock.
 */
const PLAN = { requestsPerSecond: 20, windowSeconds: 10, retryAfter: true } as const;
const SERVICE_LIMIT = PLAN.requestsPerSecond * PLAN.windowSeconds;
const KEEPER_LIMIT = 190;

const sandboxOnPlan = () => sharedSandboxOnPlan(PLAN, cleanups);

/** Two "processes": a Redis connection and a limiter each, one key prefix between them. */
async function twoProcesses(apiKey: string) {
  const a = await testRedis("api-window-a");
  const b = await testRedis("api-window-b");
  cleanups.push(a.cleanup, b.cleanup);
  const limiter = (redis: typeof a) =>
    new SlidingWindowLimiter({
      apiKey,
      requestsPerSecond: PLAN.requestsPerSecond,
      windowSeconds: PLAN.windowSeconds,
      redis: redis.redis,
      keyPrefix: a.prefix,
    });
  return { a: limiter(a), b: limiter(b), redis: a.redis, prefix: a.prefix };
}

describe("sliding window limiter shared through Redis", () => {
  it("lets two processes spend the window's share at once, and no more, as the service counts", async () => {
    const { sandbox, marketId, counts } = await sandboxOnPlan();
    const { a, b, redis, prefix } = await twoProcesses(sandbox.apiKey);
    const clients = [a, b].map((rateLimiter) =>
      createApiClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey, rateLimiter }),
    );
    // The burst: 95 each, the window's share, all granted without one wait.
    await Promise.all(
      clients.flatMap((client) => Array.from({ length: 95 }, () => client.prediction.getMarket(marketId))),
    );
    expect(a.stats.waits + b.stats.waits).toBe(0);
    expect(counts()).toMatchObject({ allowed: KEEPER_LIMIT, refused: 0 });
    // Redis holds the window under a hash of the key, never the key itself.
    const keys = await redis.keys(`${prefix}*`);
    expect(keys.length).toBeGreaterThan(0);
    expect(
      keys.every((k) => !k.includes(sandbox.apiKey) && k.includes(apiKeyFingerprint(sandbox.apiKey))),
    ).toBe(true);

    // Past the share, each send waits for one of the window to leave: 70 more, from both processes.
    await Promise.all(
      clients.flatMap((client) => Array.from({ length: 35 }, () => client.prediction.getMarket(marketId))),
    );
    const seen = counts();
    process.stdout.write(
      `[sliding-window] 260 requests, 2 processes, plan ${PLAN.requestsPerSecond}/s over ${PLAN.windowSeconds} s: ` +
        `the service let ${seen?.allowed} through, refused ${seen?.refused}, held at most ${seen?.peakInWindow} ` +
        `of ${SERVICE_LIMIT} in a window; waits ${a.stats.waits}+${b.stats.waits}\n`,
    );
    expect(seen).toMatchObject({ allowed: 260, refused: 0 });
    expect(seen?.peakInWindow).toBeLessThanOrEqual(KEEPER_LIMIT);
    expect(a.stats.waits).toBeGreaterThan(0);
    expect(b.stats.waits).toBeGreaterThan(0);
  }, 60_000);

  it("after a 429, every process holding the key backs off, not only the one refused", async () => {
    const { a, b } = await twoProcesses("shared-window-key-7f2c");
    await a.acquire();
    await a.backOff(3_000);
    await b.acquire();
    // The wait B chose (not the time the machine took): the back-off A set, shared through Redis,
    // less the time between the two calls (two seconds of slack for a busy machine).
    expect(b.stats.waits).toBeGreaterThan(0);
    expect(b.stats.waitedMs).toBeGreaterThanOrEqual(1_000);
    // A shorter back-off asked later does not shorten a longer one.
    await a.backOff(60_000);
    await b.backOff(10);
    const controller = new AbortController();
    const waiting = b.acquire(controller.signal).then(
      () => "granted",
      (e: Error) => e.name,
    );
    while (b.stats.waits < 2) await new Promise((r) => setTimeout(r, 10));
    expect(b.stats.waitedMs).toBeGreaterThan(50_000);
    controller.abort();
    expect(await waiting).toBe("AbortError");
  }, 30_000);

  it("marks sends answered together in one call, each counted from its answer on", async () => {
    const { a, redis, prefix } = await twoProcesses("answered-together-9c1d");
    const grants = await Promise.all(Array.from({ length: 20 }, () => a.acquire()));
    const [logKey] = await redis.keys(`${prefix}*:log`);
    const grantScores = await redis.zrange(logKey ?? "", "0", "-1", "WITHSCORES");
    expect(grantScores).toHaveLength(40);
    await new Promise((r) => setTimeout(r, 5));
    for (const grant of grants) grant.answered();
    // Marked after the gather time (50 ms at most): poll Redis, not the clock.
    const latestGrant = Math.max(...grantScores.filter((_, i) => i % 2 === 1).map(Number));
    let answeredScores: number[] = [];
    for (let tries = 0; tries < 200; tries++) {
      const now = await redis.zrange(logKey ?? "", "0", "-1", "WITHSCORES");
      answeredScores = now.filter((_, i) => i % 2 === 1).map(Number);
      if (answeredScores.every((score) => score > latestGrant)) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    // Every send now counts from after the last grant (its answer), and all of them in one mark.
    expect(answeredScores).toHaveLength(20);
    expect(answeredScores.every((score) => score > latestGrant)).toBe(true);
    expect(new Set(answeredScores).size).toBe(1);
    expect(a.stats.answeredMarks).toBe(1);
  });

  it("keeps to its own window in this process while Redis cannot answer", async () => {
    const redis = await testRedis("api-window-down");
    cleanups.push(redis.cleanup);
    const limiter = new SlidingWindowLimiter({
      apiKey: "k",
      requestsPerSecond: 2,
      windowSeconds: 5,
      redis: redis.redis,
      keyPrefix: redis.prefix,
    });
    redis.redis.disconnect();
    for (let i = 0; i < 9; i++) await limiter.acquire();
    expect(limiter.stats).toMatchObject({ acquired: 9, waits: 0 });
    const controller = new AbortController();
    const waiting = limiter.acquire(controller.signal).catch((e: Error) => e.name);
    while (limiter.stats.waits < 1) await new Promise((r) => setTimeout(r, 10));
    controller.abort();
    expect(await waiting).toBe("AbortError");
    await redis.redis.connect();
    // Counted in this process alone: nothing reached Redis.
    expect(await redis.redis.keys(`${redis.prefix}*`)).toEqual([]);
  });
});
