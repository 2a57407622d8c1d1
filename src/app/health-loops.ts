import type { Worker } from "bullmq";
import type { Redis } from "ioredis";
import type { RedisKeys } from "../keeper/names.js";
import type { PollTracker } from "../ops/poll-tracker.js";
import type { Watchdog } from "../ops/watchdog.js";

const WORKER_HEARTBEAT_MS = 10_000;

/** A loop's stop. */
export type StopLoop = () => Promise<void>;

/** Poll times are shared through Redis so /readyz of any role sees every wallet. */
export function refreshPollTimes(redis: Redis, keys: RedisKeys, polls: PollTracker): StopLoop {
  const timer = setInterval(() => {
    void redis.hgetall(keys.lastPolls).then(
      (times) => {
        for (const [wallet, at] of Object.entries(times)) polls.recordSuccess(wallet, Number(at) * 1000);
      },
      () => undefined,
    );
  }, 2_000);
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
