import { Queue, UnrecoverableError, Worker } from "bullmq";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Intent } from "../../../src/core/intent.js";
import { enqueueSign } from "../../../src/keeper/action-worker.js";
import { type HousekeepingDeps, runHousekeeping } from "../../../src/keeper/housekeeping.js";
import { Ledger } from "../../../src/keeper/ledger.js";
import { jobIds, QUEUES, type RedisKeys, redisKeys } from "../../../src/keeper/names.js";
import type { ActionJobData, SignJobData } from "../../../src/keeper/queues.js";
import { createMetrics } from "../../../src/ops/metrics.js";
import type { NotificationEvent } from "../../../src/ops/notifier.js";
import { captureLogger } from "../../helpers/capture-logger.js";
import { eventually } from "../../helpers/keeper-harness.js";
import { testRedis } from "../../helpers/redis.js";

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
  let ctx: Awaited<ReturnType<typeof testRedis>>;
  let keys: RedisKeys;
  let ledger: Ledger;
  let actions: Queue<ActionJobData>;
  let sign: Queue<SignJobData>;
  let clock: number;
  const logs = captureLogger("debug");

  /** Records the intent as the signer leaves it: built, then `sending` since `sinceSeconds` ago. */
  async function sendingSince(intent: Intent, sinceSeconds: number): Promise<void> {
    clock = Math.floor(Date.now() / 1000) - sinceSeconds;
    expect((await ledger.admit(intent)).admitted).toBe(true);
    await ledger.update(intent.key, { status: "sending", builds: 1, transaction: "AAAA" });
  }

  /** Runs the intents' sign jobs through a real worker that fails them for good; BullMQ keeps them. */
  async function failSignJobs(intents: Intent[]): Promise<void> {
    for (const intent of intents) await enqueueSign(sign, intent.key, 1, 1);
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
    ctx = await testRedis("housekeeping");
    keys = redisKeys(ctx.prefix, "live");
    clock = Math.floor(Date.now() / 1000);
    ledger = new Ledger(ctx.redis, keys, undefined, () => clock);
    actions = new Queue(QUEUES.actions, { connection: ctx.redis, prefix: keys.bullPrefix });
    sign = new Queue(QUEUES.sign, { connection: ctx.redis, prefix: keys.bullPrefix });
  });
  afterEach(async () => {
    await actions.close();
    await sign.close();
    await ctx.cleanup();
  });

  it("resumes an abandoned intent under a new job id, alerts it, and leaves the others be", async () => {
    await sendingSince(abandoned, 600);
    await sendingSince(recent, 60);
    await sendingSince(queued, 600);
    await failSignJobs([abandoned, recent]);
    await enqueueSign(sign, queued.key, 1, 1);
    const now = Math.floor(Date.now() / 1000);
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

    const originalId = (intent: Intent) => jobIds.sign(`${intent.key}-t1`, 1);
    const resumeId = `${originalId(abandoned)}-resume-${now}`;
    // The failed jobs stay failed; the abandoned intent has a new job, the recent one none.
    expect((await signJobs("failed")).map((j) => j.id).sort()).toEqual(
      [originalId(abandoned), originalId(recent)].sort(),
    );
    const byId = (a: { id?: string }, b: { id?: string }) => String(a.id).localeCompare(String(b.id));
    expect((await signJobs("waiting")).sort(byId)).toEqual(
      [
        { id: resumeId, data: { intentKey: abandoned.key, build: 1 } },
        { id: originalId(queued), data: { intentKey: queued.key, build: 1 } },
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
