import { setMaxListeners } from "node:events";
import { Worker } from "bullmq";
import pLimit from "p-limit";
import { withBatchedReads } from "../chain/batched-reads.js";
import { createJsonRpc } from "../chain/json-rpc.js";
import { withLeanReads } from "../chain/lean-reads.js";
import { withLeanSendAndWatch } from "../chain/lean-send-and-watch.js";
import { ConfigError } from "../core/errors.js";
import { QUEUES, type QueueName } from "../keeper/names.js";
import { processConfirm } from "../keeper/pipeline/confirm-loop.js";
import { type OutcomeDeps, processSign, type WatchDeps, WatchSlots } from "../keeper/pipeline/sign-worker.js";
import { enqueueConfirm } from "../keeper/queues/enqueue.js";
import { RedisAttemptStore, sentAttemptOf } from "../signer/attempt-store.js";
import { signerGuardFor } from "../signer/guard-from-config.js";
import { keySourcesOf, loadWallets, type Wallets } from "../signer/keys.js";
import { watchAttempt } from "../signer/sign-transaction.js";
import { createSubmitAdapter, predictionResubmitFor } from "../signer/submit-adapter.js";
import { outcomeEvents } from "./outcome-events.js";
import type { RunningRole, SharedInfrastructure } from "./shared-infrastructure.js";
import { closeWorkers, failIntentWhenExhausted, trackWorker, workerOptionsFor } from "./workers.js";

/**
 * The signer role, the only one with keys: sign jobs (check, sign, record, send once) and the confirm
 * loop (sent attempts to their outcome). Its health loop is the workers' heartbeat in start-keeper.
 */
