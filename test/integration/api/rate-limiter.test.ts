import { afterEach, describe, expect, it } from "vitest";
import { createApiClient } from "../../../src/api/client.js";
import { ApiRateLimiter, apiKeyFingerprint } from "../../../src/api/rate-limiter.js";
import { testRedis } from "../../helpers/redis.js";
import { sandboxOnPlan as sharedSandboxOnPlan } from "./plan-sandbox.js";
import { json, startStub } from "./stub-server.js";

const API_KEY = "shared-plan-key-55e1";
const market = {
  marketId: "m-1",
  status: "open",
  result: null,
  openTime: 1,
  closeTime: 2,
  resolveAt: null,
  pricing: { buyYesPriceUsd: 1, buyNoPriceUsd: 1, sellYesPriceUsd: 1, sellNoPriceUsd: 1, volume: 1 },
};

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * The sandbox service on a plan of 20 requests a second counted over a sliding 10 s window (200 per
 * window; the live service counts 60 s). What it counts, its 429s and the most it ever held in one
 * window, is the verdict: no wall-clock bins in the test, so a slow machine only makes the run longer.
 */
const PLAN = { requestsPerSecond: 20, windowSeconds: 10, retryAfter: true } as const;
const WINDOW_LIMIT = PLAN.requestsPerSecond * PLAN.windowSeconds;

const sandboxOnPlan = () => sharedSandboxOnPlan(PLAN, cleanups);

describe("rate limiter shared through Redis", () => {
  it("keeps two clients (two processes) with one key under the plan together, as the service counts", async () => {
    const { sandbox, marketId, counts } = await sandboxOnPlan();
    // More than one window's worth: without the limiter the service refuses (see the next test).
    const perClient = 130;
    const clients = [];
    for (const label of ["a", "b"]) {
      // Each "process" has its own Redis connection and its own limiter object; only Redis is shared.
      const redis = await testRedis(`api-rl-${label}`);
      cleanups.push(redis.cleanup);
      const prefix: string = clients.length === 0 ? redis.prefix : (clients[0]?.prefix ?? "");
      const limiter = new ApiRateLimiter({
        apiKey: sandbox.apiKey,
        requestsPerSecond: PLAN.requestsPerSecond,
        redis: redis.redis,
        keyPrefix: prefix,
      });
      clients.push({
        prefix,
        limiter,
        redis,
        client: createApiClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey, rateLimiter: limiter }),
      });
    }
    const started = performance.now();
    let answered = 0;
    const all = Promise.all(
      clients.flatMap(({ client }) =>
        Array.from({ length: perClient }, () =>
          client.prediction.getMarket(marketId).then(() => {
            answered += 1;
          }),
        ),
      ),
    );
    // Redis holds the shared budget under a hash of the key, never the key itself. Looked at while
    // sends are queued: the store's key expires with its window, so after the run it may be gone.
    while (answered < 10) await new Promise((r) => setTimeout(r, 10));
    const keys = await clients[0]?.redis.redis.keys(`${clients[0]?.prefix}*`);
    await all;
    const elapsedS = (performance.now() - started) / 1000;

    const total = perClient * clients.length;
    const seen = counts();
    process.stdout.write(
      `[rate-limiter] ${total} requests, 2 clients, plan ${PLAN.requestsPerSecond}/s over ${PLAN.windowSeconds} s: ` +
        `${elapsedS.toFixed(2)} s, ${(total / elapsedS).toFixed(1)}/s; the service let ${seen?.allowed} through, ` +
        `refused ${seen?.refused}, held at most ${seen?.peakInWindow} of ${WINDOW_LIMIT} in a window; ` +
        `waits ${clients.map((c) => c.limiter.stats.waits).join("+")}\n`,
    );
    expect(seen?.allowed).toBe(total);
    expect(seen?.refused).toBe(0);
    expect(seen?.peakInWindow).toBeLessThanOrEqual(WINDOW_LIMIT);
    // Both clients got turns: the budget is shared, not owned by whoever came first.
    expect(clients.every((c) => c.limiter.stats.acquired === perClient)).toBe(true);
    expect(clients.every((c) => c.limiter.stats.waits > 0)).toBe(true);

    expect(keys?.length).toBeGreaterThan(0);
    expect(
      keys?.every((k) => !k.includes(sandbox.apiKey) && k.includes(apiKeyFingerprint(sandbox.apiKey))),
    ).toBe(true);
  }, 60_000);

  it("without a limiter the same load is refused by the service", async () => {
    const { sandbox, marketId, counts } = await sandboxOnPlan();
    const client = createApiClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey, retries: 0 });
    const outcomes = await Promise.allSettled(
      Array.from({ length: 260 }, () => client.prediction.getMarket(marketId)),
    );
    const seen = counts();
    process.stdout.write(
      `[rate-limiter] baseline without limiter: 260 requests, the service refused ${seen?.refused}\n`,
    );
    expect(seen?.refused).toBe(260 - WINDOW_LIMIT);
    expect(outcomes.filter((o) => o.status === "rejected")).toHaveLength(260 - WINDOW_LIMIT);
  });

  it("after a 429, every process holding the key backs off, not only the one refused", async () => {
    let refused = false;
    const stub = await startStub((_q, r) => {
      if (!refused) {
        refused = true;
        return json(
          r,
          429,
          { type: "rate_limit_error", message: "over plan", request_id: "x" },
          { "retry-after": "2" },
        );
      }
      return json(r, 200, market);
    });
    cleanups.push(() => stub.close());
    const a = await testRedis("api-rl-429a");
    const b = await testRedis("api-rl-429b");
    cleanups.push(a.cleanup, b.cleanup);
    const limiterA = new ApiRateLimiter({
      apiKey: API_KEY,
      requestsPerSecond: 50,
      redis: a.redis,
      keyPrefix: a.prefix,
    });
    const limiterB = new ApiRateLimiter({
      apiKey: API_KEY,
      requestsPerSecond: 50,
      redis: b.redis,
      keyPrefix: a.prefix,
    });
    const clientA = createApiClient({
      baseUrl: stub.url,
      apiKey: API_KEY,
      rateLimiter: limiterA,
      retries: 0,
    });
    const clientB = createApiClient({ baseUrl: stub.url, apiKey: API_KEY, rateLimiter: limiterB });

    await clientA.prediction.getMarket("m-1").catch(() => undefined); // refused with Retry-After: 2
    await clientB.prediction.getMarket("m-1");
    const [first, second] = stub.arrivals;
    // The store blocks in whole seconds, so B's request waits out the full two seconds.
    expect((second?.atMs ?? 0) - (first?.atMs ?? 0)).toBeGreaterThanOrEqual(1_900);
    expect(limiterB.stats.waits).toBeGreaterThan(0);
  });
});

