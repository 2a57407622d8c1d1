import type { Queue } from "bullmq";
import type { Logger } from "pino";
import type { NotificationEvent } from "../../ops/notifier.js";
import { jobIds } from "../names.js";
import { enqueueBuild, enqueueSign } from "../queues/enqueue.js";
import type { ActionJobData, ConfirmJobData, SignJobData } from "../queues/queues.js";
import type { Ledger, LedgerRow } from "../state/ledger.js";

/** A sign or confirm job in one of these states will still run: its intent is not abandoned. */
const LIVE_JOB_STATES = ["waiting", "active", "delayed", "prioritized", "waiting-children"] as const;

export interface HousekeepingDeps {
  ledger: Ledger;
  actions: Queue<ActionJobData>;
  sign: Queue<SignJobData>;
  /** The confirm queue (watches past the sign worker's slots): an intent watched there is not abandoned either. */
  confirm?: Queue<ConfirmJobData>;
  wallets: readonly string[];
  /** An intent `sending` (unchanged) for this long is stuck: alerted, and resumed if no job runs it. */
  stuckSendingSeconds: number;
  logger: Logger;
  notify?: (event: NotificationEvent) => void;
  /** How many intents were stuck in `sending` at this run (the keeper_intents_stuck_sending gauge). */
  onStuckSending?: (count: number) => void;
  /** Unix seconds (tests drive it). */
  nowSeconds?: () => number;
}

/**
 * Intents whose job vanished (a crash between recording and enqueueing, or a job trimmed from a queue)
 * get their job back; job ids are deterministic, so an intent whose job still exists gains nothing.
 * An intent stuck in `sending` that neither a sign job nor a watch (confirm job) carries any more (one
 * failed and kept, and the failure never reached the ledger; or a watch lost) gets a sign job under a
 * new id: BullMQ ignores an add whose id is a kept job's. The signer then finds the recorded attempt in
 * flight and hands it to a new watch; it never signs a second transaction.
 */
export async function runHousekeeping(deps: HousekeepingDeps): Promise<void> {
  const { ledger, logger } = deps;
  const now = deps.nowSeconds?.() ?? Math.floor(Date.now() / 1000);
  const stuck: LedgerRow[] = [];
  for (const wallet of deps.wallets) {
    for (const row of await ledger.inFlight(wallet)) {
      if (row.status === "pending" || row.status === "building")
        await enqueueBuild(deps.actions, row.key, row, Math.max(1, row.builds));
      else if (row.status === "built" || row.status === "sending")
        await enqueueSign(deps.sign, row.key, row, row.builds);
      else if (row.status === "expired") await enqueueBuild(deps.actions, row.key, row, row.builds + 1);
      logger.debug({ intent: row.key, status: row.status }, "housekeeping: intent re-enqueued");
      if (row.status === "sending" && now - row.updatedAt >= deps.stuckSendingSeconds) stuck.push(row);
    }
  }
  deps.onStuckSending?.(stuck.length);
  if (stuck.length === 0) return;
  const running = await intentsWithLiveJobs([deps.sign, ...(deps.confirm ? [deps.confirm] : [])]);
  for (const row of stuck) {
    const sendingSeconds = now - row.updatedAt;
    const resumed = !running.has(row.key);
    logger.warn(
      { intent: row.key, kind: row.kind, wallet: row.wallet, sendingSeconds, resumed },
      resumed
        ? "intent stuck in sending and no sign or confirm job runs it: resuming its recorded transaction"
        : "intent stuck in sending; its sign or confirm job is still waiting or running",
    );
    deps.notify?.({
      kind: "stuck",
      wallet: row.wallet,
      intent: row.key,
      intentKind: row.kind,
      sendingSeconds,
    });
    if (!resumed) continue;
    const jobId = `${jobIds.sign(row.key, row, row.builds)}-resume-${now}`;
    await deps.sign.add("sign", { intentKey: row.key, build: row.builds }, { jobId });
  }
}

async function intentsWithLiveJobs(queues: readonly Queue<SignJobData>[]): Promise<Set<string>> {
  const running = new Set<string>();
  for (const queue of queues)
    for (const job of await queue.getJobs([...LIVE_JOB_STATES]))
      if (job?.data?.intentKey) running.add(job.data.intentKey);
  return running;
}