export async function startSignerRole(
  shared: SharedInfrastructure,
  keysInMemory?: Wallets,
): Promise<RunningRole> {
  const { config, redis, keys, logger, metrics, queues, connection } = shared;
  const keyring = keysInMemory ?? (await loadWallets(keySourcesOf(config.wallets), { logger }));
  for (const wallet of shared.wallets)
    if (!keyring.has(wallet)) throw new ConfigError([`wallets: no key loaded for ${wallet}`]);
  const attempts = new RedisAttemptStore(redis, keys.attemptsPrefix);
  // The signer's limits and swap floor: from this process's config file and its own service reads.
  const guard = await signerGuardFor(
    config,
    shared.clients.over(shared.budget.targeted).tokens.search,
    redis,
    keys.signerSpent,
  );
  const send = {
    commitment: config.rpc.commitment,
    rebroadcastIntervalMs: config.signer.rebroadcastIntervalMs,
    alsoSendTo: shared.alsoSendTo,
  };
  // What an outcome goes through, whether the sign job reached it or the confirm loop did.
  const outcomeDeps: OutcomeDeps = {
    ledger: shared.ledger,
    actions: queues.actions,
    maxRebuilds: config.signer.maxRebuilds,
    logger,
    protections: shared.protections,
    events: outcomeEvents(metrics, shared.notifier),
  };
  // Execute endpoints go to the configured service (its base URL and a fixed path), never elsewhere.
  const execute = {
    trigger: shared.clients.targeted.trigger.execute,
    recurring: shared.clients.targeted.recurring.execute,
    prediction: shared.clients.targeted.prediction.execute,
  };
  const onExecuteReport = (outcome: "success" | "failed" | "error") =>
    metrics.predictionExecutes.inc({ outcome });
  // Hundreds of transactions signed and watched at once after a burst of claims share their reads of
  // the block height, a blockhash's validity and the statuses (batched-reads.ts); the checks' account
  // reads and simulations, the send, and the confirm loop's statuses and heights go as plain JSON-RPC,
  // their answers checked by hand (lean-reads.ts, lean-send-and-watch.ts).
  const rpc = createJsonRpc(config.rpc.url);
  const chainReads = withBatchedReads(withLeanSendAndWatch(withLeanReads(connection, rpc), rpc));
  const signAndSubmit = createSubmitAdapter({
    config,
    execute,
    onExecuteReport,
    guard,
    wallets: keyring,
    connection: chainReads,
    attempts,
    logger,
    send,
  });
  const workerOptions = (queue: QueueName) => workerOptionsFor(config, redis, keys, queue);
  // A stop does not wait out the watches (up to a blockhash's lifetime): they are cut short and their
  // jobs retried, by another signer process or at the next start, which watch the recorded bytes.
  const stopping = new AbortController();
  // Every watch in flight waits on this signal (its pause between polls, its retried reads): up to
  // watchConcurrency in sign jobs and as many in the confirm queue's is the design, not a leak, so
  // Node's warning at 10 is lifted.
  setMaxListeners((config.signer.concurrency + 2 * config.signer.watchConcurrency) * 4, stopping.signal);
  // The confirm loop: a sent attempt to its outcome (rebroadcast, status, expiry). It needs no key,
  // only the RPC and the attempt records.
  const watchDeps: WatchDeps = {
    watch: (intentKey, resumed, row, record) => {
      const resubmit = predictionResubmitFor(row, { config, execute, onExecuteReport });
      return watchAttempt({
        intentKey,
        resumed,
        ...(record ? { record } : {}),
        ...(resubmit ? { resubmit } : {}),
        connection: chainReads,
        attempts,
        logger,
        send,
        signal: stopping.signal,
      });
    },
    onWatching: (change) => metrics.attemptsWatched.inc(change),
  };
  // A sign job holds a signing slot (signer.concurrency) from its checks to the first send, then
  // watches what it sent in the same job, outside the slot, in one of signer.watchConcurrency watch
  // slots: a dropped transaction never holds a signing slot, and a claim costs one job, not two. BullMQ
  // runs both bounds' worth of sign jobs, so the watches never take the signing slots' jobs; with every
  // watch slot taken, a sent attempt goes to the confirm queue and its job ends.
  const signingSlots = pLimit(config.signer.concurrency);
  const watchSlots = new WatchSlots(config.signer.watchConcurrency);
  const signWorker = new Worker(
    QUEUES.sign,
    async (job, token) =>
      processSign(
        job,
        {
          ...outcomeDeps,
          ...watchDeps,
          pause: shared.pause,
          signAndSubmit: (row) => signingSlots(() => shared.budget.acting(() => signAndSubmit(row))),
          sentAttempt: (intentKey) => sentAttemptOf(attempts, intentKey),
          watchSlots,
          handOff: (intentKey, build, attempt, signJobId) =>
            enqueueConfirm(queues.confirm, intentKey, build, attempt, signJobId),
        },
        token,
      ),
    {
      ...workerOptions(QUEUES.sign),
      concurrency: config.signer.concurrency + config.signer.watchConcurrency,
    },
  );
  // The confirm queue: attempts sent while every watch slot was taken (and those an earlier version,
  // which handed over every attempt, left queued).
  const confirmWorker = new Worker(
    QUEUES.confirm,
    async (job) => processConfirm(job, { ...outcomeDeps, ...watchDeps }),
    { ...workerOptions(QUEUES.confirm), concurrency: config.signer.watchConcurrency },
  );
  // A watch that ran out of attempts (an RPC outage) fails its intent as a sign job does: the next
  // try resumes the recorded attempt, never signs a second one.
  failIntentWhenExhausted(confirmWorker, shared.ledger);
  trackWorker(confirmWorker, QUEUES.confirm, metrics, logger);
  // A sign job that ran out of attempts (an RPC outage, a wallet that kept changing) fails its
  // intent instead of leaving it `sending`: the next poll admits it again, and a transaction that
  // was already sent is then resumed from its attempt record, never signed anew.
  failIntentWhenExhausted(signWorker, shared.ledger);
  trackWorker(signWorker, QUEUES.sign, metrics, logger);
  const workers = [signWorker, confirmWorker];
  return {
    workers,
    stop: async () => {
      stopping.abort(new Error("keeper stopping: the watch resumes from the attempt record"));
      await closeWorkers(workers);
    },
  };
}
