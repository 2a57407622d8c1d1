import type { Redis } from "ioredis";
import { type ScheduledTask, schedule } from "node-cron";
import type { Logger } from "pino";
import type { KeeperConfig } from "../../config/load-config.js";
import type { RedisKeys } from "../names.js";
import { jobIds, POLL_PRIORITY } from "../names.js";
import type { PauseSwitch } from "../operator/pause.js";
import type { KeeperQueues } from "../queues/queues.js";

export type ScheduleKind = keyof KeeperConfig["schedules"];
/** Why a tick did not enqueue a wallet's poll: paused, its poll runs, or its poll still waits in the queue. */
export type PollSkipReason = "paused" | "poll_running" | "poll_queued";

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
}

/**
 * Turns cron ticks into jobs. Job ids carry the scheduled second, so N schedulers enqueue each tick
 * once; a wallet whose previous poll still runs, or still waits in the queue (a sweep slower than the
 * interval), is skipped and counted, not queued behind itself.
 */
export class Scheduler {
  private readonly tasks: ScheduledTask[] = [];

  constructor(private readonly deps: SchedulerDeps) {}

  start(): void {
    const { schedules } = this.deps.config;
    const add = (kind: ScheduleKind) =>
      this.tasks.push(
        schedule(schedules[kind], (ctx) => this.tick(kind, ctx.date), {
          name: `keeper-${kind}`,
          noOverlap: true,
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
        }),
      );
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
      let enqueued = 0;
      let skipped = 0;
      for (const wallet of this.deps.wallets) {
        if ((await this.deps.redis.exists(this.deps.keys.pollLock(wallet))) === 1) {
          skipped += 1;
          this.deps.onSkipped?.("poll_running");
          continue;
        }
        const pollKind = kind === "pollOrders" ? "orders" : "positions";
        const jobId = jobIds.poll(wallet, pollKind, tickEpoch);
        const job = await this.deps.queues.poll.add(
          "poll",
          { wallet, kind: pollKind, tick: tickEpoch },
          {
            jobId,
            // Behind the market watcher's polls (see POLL_PRIORITY).
            priority: POLL_PRIORITY.sweep,
            deduplication: { id: jobIds.pollDeduplication(wallet, pollKind) },
          },
        );
        // A job of an earlier tick answered instead: that poll has not finished, so this tick adds nothing.
        if (job.id !== jobId) {
          skipped += 1;
          this.deps.onSkipped?.("poll_queued");
          continue;
        }
        enqueued += 1;
      }
      log.debug({ enqueued, skipped }, "tick");
      return { enqueued, skipped };
    } catch (error) {
      log.error({ err: (error as Error).message }, "tick failed");
      return { enqueued: 0, skipped: 0 };
    }
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
