import type { Worker } from "bullmq";
import type { Redis } from "ioredis";
import type { RedisKeys } from "../keeper/names.js";
import type { PauseSwitch } from "../keeper/operator/pause.js";
import type { PollTracker } from "../ops/poll-tracker.js";
import type { Watchdog } from "../ops/watchdog.js";

const WORKER_HEARTBEAT_MS = 10_000;
const PAUSE_GAUGE_MS = 2_000;

/** A loop's stop. */
export type StopLoop = () => Promise<void>;

/**
 * Poll times are shared through Redis so /readyz of any role sees every wallet. Each refresh reads
 * only the wallets polled since the second of the newest time it has seen (that second again, for
 * polls recorded after it was read): a fleet's whole set, every two seconds, was about 18 ms of CPU
 * at 10,000 wallets. That misses no poll because a poll is scored by Redis's clock when its record
 * lands (the poll worker's recordPolledScript), never below a second already read: scored by its
 * start, a poll outlasting a later-started one would land below the newest second and go unseen.
 */
export function refreshPollTimes(
  redis: Redis,
  keys: RedisKeys,
  polls: PollTracker,
  everyMs = 2_000,
): StopLoop {
  let fromSecond = 0;
  const timer = setInterval(() => {
    void redis.zrangebyscore(keys.lastPolls, fromSecond, "+inf", "WITHSCORES").then(
      (scored) => {
        for (let i = 0; i + 1 < scored.length; i += 2) {
          const second = Number(scored[i + 1]);
          polls.recordSuccess(scored[i] as string, second * 1000);
          if (second > fromSecond) fromSecond = second;
        }
      },
      () => undefined,
    );
  }, everyMs);
  return async () => clearInterval(timer);
}

/** The workers' heartbeat: a blocked event loop or a worker that stopped makes /healthz fail. */
export function workersHeartbeat(watchdog: Watchdog, workers: readonly Worker[]): StopLoop {
  if (workers.length === 0) return async () => undefined;
  watchdog.register("workers", WORKER_HEARTBEAT_MS);
  const timer = setInterval(() => {
    if (workers.every((w) => w.isRunning())) watchdog.stamp("workers");
  }, WORKER_HEARTBEAT_MS / 2);
  return async () => clearInterval(timer);
}

/**
 * `keeper_paused` as Redis says: `keeper pause` flips the switch from a process of its own, and an
 * idle process (no claim to sign, no poll due) reads it nowhere else. One MGET a period, none per
 * claim; a read is skipped while the last one still waits (Redis away), so none pile up. The read is
 * the switch's own, so a process that saw the pause also puts it back after Redis lost its data.
 */
export function reflectPauseSwitch(
  pause: PauseSwitch,
  setPaused: (isPaused: boolean) => void,
  everyMs = PAUSE_GAUGE_MS,
): StopLoop {
  let reading = false;
  const read = () => {
    if (reading) return;
    reading = true;
    void pause
      .isPaused()
      .then(setPaused, () => undefined)
      .finally(() => {
        reading = false;
      });
  };
  read();
  const timer = setInterval(read, everyMs);
  return async () => clearInterval(timer);
}
