import type { Queue } from "bullmq";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Intent } from "../../../../src/core/intent.js";
import { jobIds, QUEUES, type RedisKeys } from "../../../../src/keeper/names.js";
import { retryIntent } from "../../../../src/keeper/operator/retry-intent.js";
import type { ActionJobData } from "../../../../src/keeper/queues/queues.js";
import type { Ledger } from "../../../../src/keeper/state/ledger.js";
import type { RedisAttemptStore } from "../../../../src/signer/attempt-store.js";
import { type LedgerAndQueues, ledgerAndQueues } from "../../../helpers/ledger-queues.js";

const wallet = "7YttLkHDoNj9wyDur5pM1ejNaAvT9X4eqaYcHQqtj2G5";
const POSITION = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin";
const KEY = `claim-${POSITION}`;
const claim: Intent = {
  kind: "claim",
  key: KEY,
  wallet,
  strategy: "auto-claim",
  positionPubkey: POSITION,
  reason: "winning position",
};
const signed = (attempt: number) => ({
  attempt,
  signature: `sig-${attempt}`,
  lastValidBlockHeight: 100,
  recentBlockhash: "hash",
  signedTransaction: "AAAA",
});

/** `keeper retry`'s work on real Redis and a real BullMQ queue: the ledger, the attempt record, the job. */
describe("retryIntent", () => {
  let ctx: LedgerAndQueues;
  let keys: RedisKeys;
  let ledger: Ledger;
  let attempts: RedisAttemptStore;
  let actions: Queue<ActionJobData>;
  const retry = (key = KEY) => retryIntent({ ledger, attempts, actions }, key);
  /** Everything under the test's prefix, to show a refusal changed nothing. */
  async function snapshot(): Promise<Record<string, unknown>> {
    const out: Record<string, unknown> = {};
    for (const key of (await ctx.redis.keys(`${ctx.prefix}*`)).sort()) {
      const type = await ctx.redis.type(key);
      out[key] =
        type === "hash"
          ? await ctx.redis.hgetall(key)
          : type === "set"
            ? (await ctx.redis.smembers(key)).sort()
            : type === "zset"
              ? await ctx.redis.zrange(key, "0", "-1")
              : type;
    }
    return out;
  }

  beforeEach(async () => {
    ctx = await ledgerAndQueues("retry-intent");
    ({ keys, ledger, attempts } = ctx);
    actions = ctx.queue(QUEUES.actions);
    // The queue writes its own metadata once ready: not part of what a retry changes.
    await actions.waitUntilReady();
    await actions.getJobCounts();
  });
  afterEach(async () => {
    await ctx.cleanup();
  });

  it("admits a refused claim again as a new try, forgets the refused attempt and queues its build", async () => {
    await ledger.admit(claim);
    await ledger.update(KEY, { status: "building", builds: 1 });
    await ledger.update(KEY, { status: "built", transaction: "AAAA", lastValidBlockHeight: 90 });
    await attempts.recordRefused(KEY, 1, "priority_fee_too_high", "priority fee 9 lamports, ceiling 0");
    await ledger.update(KEY, {
      status: "refused",
      reason: "priority_fee_too_high",
      error: "priority fee 9 lamports, ceiling 0",
    });
    expect(await ledger.inFlight(wallet)).toEqual([]);

    const result = await retry();

    expect(result).toMatchObject({
      outcome: "retried",
      resumesSent: false,
      previous: {
        status: "refused",
        reason: "priority_fee_too_high",
        error: "priority fee 9 lamports, ceiling 0",
        tries: 1,
      },
      row: { key: KEY, status: "pending", tries: 2, builds: 0, reason: "winning position" },
    });
    const row = await ledger.get(KEY);
    expect(row?.error).toBeUndefined();
    expect(row?.transaction).toBeUndefined();
    expect(row?.lastValidBlockHeight).toBeUndefined();
    expect((await ledger.inFlight(wallet)).map((r) => r.key)).toEqual([KEY]);
    expect(await attempts.get(KEY)).toBeUndefined();
    // Another try of the same record: its id is kept, the try in the job id is new.
    expect(row?.recordId).toMatch(/^[0-9a-f]{12}$/);
    const job = await actions.getJob(jobIds.action(KEY, { tries: 2, recordId: row?.recordId }, 1));
    expect(job?.data).toEqual({ intentKey: KEY, build: 1 });
  });

  it("admits a failed intent again whatever its tries, and forgets its failed attempt", async () => {
    await ledger.admit(claim);
    await attempts.recordSigned(KEY, signed(1));
    await attempts.finish(KEY, "sig-1", { status: "failed", error: "custom program error 0x1" });
    await ledger.update(KEY, { status: "failed", signature: "sig-1", error: "custom program error 0x1" });
    await ctx.redis.hset(keys.ledgerIntent(KEY), "tries", "3");

    expect(await retry()).toMatchObject({ outcome: "retried", row: { status: "pending", tries: 4 } });
    expect((await ledger.get(KEY))?.signature).toBeUndefined();
    expect(await attempts.get(KEY)).toBeUndefined();
    const recordId = (await ledger.get(KEY))?.recordId;
    expect(await actions.getJob(jobIds.action(KEY, { tries: 4, recordId }, 1))).toBeDefined();
  });

  it("refuses an unknown key and writes nothing", async () => {
    const before = await snapshot();
    expect(await retry("claim-nothing")).toEqual({ outcome: "unknown" });
    expect(await snapshot()).toEqual(before);
    expect(await actions.getJobCounts("waiting", "prioritized", "delayed")).toEqual({
      waiting: 0,
      prioritized: 0,
      delayed: 0,
    });
  });

  it.each([
    ["pending", []],
    ["sending", ["building", "built", "sending"]],
    ["expired", ["building", "built", "sending", "expired"]],
    ["confirmed", ["building", "built", "sending", "confirmed"]],
  ] as const)("refuses an intent that is %s and changes nothing", async (status, path) => {
    await ledger.admit(claim);
    for (const step of path) await ledger.update(KEY, { status: step });
    const before = await snapshot();
    expect(await retry()).toEqual({ outcome: "not_retryable", status });
    expect(await snapshot()).toEqual(before);
    expect(await actions.getJobCounts("waiting", "prioritized", "delayed")).toEqual({
      waiting: 0,
      prioritized: 0,
      delayed: 0,
    });
  });

  it("admits a failed intent whose transaction was sent, keeping it for the signer to resume", async () => {
    // A sign job that ran out of attempts while the RPC was down fails its intent, its send on record.
    await ledger.admit(claim);
    await attempts.recordSigned(KEY, signed(1));
    await ledger.update(KEY, { status: "failed", error: "getSignatureStatuses: fetch failed" });
    expect(await retry()).toMatchObject({
      outcome: "retried",
      resumesSent: true,
      row: { status: "pending", tries: 2 },
    });
    expect(await attempts.get(KEY)).toMatchObject({ attempt: 1, status: "sent", signature: "sig-1" });
  });

  it("refuses a failed intent whose signer recorded it confirmed, and changes nothing", async () => {
    await ledger.admit(claim);
    await attempts.recordSigned(KEY, signed(1));
    await attempts.finish(KEY, "sig-1", { status: "confirmed", slot: 5 });
    await ledger.update(KEY, { status: "failed", error: "sign job stalled" });
    const before = await snapshot();
    expect(await retry()).toEqual({ outcome: "confirmed_on_record" });
    expect(await snapshot()).toEqual(before);
  });

  it("admits once when retried twice over", async () => {
    await ledger.admit(claim);
    await ledger.update(KEY, { status: "refused", reason: "outflow_sol" });
    const results = await Promise.all([retry(), retry()]);
    expect(results.map((r) => r.outcome).sort()).toEqual(["not_retryable", "retried"]);
    expect(await ledger.get(KEY)).toMatchObject({ status: "pending", tries: 2 });
  });
});