describe("in-memory limiter (no Redis)", () => {
  it("keeps one process under its plan, as the service counts", async () => {
    const { sandbox, marketId, counts } = await sandboxOnPlan();
    const limiter = new ApiRateLimiter({ apiKey: sandbox.apiKey, requestsPerSecond: PLAN.requestsPerSecond });
    const client = createApiClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey, rateLimiter: limiter });
    await Promise.all(Array.from({ length: 230 }, () => client.prediction.getMarket(marketId)));
    expect(counts()).toEqual({ allowed: 230, refused: 0, peakInWindow: expect.any(Number) });
    expect(counts()?.peakInWindow).toBeLessThanOrEqual(WINDOW_LIMIT);
    expect(limiter.stats.waits).toBeGreaterThan(0);
  }, 60_000);

  it("holds the key back no longer than maxRetryAfterMs after a 429 asking for an hour", async () => {
    let n = 0;
    const stub = await startStub((_q, r) => {
      n += 1;
      return n === 1 ? json(r, 429, { error: "later" }, { "retry-after": "3600" }) : json(r, 200, market);
    });
    cleanups.push(() => stub.close());
    const limiter = new ApiRateLimiter({ apiKey: API_KEY, requestsPerSecond: 50 });
    const client = createApiClient({
      baseUrl: stub.url,
      apiKey: API_KEY,
      rateLimiter: limiter,
      maxRetryAfterMs: 1_000,
    });
    await expect(client.prediction.getMarket("m-1")).rejects.toThrow(/429/);
    await client.prediction.getMarket("m-1");
    const [first, second] = stub.arrivals;
    // The second call waited for the cap (whole seconds in the store), not the hour the service named:
    // the wait the limiter chose, not the time the machine took, is what can be bounded from above.
    expect((second?.atMs ?? 0) - (first?.atMs ?? 0)).toBeGreaterThanOrEqual(900);
    expect(limiter.stats.waitedMs).toBeLessThan(3_000);
  });
});
