import type { Queue } from "bullmq";
import type { RedisAttemptStore } from "../../signer/attempt-store.js";
import { enqueueBuild } from "../queues/enqueue.js";
import type { ActionJobData } from "../queues/queues.js";
import type { Ledger, LedgerRow, LedgerStatus } from "../state/ledger.js";

export interface RetryDeps {
  ledger: Ledger;
  attempts: Pick<RedisAttemptStore, "clearFinished">;
  actions: Queue<ActionJobData>;
}

export type RetryResult =
  | { outcome: "unknown" }
  /** Not refused nor failed (in flight, confirmed, dry-run): left as it is. */
  | { outcome: "not_retryable"; status: LedgerStatus }
  /** The signer recorded a confirmed transaction of it: done, left as it is. */
  | { outcome: "confirmed_on_record" }
  | {
      outcome: "retried";
      previous: Pick<LedgerRow, "status" | "reason" | "error" | "tries">;
      row: LedgerRow;
      /**
       * A transaction the signer recorded as sent, kept: the next run resumes it (same bytes, same
       * signature) rather than signing another. A sign job that ran out of attempts during an RPC
       * outage fails its intent while its transaction may still land.
       */
      resumesSent: boolean;
    };

/**
 * `keeper retry`: a refused or failed intent runs again once a person has looked. The signer's
 * finished attempt is forgotten first (see RedisAttemptStore.clearFinished; one in flight is kept and
 * resumed, one confirmed means the intent is done), then the ledger admits
 * the intent as a new try, then its build is queued. A crash in between leaves either the intent
 * still refused/failed (retry again) or pending, which housekeeping re-enqueues.
 */
export async function retryIntent(deps: RetryDeps, key: string): Promise<RetryResult> {
  const row = await deps.ledger.get(key);
  if (!row) return { outcome: "unknown" };
  if (row.status !== "refused" && row.status !== "failed")
    return { outcome: "not_retryable", status: row.status };
  const cleared = await deps.attempts.clearFinished(key);
  if (cleared.status === "confirmed") return { outcome: "confirmed_on_record" };
  const admitted = await deps.ledger.readmit(row);
  // Another retry (or a poll re-admitting a failed intent) got there first.
  if (!admitted.admitted)
    return admitted.status ? { outcome: "not_retryable", status: admitted.status } : { outcome: "unknown" };
  const tries = admitted.tries ?? row.tries + 1;
  await enqueueBuild(deps.actions, key, { tries, recordId: admitted.recordId }, 1);
  const now = await deps.ledger.get(key);
  if (!now) return { outcome: "unknown" };
  return {
    outcome: "retried",
    previous: { status: row.status, reason: row.reason, error: row.error, tries: row.tries },
    row: now,
    resumesSent: cleared.status === "sent",
  };
}
