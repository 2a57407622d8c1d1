import { afterEach, describe, expect, it, vi } from "vitest";
import { refreshPollTimes } from "../../../src/app/health-loops.js";
import { redisKeys } from "../../../src/keeper/names.js";
import { PollTracker } from "../../../src/ops/poll-tracker.js";
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
});
