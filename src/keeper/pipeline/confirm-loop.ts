import { type Job, UnrecoverableError } from "bullmq";
import type { ConfirmJobData } from "../queues/queues.js";
import { TERMINAL_STATUSES } from "../state/ledger.js";
import { applyOutcome, type OutcomeDeps, type SignOutcome, type WatchDeps } from "./sign-worker.js";

export interface ConfirmDeps extends OutcomeDeps, WatchDeps {}

/**
 * A job of the `confirm` queue: an attempt a sign job sent and handed over, because every watch slot
 * of its process was taken (or because an earlier version handed over every attempt), watched to
 * confirmed, failed or expired. A job lost to a crash runs again (BullMQ's stalled check) and watches
 * the same recorded bytes; an intent that already ended is left alone.
 */
export async function processConfirm(
  job: Pick<Job<ConfirmJobData>, "data" | "id"> & Partial<Pick<Job<ConfirmJobData>, "attemptsStarted">>,
  deps: ConfirmDeps,
): Promise<SignOutcome | undefined> {
  const { intentKey, build } = job.data;
  const log = deps.logger.child({ intent: intentKey, job: job.id });
  const row = await deps.ledger.get(intentKey);
  if (!row) throw new UnrecoverableError(`no ledger record for intent ${intentKey}`);
  if ((TERMINAL_STATUSES as readonly string[]).includes(row.status) || row.builds !== build) {
    log.info({ status: row.status, builds: row.builds }, "watch skipped: intent already past this build");
    return undefined;
  }
  deps.onWatching?.(1);
  let outcome: SignOutcome;
  try {
    outcome = await deps.watch(intentKey, (job.attemptsStarted ?? 1) > 1, row);
  } finally {
    deps.onWatching?.(-1);
  }
  await applyOutcome(row, build, outcome, deps);
  return outcome;
}
