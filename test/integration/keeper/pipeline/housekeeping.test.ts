import { type Queue, UnrecoverableError, Worker } from "bullmq";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Intent } from "../../../../src/core/intent.js";
import { jobIds, QUEUES, type RecordTry, type RedisKeys } from "../../../../src/keeper/names.js";
import { PauseSwitch } from "../../../../src/keeper/operator/pause.js";
import { type HousekeepingDeps, runHousekeeping } from "../../../../src/keeper/pipeline/housekeeping.js";
import { processSign } from "../../../../src/keeper/pipeline/sign-worker.js";
import { enqueueSign } from "../../../../src/keeper/queues/enqueue.js";
import type { ActionJobData, ConfirmJobData, SignJobData } from "../../../../src/keeper/queues/queues.js";
import type { Ledger, LedgerRow } from "../../../../src/keeper/state/ledger.js";
import { createMetrics } from "../../../../src/ops/metrics.js";
import type { NotificationEvent } from "../../../../src/ops/notifier.js";
import { signAndSend } from "../../../../src/signer/sign-transaction.js";
import { captureLogger } from "../../../helpers/capture-logger.js";
import { eventually } from "../../../helpers/keeper-harness.js";
import { type LedgerAndQueues, ledgerAndQueues } from "../../../helpers/ledger-queues.js";
import { watchDepsFor } from "../../../helpers/watch-deps.js";
import { type SignerEnv, startSignerEnv } from "../../signer/env.js";
import { toBase64 } from "../../signer/tx-builders.js";

const wallet = "7YttLkHDoNj9wyDur5pM1ejNaAvT9X4eqaYcHQqtj2G5";
const STUCK_SECONDS = 300;
const claim = (position: string): Intent => ({
  kind: "claim",
  key: `claim-${position}`,
  wallet,
  strategy: "auto-claim",
  positionPubkey: position,
});
/** Sending for ten minutes; its sign job failed and is kept, and the failure never reached the ledger. */
const abandoned = claim("9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin");
/** Sending for one minute, its job failed too: not stuck yet. */
const recent = claim("4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T");
/** Sending for ten minutes, its sign job still waits in the queue (a busy signer). */
const queued = claim("So11111111111111111111111111111111111111112");

