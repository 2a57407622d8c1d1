import { afterEach, describe, expect, it } from "vitest";
import { createApiClient } from "../../../src/api/client.js";
import { ApiRateLimiter, apiKeyFingerprint } from "../../../src/api/rate-limiter.js";
import { testRedis } from "../../helpers/redis.js";
import { type Arrival, json, startStub } from "./stub-server.js";

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

/** The most arrivals in any window of `windowMs` (sliding, as the service counts). */
function maxInWindow(arrivals: readonly Arrival[], windowMs: number): number {
  const times = arrivals.map((a) => a.atMs).sort((a, b) => a - b);
  let max = 0;
  let first = 0;
  for (let last = 0; last < times.length; last += 1) {
    while ((times[last] ?? 0) - (times[first] ?? 0) >= windowMs) first += 1;
    max = Math.max(max, last - first + 1);
  }
  return max;
}

/** Arrivals per whole second, counted from the first arrival. */
function perSecond(arrivals: readonly Arrival[]): number[] {
  const t0 = Math.min(...arrivals.map((a) => a.atMs));
  const bins: number[] = [];
  for (const a of arrivals) {
    const i = Math.floor((a.atMs - t0) / 1000);
    bins[i] = (bins[i] ?? 0) + 1;
  }
  return Array.from(bins, (n) => n ?? 0);
}

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * A stub answering 200, already called once through a client without a limiter: Node loads its fetch
 * implementation, zod compiles the endpoint's schemas and the stub its route on first use, which can
 * delay the very first request by tens of ms and, measured from that late first arrival, pull one
 * request of the next second into the first. That is start-up noise, not pacing, so it stays out of
 * the measurement.
 */
async function stubAnswering200() {
  const stub = await startStub((_q, r) => json(r, 200, market));
  cleanups.push(() => stub.close());
  await createApiClient({ baseUrl: stub.url, apiKey: API_KEY }).prediction.getMarket("m-1");
  stub.arrivals.length = 0;
  return stub;
}

describe("rate limiter shared through Redis", () => {
  it("keeps two clients (two processes) with one key under the plan together", async () => {
    const stub = await stubAnswering200();
    const requestsPerSecond = 20;
    const perClient = 40;
    const clients = [];
    for (const label of ["a", "b"]) {
      // Each "process" has its own Redis connection and its own limiter object; only Redis is shared.
      const redis = await testRedis(`api-rl-${label}`);
      cleanups.push(redis.cleanup);
      const prefix: string = clients.length === 0 ? redis.prefix : (clients[0]?.prefix ?? "");
      const limiter = new ApiRateLimiter({
        apiKey: API_KEY,
        requestsPerSecond,
        redis: redis.redis,
        keyPrefix: prefix,
      });
      clients.push({
        prefix,
        limiter,
        redis,
        client: createApiClient({ baseUrl: stub.url, apiKey: API_KEY, rateLimiter: limiter }),
      });
    }
    const started = performance.now();
    const all = Promise.all(
      clients.flatMap(({ client }) =>
        Array.from({ length: perClient }, () => client.prediction.getMarket("m-1")),
      ),
    );
    // Redis holds the shared budget under a hash of the key, never the key itself. Looked at while
    // sends are queued: the store's key expires with its window, so after the run it may be gone.
    while (stub.arrivals.length < 10) await new Promise((r) => setTimeout(r, 10));
    const keys = await clients[0]?.redis.redis.keys(`${clients[0]?.prefix}*`);
    await all;
    const elapsedS = (performance.now() - started) / 1000;

    const total = perClient * clients.length;
    expect(stub.arrivals).toHaveLength(total);
    const bins = perSecond(stub.arrivals);
    const sliding = maxInWindow(stub.arrivals, 1000);
    // Figures for the report.
    process.stdout.write(
      `[rate-limiter] ${total} requests, 2 clients, plan ${requestsPerSecond}/s: ${elapsedS.toFixed(2)} s, ` +
        `${(total / elapsedS).toFixed(1)}/s sustained; per second ${JSON.stringify(bins)}; ` +
        `max in any 1 s window ${sliding}; waits ${clients.map((c) => c.limiter.stats.waits).join("+")}\n`,
    );
    // Counted per second, as the brief's plan is stated. A sliding 1 s window can still see one or two
    // more when timers fire late (reported above, not asserted): the service counts over 60 s windows.
    expect(Math.max(...bins)).toBeLessThanOrEqual(requestsPerSecond);
    expect(total / elapsedS).toBeLessThanOrEqual(requestsPerSecond * 1.05);
    // Both clients got turns: the budget is shared, not owned by whoever came first.
    expect(clients.every((c) => c.limiter.stats.acquired === perClient)).toBe(true);

    expect(keys?.length).toBeGreaterThan(0);
    expect(keys?.every((k) => !k.includes(API_KEY) && k.includes(apiKeyFingerprint(API_KEY)))).toBe(true);
  });

  it("without a limiter the same load exceeds the plan (the stub would see it)", async () => {
    const stub = await stubAnswering200();
    const client = createApiClient({ baseUrl: stub.url, apiKey: API_KEY });
    const started = performance.now();
    await Promise.all(Array.from({ length: 80 }, () => client.prediction.getMarket("m-1")));
    const elapsedS = (performance.now() - started) / 1000;
    process.stdout.write(
      `[rate-limiter] baseline without limiter: 80 requests in ${elapsedS.toFixed(2)} s, max in any 1 s window ${maxInWindow(stub.arrivals, 1000)}\n`,
    );
    expect(maxInWindow(stub.arrivals, 1000)).toBeGreaterThan(20);
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
  it("paces one process to its plan", async () => {
    const stub = await stubAnswering200();
    const limiter = new ApiRateLimiter({ apiKey: API_KEY, requestsPerSecond: 10 });
    const client = createApiClient({ baseUrl: stub.url, apiKey: API_KEY, rateLimiter: limiter });
    await Promise.all(Array.from({ length: 25 }, () => client.prediction.getMarket("m-1")));
    expect(Math.max(...perSecond(stub.arrivals))).toBeLessThanOrEqual(10);
    expect(limiter.stats.waits).toBeGreaterThan(0);
  });

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
    // The second call waited for the cap (whole seconds in the store), not the hour the service named.
    expect((second?.atMs ?? 0) - (first?.atMs ?? 0)).toBeGreaterThanOrEqual(900);
    expect((second?.atMs ?? 0) - (first?.atMs ?? 0)).toBeLessThan(3_000);
  });
});
