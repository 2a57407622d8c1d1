import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { SlidingWindowLimiter, slidingBudget } from "../../../src/api/index.js";

describe("the plan's share of a window", () => {
  it.each([
    [100, 60, { limit: 5_700, windowMs: 60_000 }],
    [10, 60, { limit: 570, windowMs: 60_000 }],
    [100, 1, { limit: 95, windowMs: 1_000 }],
    [1.5, 10, { limit: 14, windowMs: 10_000 }],
    // Under one request a window: one request in the time the plan's 95 % gives it.
    [0.1, 1, { limit: 1, windowMs: 10_527 }],
  ])("%s a second over %s s", (rps, windowSeconds, budget) => {
    expect(slidingBudget(rps, windowSeconds)).toEqual(budget);
  });

  it.each([
    [0, 60, "requestsPerSecond must be a positive number"],
    [10, 0, "windowSeconds must be a positive number"],
    [Number.NaN, 60, "requestsPerSecond must be a positive number"],
  ])("refuses %s a second over %s s", (rps, windowSeconds, message) => {
    expect(() => slidingBudget(rps, windowSeconds)).toThrow(message);
  });

  it("fills the share it is given of the window (service.rateLimitSharePct), and refuses a share outside 0-1", () => {
    expect(slidingBudget(10, 60, 0.5)).toEqual({ limit: 300, windowMs: 60_000 });
    expect(slidingBudget(10, 60, 1)).toEqual({ limit: 600, windowMs: 60_000 });
    expect(() => slidingBudget(10, 60, 0)).toThrow("share must be above 0 and at most 1");
    expect(() => slidingBudget(10, 60, 1.5)).toThrow("share must be above 0 and at most 1");
  });
});

describe("sliding window limiter (one process, clock moved by the test)", () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A limiter of `limit` a window of 1 s: 0.95 × rps, rounded down. */
  const limiterOf = (requestsPerSecond: number) =>
    new SlidingWindowLimiter({ apiKey: "k", requestsPerSecond, windowSeconds: 1, nowMs: () => Date.now() });

  it("counts the senders in line for a full window, and none while it has room", async () => {
    const limiter = limiterOf(10); // 9 a second
    await Promise.all(Array.from({ length: 9 }, () => limiter.acquire()));
    expect(limiter.queued).toBe(0);
    const late = Promise.all(Array.from({ length: 3 }, () => limiter.acquire()));
    await vi.advanceTimersByTimeAsync(0);
    expect(limiter.queued).toBe(3);
    await vi.advanceTimersByTimeAsync(2_000);
    await late;
    expect(limiter.queued).toBe(0);
  });

  it("grants the window's share at once, then each send when the oldest one leaves the window", async () => {
    const limiter = limiterOf(50); // 47 a second
    const grantedAt: number[] = [];
    const start = Date.now();
    const all = Promise.all(
      Array.from({ length: 200 }, () => limiter.acquire().then(() => grantedAt.push(Date.now() - start))),
    );
    await vi.advanceTimersByTimeAsync(10_000);
    await all;
    expect(grantedAt).toHaveLength(200);
    // No pacing: the first 47 went without waiting.
    expect(grantedAt.filter((t) => t === 0)).toHaveLength(47);
    // In no window of 1 s (the service's count) more than 47.
    const sorted = [...grantedAt].sort((a, b) => a - b);
    for (let i = 47; i < sorted.length; i++)
      expect((sorted[i] as number) - (sorted[i - 47] as number)).toBeGreaterThanOrEqual(1_000);
    // And no slower than that: 200 sends are 4 full windows and a bit (plus up to 10 ms of spread per wait).
    expect(sorted.at(-1)).toBeLessThan(4 * 1_000 + 5 * 11);
    expect(limiter.stats).toMatchObject({ acquired: 200, redisFailures: 0 });
    // The 153 that found the window full waited in line: one sleep a window, not one per waiter.
    expect(limiter.stats.waits).toBeLessThan(10);
  });

  it("after a 429, holds every send back for the time asked, then spends the window again", async () => {
    const limiter = limiterOf(50);
    await limiter.acquire();
    await limiter.backOff(2_500);
    let grantedAt: number | undefined;
    const next = limiter.acquire().then(() => {
      grantedAt = Date.now();
    });
    const start = Date.now();
    await vi.advanceTimersByTimeAsync(2_400);
    expect(grantedAt).toBeUndefined();
    await vi.advanceTimersByTimeAsync(200);
    await next;
    expect((grantedAt as number) - start).toBeGreaterThanOrEqual(2_500);
    // A shorter back-off asked later does not shorten it; 0 and negative asks change nothing.
    await limiter.backOff(0);
    await limiter.backOff(-5);
    expect(limiter.stats.acquired).toBe(2);
  });

  it("a waiter that gives up in line holds nobody up behind it", async () => {
    const limiter = limiterOf(1.2); // 1 a second
    await limiter.acquire();
    const granted: string[] = [];
    const head = limiter.acquire().then(() => granted.push("head"));
    const controller = new AbortController();
    const quitter = limiter.acquire(controller.signal).catch((e: Error) => granted.push(e.name));
    const last = limiter.acquire().then(() => granted.push("last"));
    await vi.advanceTimersByTimeAsync(100);
    controller.abort();
    await vi.advanceTimersByTimeAsync(3_000);
    await Promise.all([head, quitter, last]);
    expect(granted).toEqual(["AbortError", "head", "last"]);
    expect(limiter.stats.acquired).toBe(3);
  });

  it("gives up waiting when the signal aborts, leaving no grant taken", async () => {
    const limiter = limiterOf(1.2); // 1 a second
    await limiter.acquire();
    const controller = new AbortController();
    const waiting = limiter.acquire(controller.signal);
    const outcome = waiting.then(
      () => "granted",
      (e: Error) => e.name,
    );
    await vi.advanceTimersByTimeAsync(100);
    controller.abort();
    expect(await outcome).toBe("AbortError");
    expect(limiter.stats.acquired).toBe(1);
  });
});