/** Housekeeping on real Redis and real BullMQ queues, called directly rather than by its cron. */
describe("housekeeping: intents stuck in sending", () => {
  let ctx: LedgerAndQueues;
  let keys: RedisKeys;
  let ledger: Ledger;
  let actions: Queue<ActionJobData>;
  let sign: Queue<SignJobData>;
  let clock: number;
  /** The test's "now", fixed: a busy machine must not turn 600 seconds into 601. */
  let start: number;
  const logs = captureLogger("debug");

  /** Records the intent as the signer leaves it: built, then `sending` since `sinceSeconds` ago. */
  async function sendingSince(intent: Intent, sinceSeconds: number): Promise<void> {
    clock = start - sinceSeconds;
    expect((await ledger.admit(intent)).admitted).toBe(true);
    await ledger.update(intent.key, { status: "sending", builds: 1, transaction: "AAAA" });
  }

  /** The first try of the intent's ledger record, as its job ids name it. */
  async function firstTry(intent: Intent): Promise<RecordTry> {
    return { tries: 1, recordId: (await ledger.get(intent.key))?.recordId };
  }

  /** Runs the intents' sign jobs through a real worker that fails them for good; BullMQ keeps them. */
  async function failSignJobs(intents: Intent[]): Promise<void> {
    for (const intent of intents) await enqueueSign(sign, intent.key, await firstTry(intent), 1);
    const worker = new Worker<SignJobData>(
      QUEUES.sign,
      async () => {
        throw new UnrecoverableError("RPC away");
      },
      { connection: ctx.redis, prefix: keys.bullPrefix },
    );
    await eventually("the sign jobs to fail", async () =>
      (await sign.getJobCounts("failed")).failed === intents.length ? true : undefined,
    );
    await worker.close();
  }

  async function signJobs(state: "waiting" | "failed") {
    return (await sign.getJobs([state])).map((job) => ({ id: job.id, data: job.data }));
  }

  beforeEach(async () => {
    ctx = await ledgerAndQueues("housekeeping", { nowSeconds: () => clock });
    ({ keys, ledger } = ctx);
    start = Math.floor(Date.now() / 1000);
    clock = start;
    actions = ctx.queue(QUEUES.actions);
    sign = ctx.queue(QUEUES.sign);
  });
  afterEach(async () => {
    await ctx.cleanup();
  });

  it("resumes an abandoned intent under a new job id, alerts it, and leaves the others be", async () => {
    await sendingSince(abandoned, 600);
    await sendingSince(recent, 60);
    await sendingSince(queued, 600);
    await failSignJobs([abandoned, recent]);
    await enqueueSign(sign, queued.key, await firstTry(queued), 1);
    const now = start;
    const metrics = createMetrics();
    const notified: NotificationEvent[] = [];
    const deps: HousekeepingDeps = {
      ledger,
      actions,
      sign,
      wallets: [wallet],
      stuckSendingSeconds: STUCK_SECONDS,
      logger: logs.logger,
      notify: (event) => notified.push(event),
      onStuckSending: (count) => metrics.setIntentsStuckSending(count),
      nowSeconds: () => now,
    };

    await runHousekeeping(deps);

    const originalId = async (intent: Intent) => jobIds.sign(intent.key, await firstTry(intent), 1);
    const resumeId = `${await originalId(abandoned)}-resume-${now}`;
    // The failed jobs stay failed; the abandoned intent has a new job, the recent one none.
    expect((await signJobs("failed")).map((j) => j.id).sort()).toEqual(
      [await originalId(abandoned), await originalId(recent)].sort(),
    );
    const byId = (a: { id?: string }, b: { id?: string }) => String(a.id).localeCompare(String(b.id));
    expect((await signJobs("waiting")).sort(byId)).toEqual(
      [
        { id: resumeId, data: { intentKey: abandoned.key, build: 1 } },
        { id: await originalId(queued), data: { intentKey: queued.key, build: 1 } },
      ].sort(byId),
    );
    expect(await metrics.registry.getSingleMetricAsString("keeper_intents_stuck_sending")).toMatch(
      /^keeper_intents_stuck_sending 2$/m,
    );
    const alerts = logs
      .lines()
      .filter((line) => line.level === "warn" && String(line.msg).startsWith("intent stuck in sending"))
      .map(({ intent, kind, wallet, sendingSeconds, resumed }) => ({
        intent,
        kind,
        wallet,
        sendingSeconds,
        resumed,
      }));
    const byIntent = (a: { intent: unknown }, b: { intent: unknown }) =>
      String(a.intent).localeCompare(String(b.intent));
    expect(alerts.sort(byIntent)).toEqual(
      [
        { intent: abandoned.key, kind: "claim", wallet, sendingSeconds: 600, resumed: true },
        { intent: queued.key, kind: "claim", wallet, sendingSeconds: 600, resumed: false },
      ].sort(byIntent),
    );
    expect(notified.map((e) => e.kind === "stuck" && e.intent).sort()).toEqual(
      [abandoned.key, queued.key].sort(),
    );
    expect((await ledger.get(recent.key))?.status).toBe("sending");

    // A later run finds the resume job waiting: nothing is added twice.
    await runHousekeeping({ ...deps, nowSeconds: () => now + 60 });
    expect((await signJobs("waiting")).filter((j) => j.data.intentKey === abandoned.key)).toHaveLength(1);
  });

  it("leaves a stuck intent whose sent transaction a watch (confirm job) still carries: alerted, not resumed", async () => {
    await sendingSince(abandoned, 600);
    await failSignJobs([abandoned]);
    const confirm = ctx.queue<ConfirmJobData>(QUEUES.confirm);
    await confirm.add("confirm", { intentKey: abandoned.key, build: 1 }, { jobId: "watch-of-abandoned" });
    const deps: HousekeepingDeps = {
      ledger,
      actions,
      sign,
      confirm,
      wallets: [wallet],
      stuckSendingSeconds: STUCK_SECONDS,
      logger: logs.logger,
      nowSeconds: () => start,
    };
    await runHousekeeping(deps);
    expect(await signJobs("waiting")).toEqual([]);

    // Once the watch is gone (lost with its process), the next run resumes the intent.
    await confirm.remove("watch-of-abandoned");
    await runHousekeeping(deps);
    expect((await signJobs("waiting")).map((j) => j.data)).toEqual([{ intentKey: abandoned.key, build: 1 }]);
  });

  it("sets the gauge back to 0 when nothing is stuck", async () => {
    await sendingSince(recent, 60);
    await failSignJobs([recent]);
    const metrics = createMetrics();
    metrics.setIntentsStuckSending(3);
    await runHousekeeping({
      ledger,
      actions,
      sign,
      wallets: [wallet],
      stuckSendingSeconds: STUCK_SECONDS,
      logger: logs.logger,
      onStuckSending: (count) => metrics.setIntentsStuckSending(count),
    });
    expect(await metrics.registry.getSingleMetricAsString("keeper_intents_stuck_sending")).toMatch(
      /^keeper_intents_stuck_sending 0$/m,
    );
    expect(await signJobs("waiting")).toEqual([]);
  });
});

