import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type KeeperConfig, loadConfig } from "../../../src/config/load-config.js";
import { enqueueTargetedPoll } from "../../../src/keeper/market-watcher.js";
import { POLL_PRIORITY, redisKeys } from "../../../src/keeper/names.js";
import { PauseSwitch } from "../../../src/keeper/pause.js";
import { createQueues, type KeeperQueues } from "../../../src/keeper/queues.js";
import { type PollSkipReason, Scheduler } from "../../../src/keeper/scheduler.js";
import { REDIS_URL, testRedis } from "../../helpers/redis.js";

const WALLETS = [
  "7YttLkHDoNj9wyDur5pM1ejNaAvT9X4eqaYcHQqtj2G5",
  "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin",
];
const TICK = new Date("2026-11-23T12:00:10Z");
const NEXT_TICK = new Date("2026-11-23T12:00:20Z");

describe("scheduler: each tick once, and never a second poll of a wallet behind the first", () => {
  let ctx: Awaited<ReturnType<typeof testRedis>>;
  let config: KeeperConfig;
  let queues: KeeperQueues;
  let skips: PollSkipReason[];

  const scheduler = () => {
    const keys = redisKeys(ctx.prefix, "live");
    return new Scheduler({
      config,
      wallets: WALLETS,
      queues,
      redis: ctx.redis,
      keys,
      pause: new PauseSwitch(ctx.redis, keys),
      logger: pino({ level: "silent" }),
      onSkipped: (reason) => skips.push(reason),
    });
  };
  // Sweep polls carry a priority (behind the market watcher's), so they wait as `prioritized`.
  const waitingIds = async () =>
    (await queues.poll.getJobs(["waiting", "prioritized"])).map((j) => j.id).sort();

  beforeEach(async () => {
    ctx = await testRedis("scheduler");
    config = await loadConfig({ env: {} });
    queues = createQueues({ url: REDIS_URL }, ctx.prefix, config);
    skips = [];
  });
  afterEach(async () => {
    await queues.close();
    await ctx.cleanup();
  });

  it("two schedulers ticking the same second enqueue one poll per wallet", async () => {
    const [a, b] = [scheduler(), scheduler()];
    await Promise.all([a.tick("pollPositions", TICK), b.tick("pollPositions", TICK)]);
    expect(await waitingIds()).toEqual(
      WALLETS.map((w) => `poll-positions-${w}-${TICK.getTime() / 1000}`).sort(),
    );
  });

  it("skips a wallet whose poll of the previous tick still waits, and polls it again once that one ended", async () => {
    const s = scheduler();
    expect(await s.tick("pollPositions", TICK)).toEqual({ enqueued: 2, skipped: 0 });
    // The sweep is slower than the interval: both polls still wait when the next tick comes.
    expect(await s.tick("pollPositions", NEXT_TICK)).toEqual({ enqueued: 0, skipped: 2 });
    expect(skips).toEqual(["poll_queued", "poll_queued"]);
    expect(await queues.poll.count()).toBe(2);

    // An orders poll is another kind of work and is not held back by a waiting positions poll.
    expect(await s.tick("pollOrders", NEXT_TICK)).toEqual({ enqueued: 2, skipped: 0 });

    // Once the first wallet's positions poll is gone (done), its next tick is enqueued; the other's is not.
    const first = await queues.poll.getJob(`poll-positions-${WALLETS[0]}-${TICK.getTime() / 1000}`);
    await first?.remove();
    const third = new Date(NEXT_TICK.getTime() + 10_000);
    expect(await s.tick("pollPositions", third)).toEqual({ enqueued: 1, skipped: 1 });
    expect(await waitingIds()).toContain(`poll-positions-${WALLETS[0]}-${third.getTime() / 1000}`);
  });

  it("skips a wallet whose poll is running (it holds the wallet's lock) and counts it", async () => {
    const keys = redisKeys(ctx.prefix, "live");
    await ctx.redis.set(keys.pollLock(WALLETS[1] as string), "running", "PX", 10_000);
    expect(await scheduler().tick("pollPositions", TICK)).toEqual({ enqueued: 1, skipped: 1 });
    expect(skips).toEqual(["poll_running"]);
  });

  it("enqueues nothing while paused", async () => {
    const keys = redisKeys(ctx.prefix, "live");
    await new PauseSwitch(ctx.redis, keys).pause("test", 0);
    expect(await scheduler().tick("pollPositions", TICK)).toEqual({ enqueued: 0, skipped: 2 });
    expect(await queues.poll.count()).toBe(0);
    expect(skips).toEqual(["paused"]);
  });

  it("a market watcher's poll runs ahead of the sweep: a waiting sweep poll of the wallet is moved ahead, not doubled", async () => {
    await scheduler().tick("pollPositions", TICK);
    const [first, second] = WALLETS as [string, string];
    const target = { trigger: "resolved" as const, seenAtMs: TICK.getTime() + 500, marketIds: ["mkt-1"] };
    expect(await enqueueTargetedPoll(queues.poll, second, target)).toBe(true);
    const queued = await queues.poll.getJobs(["prioritized"], 0, -1, true);
    // One poll per wallet still, the watcher's first in the order BullMQ runs them.
    expect(queued.map((j) => j.data.wallet)).toEqual([second, first]);
    expect(queued[0]?.data.target).toEqual(target);
    expect(queued[0]?.priority).toBe(POLL_PRIORITY.targeted);
    expect(queued[1]?.priority).toBe(POLL_PRIORITY.sweep);
    // A wallet with no poll waiting gets a new one; the sweep's next tick then skips it.
    await queues.poll.obliterate({ force: true });
    expect(await enqueueTargetedPoll(queues.poll, first, target)).toBe(true);
    expect(await scheduler().tick("pollPositions", NEXT_TICK)).toEqual({ enqueued: 1, skipped: 1 });
    expect(skips).toEqual(["poll_queued"]);
  });
});
