import type { Job, Worker, WorkerOptions } from "bullmq";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import type { KeeperConfig } from "../config/load-config.js";
import type { QueueName, RedisKeys } from "../keeper/names.js";
import { type Ledger, TERMINAL_STATUSES } from "../keeper/state/ledger.js";
import type { KeeperMetrics } from "../ops/metrics.js";

/** What a role's BullMQ worker of `queue` is given: the connection, its prefix and the lock settings. */
export function workerOptionsFor(config: KeeperConfig, redis: Redis, keys: RedisKeys, queue: QueueName) {
  return {
    connection: redis,
    prefix: keys.queuePrefix(queue),
    // A job whose lock is not renewed (process killed) runs again elsewhere; the ledger and the
    // recorded signature make that re-run safe.
    lockDuration: config.queues.lockDurationMs,
    stalledInterval: config.queues.stalledIntervalMs,
    maxStalledCount: 2,
  } satisfies Partial<WorkerOptions>;
}

/**
 * Thrown by a job that did nothing yet and must run again later (its wallet's other poll is running):
 * a retry by design, counted as one and logged at debug, not a failure an operator should look at.
 */
export class JobRunsAgainLater extends Error {
  override readonly name = "JobRunsAgainLater";
}

/** Counts a worker's jobs by outcome and logs its failures. */
export function trackWorker(worker: Worker, queue: string, metrics: KeeperMetrics, logger: Logger): Worker {
  worker.on("completed", () => metrics.recordJob(queue, "completed"));
  worker.on("failed", (job: Job | undefined, error: Error) => {
    const final = !job || job.attemptsMade >= (job.opts.attempts ?? 1);
    if (!final && error instanceof JobRunsAgainLater) {
      metrics.recordJob(queue, "retried");
      logger.debug({ job: job?.id, queue, reason: error.message }, "job runs again later");
      return;
    }
    metrics.recordJob(queue, final ? "failed" : "retried");
    logger.warn({ job: job?.id, queue, err: error.message, final }, "job failed");
  });
  worker.on("stalled", () => metrics.recordJob(queue, "stalled"));
  worker.on("error", (error) => logger.error({ queue, err: error.message }, "worker error"));
  return worker;
}

/**
 * A job that used up its attempts fails its intent instead of leaving it in flight: the next poll may
 * admit it again, and a transaction that was already sent is then resumed from its attempt record.
 */
export function failIntentWhenExhausted(worker: Worker, ledger: Ledger): void {
  worker.on("failed", (job, error) => void failIntentOfExhaustedJob(ledger, job, error));
}

/** Marks the intent of a build or sign job that used up its attempts failed, unless it already ended. */
async function failIntentOfExhaustedJob(
  ledger: Ledger,
  job: Job<{ intentKey: string }> | undefined,
  error: Error,
): Promise<void> {
  if (!job || job.attemptsMade < (job.opts.attempts ?? 1)) return;
  try {
    const row = await ledger.get(job.data.intentKey);
    if (!row || (TERMINAL_STATUSES as readonly string[]).includes(row.status)) return;
    await ledger.update(job.data.intentKey, { status: "failed", error: error.message });
  } catch {
    // Redis is away: housekeeping finds the intent without a job and enqueues it again.
  }
}

/** Closes workers together; a close that fails does not keep the others open. */
export async function closeWorkers(workers: readonly Worker[]): Promise<void> {
  await Promise.allSettled(workers.map((w) => w.close()));
}
