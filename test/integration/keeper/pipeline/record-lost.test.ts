import { type Job, type Queue, Worker } from "bullmq";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Intent } from "../../../../src/core/intent.js";
import { QUEUES } from "../../../../src/keeper/names.js";
import { processAction } from "../../../../src/keeper/pipeline/action-worker.js";
import type { BuildApi } from "../../../../src/keeper/pipeline/build-transaction.js";
import { runHousekeeping } from "../../../../src/keeper/pipeline/housekeeping.js";
import { enqueueBuild, enqueueSign } from "../../../../src/keeper/queues/enqueue.js";
import type { ActionJobData, SignJobData } from "../../../../src/keeper/queues/queues.js";
import { eventually } from "../../../helpers/keeper-harness.js";
import { type LedgerAndQueues, ledgerAndQueues } from "../../../helpers/ledger-queues.js";

const wallet = "7YttLkHDoNj9wyDur5pM1ejNaAvT9X4eqaYcHQqtj2G5";
const claim: Intent = {
  kind: "claim",
  key: "claim-9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin",
  wallet,
  strategy: "auto-claim",
  positionPubkey: "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin",
};
const LIVE = ["waiting", "prioritized", "active", "delayed"] as const;

/** The service is never asked here: a build of a record that is gone stops at the ledger. */
const unreachable = async (): Promise<never> => {
  throw new Error("the service is not asked in this test");
};
const api: BuildApi = {
  claimPosition: unreachable,
  closePosition: unreachable,
  createTriggerOrder: unreachable,
  cancelTriggerOrder: unreachable,
  createRecurringOrder: unreachable,
  cancelRecurringOrder: unreachable,
};

/**
 * The ledger lost a record while the queues kept its jobs (on a Redis Cluster they live on other
 * masters, and a failover may lose the ledger's last writes). The intent admitted again is a new
 * record: its jobs must not take the lost one's ids, which BullMQ holds and would ignore an add under.
 */
describe("a ledger record lost while the queues keep its jobs", () => {
  let ctx: LedgerAndQueues;
  let actions: Queue<ActionJobData>;
  let sign: Queue<SignJobData>;

  beforeEach(async () => {
    ctx = await ledgerAndQueues("record-lost");
    actions = ctx.queue(QUEUES.actions);
    sign = ctx.queue(QUEUES.sign);
  });
  afterEach(async () => {
    await ctx.cleanup();
  });

  const loseTheRecord = () =>
    ctx.redis.del(ctx.keys.ledgerIntent(claim.key), ctx.keys.ledgerIndex, ctx.keys.ledgerInFlight(wallet));

  it("builds the intent admitted again under a job of its own; a repeated enqueue still adds nothing", async () => {
    const first = await ctx.ledger.admit(claim);
    const lost = await enqueueBuild(actions, claim.key, { tries: 1, recordId: first.recordId }, 1);
    await loseTheRecord();
    // The lost record's build runs and fails for good: BullMQ keeps it, under its id.
    const worker = new Worker<ActionJobData>(
      QUEUES.actions,
      (job: Job<ActionJobData>) =>
        processAction(job, { api, ledger: ctx.ledger, sign, logger: pino({ level: "silent" }) }),
      { connection: ctx.redis, prefix: ctx.keys.bullPrefix },
    );
    try {
      await eventually("the lost record's build to fail", async () =>
        (await lost.getState()) === "failed" ? true : undefined,
      );
    } finally {
      await worker.close();
    }
    expect((await actions.getJob(String(lost.id)))?.failedReason).toMatch(/no ledger record/);

    // A later poll admits the intent again: a first try of another record.
    const again = await ctx.ledger.admit(claim);
    expect(again).toEqual({ admitted: true, tries: 1, recordId: expect.any(String) });
    expect(again.recordId).not.toBe(first.recordId);
    const at = { tries: 1, recordId: again.recordId };
    const build = await enqueueBuild(actions, claim.key, at, 1);
    expect(build.id).not.toBe(lost.id);
    expect(await build.getState()).toBe("prioritized");

    // The same record's build enqueued again (a poll, housekeeping) adds nothing.
    expect((await enqueueBuild(actions, claim.key, at, 1)).id).toBe(build.id);
    await runHousekeeping({
      ledger: ctx.ledger,
      actions,
      sign,
      wallets: [wallet],
      stuckSendingSeconds: 600,
      logger: pino({ level: "silent" }),
    });
    expect((await actions.getJobs([...LIVE])).map((job) => job.id)).toEqual([build.id]);
  });

  it("gives the new record's sign job an id of its own; the same record's sign is queued once", async () => {
    const first = await ctx.ledger.admit(claim);
    const lost = await enqueueSign(sign, claim.key, { tries: 1, recordId: first.recordId }, 1);
    await loseTheRecord();
    const again = await ctx.ledger.admit(claim);
    const at = { tries: 1, recordId: again.recordId };
    const signJob = await enqueueSign(sign, claim.key, at, 1);
    expect(signJob.id).not.toBe(lost.id);
    expect((await enqueueSign(sign, claim.key, at, 1)).id).toBe(signJob.id);
    expect((await sign.getJobs([...LIVE])).map((job) => job.id).sort()).toEqual([lost.id, signJob.id].sort());
  });
});