/**
 * The whole path on the local chain: a signer run records and sends a claim that the chain drops, then
 * dies; its job fails and is kept, the ledger still says `sending`. Housekeeping's new job, run by a
 * real worker with the real signer, resumes the recorded transaction: the same signature lands once.
 */
describe("housekeeping: a resumed intent lands its recorded transaction", () => {
  const PAYOUT = 3_000_000n;
  let env: SignerEnv;
  let ctx: LedgerAndQueues;
  const logs = captureLogger("debug");

  beforeAll(async () => {
    // 400 ms slots: the blockhash lives a minute, longer than this test takes on a busy machine.
    env = await startSignerEnv("housekeeping-resume", { slotMs: 400 });
    ctx = await ledgerAndQueues("housekeeping-resume");
  });
  afterAll(async () => {
    await ctx?.cleanup();
    await env?.close();
  });

  it("signs once, and the resumed job confirms the first signature", async () => {
    const { keys, ledger } = ctx;
    const actions = ctx.queue<ActionJobData>(QUEUES.actions);
    const sign = ctx.queue<SignJobData>(QUEUES.sign);
    const intent = env.claimIntent();
    const bh = await env.connection.getLatestBlockhash("confirmed");
    const transaction = toBase64(env.claimTransaction(PAYOUT, bh.blockhash));
    const admitted = await ledger.admit(intent);
    await ledger.update(intent.key, {
      status: "built",
      builds: 1,
      transaction,
      lastValidBlockHeight: bh.lastValidBlockHeight,
    });
    const usdcBefore = env.chain.tokenAccount(env.walletUsdc)?.amount ?? 0n;
    const signer = (signal?: AbortSignal) => (row: LedgerRow) =>
      signAndSend({
        intent,
        transactionBase64: row.transaction ?? "",
        lastValidBlockHeight: row.lastValidBlockHeight ?? 0,
        wallets: env.wallets,
        connection: env.connection,
        policyConfig: env.policy,
        attempts: env.attempts,
        logger: logs.logger,
        send: { rebroadcastIntervalMs: 150, pollIntervalMs: 50 },
        ...(signal ? { signal } : {}),
      });
    const pause = new PauseSwitch(ctx.redis, keys);
    const deps = { ledger, actions, pause, maxRebuilds: 1, logger: logs.logger };
    const watching = (signal?: AbortSignal) =>
      watchDepsFor({
        connection: env.connection,
        attempts: env.attempts,
        logger: logs.logger,
        send: { rebroadcastIntervalMs: 150, pollIntervalMs: 50 },
        ...(signal ? { signal } : {}),
      });

    // The first run: every send is dropped; once the attempt is recorded, the process "dies".
    env.chain.dropFirstSends(1_000_000);
    const dies = new AbortController();
    const firstWorker = new Worker<SignJobData>(
      QUEUES.sign,
      (job) => processSign(job, { ...deps, ...watching(dies.signal), signAndSubmit: signer(dies.signal) }),
      { connection: ctx.redis, prefix: keys.bullPrefix },
    );
    await enqueueSign(sign, intent.key, { tries: 1, recordId: admitted.recordId }, 1);
    const recorded = await eventually("the attempt to be recorded", async () => {
      const attempt = await env.attempts.get(intent.key);
      return attempt?.status === "sent" ? attempt : undefined;
    });
    dies.abort(new Error("process killed"));
    await eventually("the first sign job to fail", async () =>
      (await sign.getJobCounts("failed")).failed === 1 ? true : undefined,
    );
    await firstWorker.close();
    // The failure never reached the ledger (Redis was away when the worker heard of it).
    await ledger.update(intent.key, { status: "sending" });
    env.chain.faults.reset();

    await runHousekeeping({
      ledger,
      actions,
      sign,
      wallets: [intent.wallet],
      stuckSendingSeconds: 300,
      logger: logs.logger,
      nowSeconds: () => Math.floor(Date.now() / 1000) + 600,
    });
    const resumer = new Worker<SignJobData>(
      QUEUES.sign,
      (job) => processSign(job, { ...deps, ...watching(), signAndSubmit: signer() }),
      { connection: ctx.redis, prefix: keys.bullPrefix },
    );
    const row = await eventually("the intent to be confirmed", async () => {
      const current = await ledger.get(intent.key);
      return current?.status === "confirmed" ? current : undefined;
    });
    await resumer.close();

    expect(row.signature).toBe(recorded.signature);
    expect(env.chain.tokenAccount(env.walletUsdc)?.amount).toBe(usdcBefore + PAYOUT);
    expect((await env.attempts.get(intent.key))?.attempt).toBe(1);
    expect(logs.lines().some((line) => line.msg === "resuming a recorded transaction")).toBe(true);
  });
});
