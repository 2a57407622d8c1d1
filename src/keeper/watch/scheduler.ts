import type { Redis } from "ioredis";
import { type ScheduledTask, schedule } from "node-cron";
import type { Logger } from "pino";
import type { KeeperConfig } from "../../config/load-config.js";
import type { RedisKeys } from "../names.js";
import { jobIds, POLL_PRIORITY } from "../names.js";
import type { PauseSwitch } from "../operator/pause.js";
import type { KeeperQueues } from "../queues/queues.js";
import { PollRecords } from "../state/poll-record.js";
import { cronLogger } from "./cron-logger.js";
import { selectSweep } from "./sweep-selection.js";

/**
 * Wallets a tick checks and enqueues per round trip: a sweep of 10,000 wallets took 20,000 sequential
 * round trips one wallet at a time, 40 in chunks (BullMQ's addBulk, a pipeline of lock checks).
 */
const ENQUEUE_CHUNK = 500;

export type ScheduleKind = "pollPositions" | "pollOrders" | "housekeeping";
/**
 * Why a tick did not enqueue a wallet's poll: paused, its poll runs, its poll still waits in the
 * queue, or the wallet is idle (nothing held, no orders) and not due this sweep.
 */
export type PollSkipReason = "paused" | "poll_running" | "poll_queued" | "idle";

export interface SchedulerDeps {
  config: KeeperConfig;
  wallets: readonly string[];
  queues: KeeperQueues;
  redis: Redis;
  keys: RedisKeys;
  pause: PauseSwitch;
  logger: Logger;
  onSkipped?: (reason: PollSkipReason) => void;
  /** Called on every tick (the liveness watchdog stamps it). */
  onTick?: () => void;
  /** Housekeeping work, run by whichever scheduler wins the tick. */
  housekeeping?: () => Promise<void>;
  /** One market watcher cycle, run by whichever scheduler wins the tick (on `watcher.schedule`). */
  watchMarkets?: () => Promise<void>;
  /** One hot watcher cycle (every `watcher.hotIntervalMs`), run by whichever scheduler wins it. */
  watchHot?: () => Promise<void>;
}

/**
 * Turns cron ticks into jobs. Job ids carry the scheduled second, so N schedulers enqueue each tick
 * once; a wallet whose previous poll still runs, or still waits in the queue (a sweep slower than the
 * interval), is skipped and counted, not queued behind itself.
 */
export class Scheduler {
  private readonly tasks: ScheduledTask[] = [];
  private hotTimer: NodeJS.Timeout | undefined;
  /** Per sweep schedule, the epoch second of its last tick: the interval idle wallets are counted in. */
  private readonly lastTickEpoch = new Map<ScheduleKind, number>();

  constructor(private readonly deps: SchedulerDeps) {}

  start(): void {
    const { schedules } = this.deps.config;
    const add = (kind: ScheduleKind) =>
      this.tasks.push(
        schedule(schedules[kind], (ctx) => this.tick(kind, ctx.date), {
          name: `keeper-${kind}`,
          noOverlap: true,
          logger: cronLogger(this.deps.logger, `keeper-${kind}`),
        }),
      );
    add("pollPositions");
    add("pollOrders");
    add("housekeeping");
    const watch = this.deps.watchMarkets;
    if (watch && this.deps.config.watcher.enabled) {
      // The watcher knows holders only from sweeps: one at start fills (or refreshes) the index
      // rather than leaving the fleet unwatched until the sweep's first tick.
      void this.tick("pollPositions", new Date());
      this.tasks.push(
        schedule(this.deps.config.watcher.schedule, (ctx) => this.watchTick(ctx.date, watch), {
          name: "keeper-watch-markets",
          noOverlap: true,
          logger: cronLogger(this.deps.logger, "keeper-watch-markets"),
        }),
      );
      const hot = this.deps.watchHot;
      const hotMs = this.deps.config.watcher.hotIntervalMs;
      if (hot && hotMs > 0) {
        let running = false;
        this.hotTimer = setInterval(() => {
          // A hot cycle still running skips this one, like the cron's noOverlap.
          if (running) return;
          running = true;
          void this.hotTick(new Date(), hotMs, hot).finally(() => {
            running = false;
          });
        }, hotMs);
      }
    }
  }

  /** One hot watcher cycle: once across scheduler replicas (its slot of `hotMs`), never while paused. */
  async hotTick(date: Date, hotMs: number, watch: () => Promise<void>): Promise<void> {
    const slot = Math.floor(date.getTime() / hotMs);
    try {
      if (await this.winsTick(`watch-hot-${slot}`, Math.max(1, Math.ceil((2 * hotMs) / 1000)))) await watch();
    } catch (error) {
      this.deps.logger.error({ err: (error as Error).message, slot }, "hot market watcher failed");
    }
  }

  /** One watcher tick: once across scheduler replicas, never while paused (the watcher checks). */
  async watchTick(date: Date, watch: () => Promise<void>): Promise<void> {
    const tickEpoch = Math.floor(date.getTime() / 1000);
    this.deps.onTick?.();
    try {
      if (await this.winsTick(`watch-${tickEpoch}`, 60)) await watch();
    } catch (error) {
      this.deps.logger.error({ err: (error as Error).message, tick: tickEpoch }, "market watcher failed");
    }
  }

