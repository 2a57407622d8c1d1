import { Worker } from "bullmq";
import pino from "pino";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createApiClient } from "../../../../src/api/index.js";
import { type KeeperConfig, loadConfig } from "../../../../src/config/load-config.js";
import type { Market } from "../../../../src/core/schemas/prediction.js";
import { POLL_PRIORITY, QUEUES, redisKeys } from "../../../../src/keeper/names.js";
import { PauseSwitch } from "../../../../src/keeper/operator/pause.js";
import { enqueueTargetedPoll } from "../../../../src/keeper/queues/enqueue.js";
import { createQueues, type KeeperQueues, type PollJobData } from "../../../../src/keeper/queues/queues.js";
import { HoldingsIndex } from "../../../../src/keeper/state/holdings.js";
import { MarketWatcher, sideMark } from "../../../../src/keeper/watch/market-watcher.js";
import { type PollSkipReason, Scheduler } from "../../../../src/keeper/watch/scheduler.js";
import type { RunningSandbox } from "../../../../src/sandbox/index.js";
import { startCheckedSandbox } from "../../../helpers/checked-sandbox.js";
import { eventually } from "../../../helpers/keeper-harness.js";
import { REDIS_URL, testRedis } from "../../../helpers/redis.js";

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

  const scheduler = (wallets: readonly string[] = WALLETS) => {
    const keys = redisKeys(ctx.prefix, "live");
    return new Scheduler({
      config,
      wallets,
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

  it("a hot watcher cycle runs once across two schedulers in the same slot, and again in the next", async () => {
    const [a, b] = [scheduler(), scheduler()];
    let cycles = 0;
    const hot = async () => {
      cycles += 1;
    };
    const at = new Date(TICK.getTime() + 200);
    await Promise.all([a.hotTick(at, 500, hot), b.hotTick(at, 500, hot)]);
    expect(cycles).toBe(1);
    await a.hotTick(new Date(TICK.getTime() + 700), 500, hot);
    expect(cycles).toBe(2);
  });

  it("skips a wallet whose poll is running (it holds the wallet's lock) and counts it", async () => {
    const keys = redisKeys(ctx.prefix, "live");
    await ctx.redis.set(keys.pollLock(WALLETS[1] as string), "running", "PX", 10_000);
    expect(await scheduler().tick("pollPositions", TICK)).toEqual({ enqueued: 1, skipped: 1 });
    expect(skips).toEqual(["poll_running"]);
  });

  it("a fleet past one round trip's chunk: every wallet once, the running and the queued ones skipped", async () => {
    const keys = redisKeys(ctx.prefix, "live");
    const fleet = Array.from({ length: 1_203 }, (_, i) => `wallet${String(i).padStart(4, "0")}`);
    await ctx.redis.set(keys.pollLock("wallet0700"), "running", "PX", 10_000);
    const s = scheduler(fleet);
    expect(await s.tick("pollPositions", TICK)).toEqual({ enqueued: 1_202, skipped: 1 });
    const ids = await waitingIds();
    expect(new Set(ids).size).toBe(1_202);
    expect(ids).not.toContain(`poll-positions-wallet0700-${TICK.getTime() / 1000}`);
    expect(ids).toContain(`poll-positions-wallet1202-${TICK.getTime() / 1000}`);
    // The next tick finds every poll still waiting (and the one still running): nothing is added.
    expect(await s.tick("pollPositions", NEXT_TICK)).toEqual({ enqueued: 0, skipped: 1_203 });
    expect(skips.filter((r) => r === "poll_queued")).toHaveLength(1_202);
    expect(skips.filter((r) => r === "poll_running")).toHaveLength(2);
    expect(await queues.poll.count()).toBe(1_202);
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

describe("a market watcher's poll of a wallet whose poll is running: not added beside it, not lost", () => {
  const [wallet] = WALLETS as [string, string];
  let sandbox: RunningSandbox;
  let market: Market;
  let eventId: string;
  let ctx: Awaited<ReturnType<typeof testRedis>>;
  let config: KeeperConfig;
  let queues: KeeperQueues;
  let worker: Worker<PollJobData>;
  let release: () => void;
  let index: HoldingsIndex;

  beforeAll(async () => {
    sandbox = await startCheckedSandbox({ port: 0, chain: false, rateLimit: false });
    const client = createApiClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey });
    const events = await client.prediction.listEvents({ includeMarkets: true });
    const found = events.data
      .flatMap((e) => (e.markets ?? []).map((m) => ({ eventId: e.eventId, m })))
      .find(({ m }) => m.status === "open" && sideMark(m, "yes") !== undefined);
    if (!found) throw new Error("the sandbox has no open priced market");
    ({ eventId, m: market } = found);
  });
  afterAll(async () => sandbox?.close());

  beforeEach(async () => {
    ctx = await testRedis("scheduler-running");
    config = await loadConfig({ env: {} });
    queues = createQueues({ url: REDIS_URL }, ctx.prefix, config);
    index = new HoldingsIndex(ctx.redis, redisKeys(ctx.prefix, "live"));
    // The wallet holds the market and its take-profit is below the mark: a poll is due.
    await index.replaceWallet(wallet, [holdingAt("1")]);
    // A poll worker whose polls run until the test lets them end.
    let open: () => void = () => {};
    let gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    release = () => {
      open();
      gate = new Promise<void>((resolve) => {
        open = resolve;
      });
    };
    worker = new Worker<PollJobData>(QUEUES.poll, async () => gate, {
      connection: { url: REDIS_URL },
      prefix: ctx.prefix,
    });
  });
  afterEach(async () => {
    release();
    await worker.close();
    await queues.close();
    await ctx.cleanup();
  });

  /** The wallet's holding as a poll that read the given mark would write it. */
  function holdingAt(markUsd: string) {
    return {
      wallet,
      position: "pos-running",
      marketId: market.marketId,
      eventId,
      side: "yes" as const,
      sizeUsd: "1000000",
      costUsd: "1000000",
      claimable: false,
      resolvedSeen: false,
      markUsd,
      exit: { above: "1" },
      sweptAt: 1_700_000_000,
    };
  }

  function watcher() {
    const keys = redisKeys(ctx.prefix, "live");
    return new MarketWatcher({
      client: createApiClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey }),
      index,
      redis: ctx.redis,
      keys,
      poll: queues.poll,
      pause: new PauseSwitch(ctx.redis, keys),
      logger: pino({ level: "silent" }),
      settings: { bandPct: 2, retriggerSeconds: 600, pageSize: 50, wallets: new Set([wallet]) },
    });
  }

  async function jobsOfWallet(states: Parameters<KeeperQueues["poll"]["getJobs"]>[0]) {
    return (await queues.poll.getJobs(states)).filter((j) => j?.data.wallet === wallet);
  }

  async function startSweepPoll() {
    await queues.poll.add(
      "poll",
      { wallet, kind: "positions", tick: 1 },
      {
        jobId: "sweep-running",
        priority: POLL_PRIORITY.sweep,
        deduplication: { id: `poll-positions-${wallet}` },
      },
    );
    await eventually("the sweep poll runs", async () =>
      (await jobsOfWallet(["active"])).length === 1 ? true : undefined,
    );
  }

  /** Lets the running poll end, then stops the worker so that what is queued next stays in view. */
  async function endSweepPoll() {
    release();
    await eventually("the sweep poll ends", async () =>
      (await jobsOfWallet(["completed"])).length === 1 ? true : undefined,
    );
    await worker.close();
  }

  it("enqueueTargetedPoll adds nothing while the wallet's poll runs, and a poll once it ended", async () => {
    await startSweepPoll();
    const target = { trigger: "price" as const, seenAtMs: Date.now(), marketIds: [market.marketId] };
    expect(await enqueueTargetedPoll(queues.poll, wallet, target)).toBe(false);
    expect(await jobsOfWallet(["waiting", "prioritized", "delayed"])).toEqual([]);
    await endSweepPoll();
    expect(await enqueueTargetedPoll(queues.poll, wallet, target)).toBe(true);
    const [queued, ...more] = await jobsOfWallet(["prioritized"]);
    expect(more).toEqual([]);
    expect(queued?.data.target).toEqual(target);
  });

  it("a watcher's poll already waiting is moved ahead once: a second change adds its market, not a job", async () => {
    await worker.close();
    const first = { trigger: "price" as const, seenAtMs: 1_000, marketIds: ["m-a"] };
    const second = { trigger: "resolved" as const, seenAtMs: 2_000, marketIds: ["m-b"] };
    expect(await enqueueTargetedPoll(queues.poll, wallet, first)).toBe(true);
    expect(await enqueueTargetedPoll(queues.poll, wallet, second)).toBe(true);
    const [queued, ...more] = await jobsOfWallet(["prioritized", "waiting"]);
    expect(more).toEqual([]);
    expect(queued?.priority).toBe(POLL_PRIORITY.targeted);
    // Its latency counts from the first change; the weightier trigger names it.
    expect(queued?.data.target).toEqual({ trigger: "resolved", seenAtMs: 1_000, marketIds: ["m-a", "m-b"] });
  });

  it("the watcher asks again after the running poll: it polls the wallet if that poll missed the change", async () => {
    await startSweepPoll();
    const w = watcher();
    const during = await w.run();
    expect(during.decisions.map((d) => d.wallet)).toEqual([wallet]);
    expect(during.polled).toEqual([]);
    expect(await jobsOfWallet(["waiting", "prioritized", "delayed"])).toEqual([]);
    // The running poll read the positions before the change: the index still holds the old mark.
    await endSweepPoll();
    const after = await w.run();
    expect(after.polled).toEqual([wallet]);
    const [queued, ...more] = await jobsOfWallet(["prioritized", "waiting"]);
    expect(more).toEqual([]);
    expect(queued?.data.target?.marketIds).toEqual([market.marketId]);
    // And only once: the next cycle leaves it to that poll.
    expect((await w.run()).polled).toEqual([]);
    expect(await jobsOfWallet(["prioritized", "waiting"])).toHaveLength(1);
  });

  it("the watcher asks again after the running poll: nothing more if that poll saw the change", async () => {
    await startSweepPoll();
    const w = watcher();
    expect((await w.run()).polled).toEqual([]);
    // The running poll read the positions after the change and indexed the mark it saw.
    const mark = sideMark(market, "yes") as number;
    await index.replaceWallet(wallet, [holdingAt(String(Math.round(mark)))]);
    await endSweepPoll();
    const after = await w.run();
    expect(after.decisions).toEqual([]);
    expect(after.polled).toEqual([]);
    expect(await jobsOfWallet(["waiting", "prioritized", "delayed"])).toEqual([]);
  });
});
