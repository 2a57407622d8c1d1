import { afterEach, describe, expect, it, vi } from "vitest";
import { refreshPollTimes } from "../../../src/app/health-loops.js";
import { redisKeys } from "../../../src/keeper/names.js";
import { processPoll } from "../../../src/keeper/pipeline/poll-worker.js";
import { PollTracker } from "../../../src/ops/poll-tracker.js";
import { ledgerAndQueues } from "../../helpers/ledger-queues.js";
import { quietExitRules, testPollDeps } from "../../helpers/poll-deps.js";
import { testRedis } from "../../helpers/redis.js";

// Another role's polls reach this process's readiness through Redis: each refresh reads only the
// wallets polled since the newest second it has seen.

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function until<T>(read: () => T | undefined, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("refreshPollTimes", () => {
  it("learns every wallet once, then only those polled since, and never moves a time back", async () => {
    const { redis, prefix, cleanup } = await testRedis("poll-times");
    cleanups.push(cleanup);
    const keys = redisKeys(prefix, "live");
    const fleet = Array.from({ length: 300 }, (_, i) => `wallet-${i}`);
    await redis.zadd(keys.lastPolls, ...fleet.flatMap((wallet, i) => [1_000 + (i % 7), wallet]));
    const reads = vi.spyOn(redis, "zrangebyscore");
    const polls = new PollTracker(() => 2_000_000);
    const stop = refreshPollTimes(redis, keys, polls, 20);
    cleanups.push(stop);
    const timeOf = (wallet: string) => polls.pollTimes().find((t) => t.wallet === wallet)?.lastSuccessMs;
    await until(() => (polls.pollTimes().length === 300 ? true : undefined));
    expect(timeOf("wallet-6")).toBe(1_006_000);

    // wallet-3 polled again, and a stray older time for wallet-5 (a slower writer): only the new one moves.
    await redis.zadd(keys.lastPolls, 1_010, "wallet-3", 1_001, "wallet-5");
    await until(() => (timeOf("wallet-3") === 1_010_000 ? true : undefined));
    expect(timeOf("wallet-5")).toBe(1_005_000);
    await until(() => (reads.mock.calls.length >= 4 ? true : undefined));
    await stop();
    // After the first read, each asked from the newest second seen, not from the start.
    const froms = reads.mock.calls.map((call) => Number(call[1]));
    expect(froms[0]).toBe(0);
    expect(froms.at(-1)).toBe(1_010);
    expect(froms.every((from, i) => i === 0 || from >= 1_006)).toBe(true);
  });

  it("sees a poll that ends after a later-started poll was read (a slow poll of another process)", async () => {
    const ctx = await ledgerAndQueues("poll-times-order");
    cleanups.push(ctx.cleanup);
    // Another role's connection: its reads are the refresh's only.
    const reader = ctx.redis.duplicate();
    cleanups.push(async () => reader.disconnect());
    const startSecond = Number((await ctx.redis.time())[0]);
    const poll = (wallet: string, startedAt: number) =>
      processPoll(
        { id: `poll-${wallet}`, data: { wallet, kind: "positions", tick: startedAt } },
        testPollDeps(ctx, [], { strategies: quietExitRules, now: () => new Date(startedAt * 1000) }),
      );
    const reads = vi.spyOn(reader, "zrangebyscore");
    const polls = new PollTracker();
    const stop = refreshPollTimes(reader, ctx.keys, polls, 20);
    cleanups.push(stop);

    // The quick poll started now, ended, and a refresh has seen it.
    await poll("quick-wallet", startSecond);
    await until(() => polls.lastSuccess("quick-wallet"));
    // The slow one started 3 s before it (paced by the rate limit, pages) and ends only now.
    await poll("slow-wallet", startSecond - 3);
    const readsBefore = reads.mock.calls.length;
    await until(() => (reads.mock.results.length > readsBefore ? true : undefined));
    // A whole read issued after the slow poll's record landed: the refresh has handled its answer first.
    await reads.mock.results[readsBefore]?.value;
    await stop();
    const slowMs = polls.lastSuccess("slow-wallet");
    expect(slowMs).toBeDefined();
    // Each is the time its record landed, by Redis's clock: the slow poll's is not before the quick one's.
    expect(slowMs).toBeGreaterThanOrEqual(polls.lastSuccess("quick-wallet") ?? Number.POSITIVE_INFINITY);
    expect(slowMs).toBeGreaterThanOrEqual(startSecond * 1000);
  });
});