  async stop(): Promise<void> {
    if (this.hotTimer) clearInterval(this.hotTimer);
    this.hotTimer = undefined;
    await Promise.allSettled(this.tasks.map((t) => t.destroy()));
    this.tasks.length = 0;
  }

  /** One tick of one schedule; public so tests drive it with a date instead of waiting for cron. */
  async tick(kind: ScheduleKind, date: Date): Promise<{ enqueued: number; skipped: number }> {
    const tickEpoch = Math.floor(date.getTime() / 1000);
    const log = this.deps.logger.child({ schedule: kind, tick: tickEpoch });
    this.deps.onTick?.();
    try {
      if (await this.deps.pause.isPaused()) {
        this.deps.onSkipped?.("paused");
        log.debug("tick skipped: paused");
        return { enqueued: 0, skipped: this.deps.wallets.length };
      }
      if (kind === "housekeeping") {
        if (await this.winsTick(`housekeeping-${tickEpoch}`)) await this.deps.housekeeping?.();
        return { enqueued: 0, skipped: 0 };
      }
      const { due, idleSkipped } = await this.selectWallets(kind, tickEpoch);
      for (const _ of idleSkipped) this.deps.onSkipped?.("idle");
      let enqueued = 0;
      let skipped = idleSkipped.length;
      for (let i = 0; i < due.length; i += ENQUEUE_CHUNK) {
        const counts = await this.enqueuePolls(kind, due.slice(i, i + ENQUEUE_CHUNK), tickEpoch);
        enqueued += counts.enqueued;
        skipped += counts.skipped;
      }
      log.debug({ enqueued, skipped }, "tick");
      return { enqueued, skipped };
    } catch (error) {
      log.error({ err: (error as Error).message }, "tick failed");
      return { enqueued: 0, skipped: 0 };
    }
  }

  /**
   * One chunk of a tick's wallets: whose poll runs (its lock held) in one round trip, the polls of the
   * rest in another (addBulk). A wallet whose poll still waits in the queue from an earlier tick gets
   * that job's id back (deduplication) and is skipped.
   */
  private async enqueuePolls(
    kind: ScheduleKind,
    wallets: readonly string[],
    tickEpoch: number,
  ): Promise<{ enqueued: number; skipped: number }> {
    const locks = this.deps.redis.pipeline();
    for (const wallet of wallets) locks.exists(this.deps.keys.pollLock(wallet));
    const held = (await locks.exec()) ?? [];
    const free: string[] = [];
    wallets.forEach((wallet, i) => {
      const [error, exists] = held[i] ?? [];
      if (error) throw error;
      if (exists === 1) this.deps.onSkipped?.("poll_running");
      else free.push(wallet);
    });
    const pollKind = kind === "pollOrders" ? "orders" : "positions";
    const jobs = free.map((wallet) => ({
      name: "poll",
      data: { wallet, kind: pollKind, tick: tickEpoch } as const,
      opts: {
        jobId: jobIds.poll(wallet, pollKind, tickEpoch),
        // Behind the market watcher's polls (see POLL_PRIORITY).
        priority: POLL_PRIORITY.sweep,
        deduplication: { id: jobIds.pollDeduplication(wallet, pollKind) },
      },
    }));
    const added = jobs.length > 0 ? await this.deps.queues.poll.addBulk(jobs) : [];
    let enqueued = 0;
    added.forEach((job, i) => {
      // A job of an earlier tick answered instead: that poll has not finished, so this tick adds nothing.
      if (job.id === jobs[i]?.opts.jobId) enqueued += 1;
      else this.deps.onSkipped?.("poll_queued");
    });
    return { enqueued, skipped: wallets.length - enqueued };
  }

  /**
   * The wallets a sweep tick polls: idle ones (their last poll saw nothing held and no orders) only
   * every `schedules.idleSweepMultiple` sweeps of this schedule (see selectSweep).
   */
  private async selectWallets(kind: ScheduleKind, tickEpoch: number) {
    const multiple = this.deps.config.schedules.idleSweepMultiple;
    const last = this.lastTickEpoch.get(kind);
    // A tick of an earlier second (a test, a clock step back) leaves the interval as it was.
    if (last === undefined || tickEpoch > last) this.lastTickEpoch.set(kind, tickEpoch);
    const wallets = this.deps.wallets;
    if (multiple <= 1 || last === undefined || tickEpoch <= last)
      return { due: [...wallets], idleSkipped: [] };
    const activity = await new PollRecords(this.deps.redis, this.deps.keys).activity(wallets);
    return selectSweep(wallets, activity, {
      nowSeconds: tickEpoch,
      intervalSeconds: tickEpoch - last,
      multiple,
    });
  }

  /** Only one scheduler replica runs a housekeeping tick. */
  private async winsTick(name: string, ttlSeconds = 3600): Promise<boolean> {
    const won = await this.deps.redis.set(
      `${this.deps.keys.counters}:tick:${name}`,
      "1",
      "EX",
      ttlSeconds,
      "NX",
    );
    return won === "OK";
  }
}
