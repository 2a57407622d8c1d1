import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Intent } from "../../../../src/core/intent.js";
import { Ledger, notAdmittedReason } from "../../../../src/keeper/state/ledger.js";
import { type LedgerAndQueues, ledgerAndQueues } from "../../../helpers/ledger-queues.js";

const wallet = "7YttLkHDoNj9wyDur5pM1ejNaAvT9X4eqaYcHQqtj2G5";
const claim = (position: string): Intent => ({
  kind: "claim",
  key: `claim-${position}`,
  wallet,
  strategy: "auto-claim",
  positionPubkey: position,
});
const POSITION = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin";

describe("ledger", () => {
  let ctx: LedgerAndQueues;
  let now = 1_000;
  let ledger: Ledger;
  beforeEach(async () => {
    ctx = await ledgerAndQueues("ledger", {
      options: { maxTries: 2, retryAfterSeconds: 30 },
      nowSeconds: () => now,
    });
    now = 1_000;
    ({ ledger } = ctx);
  });
  afterEach(() => ctx.cleanup());

  it("admits an intent once while it is in flight and after it is done", async () => {
    expect(await ledger.admit(claim(POSITION))).toEqual({
      admitted: true,
      tries: 1,
      recordId: expect.any(String),
    });
    expect(await ledger.admit(claim(POSITION))).toEqual({
      admitted: false,
      status: "pending",
      owner: wallet,
    });
    expect((await ledger.inFlight(wallet)).map((r) => r.key)).toEqual([`claim-${POSITION}`]);
    await ledger.update(`claim-${POSITION}`, { status: "confirmed", signature: "sig1", slot: 7 });
    expect(await ledger.admit(claim(POSITION))).toEqual({
      admitted: false,
      status: "confirmed",
      owner: wallet,
    });
    expect(await ledger.inFlight(wallet)).toEqual([]);
    const row = await ledger.get(`claim-${POSITION}`);
    expect(row).toMatchObject({
      status: "confirmed",
      signature: "sig1",
      slot: 7,
      confirmedAt: 1_000,
      kind: "claim",
    });
  });

  it("moves a record along without reading it, yet never writes back a record that is gone", async () => {
    const key = `claim-${POSITION}`;
    await ledger.admit(claim(POSITION));
    await ledger.update(key, { status: "building", builds: 1 });
    // Another process's ledger never read the record: it learns the wallet from it once.
    const other = new Ledger(ctx.redis, ctx.keys, undefined, () => now);
    await other.update(key, { status: "confirmed", signature: "sig2" });
    expect(await ledger.inFlight(wallet)).toEqual([]);
    expect(await ledger.get(key)).toMatchObject({ status: "confirmed", builds: 1, signature: "sig2" });
    // A Redis that lost its data: the record is not written back in part, and the caller hears so.
    await ctx.redis.del(ctx.keys.ledgerIntent(key));
    await expect(ledger.update(key, { status: "failed", error: "late" })).rejects.toThrow(`no intent ${key}`);
    await expect(other.update(key, { status: "failed" })).rejects.toThrow(`no intent ${key}`);
    expect(await ctx.redis.exists(ctx.keys.ledgerIntent(key))).toBe(0);
  });

  it("defers a record that exists, counting each deferral; never writes back a record that is gone", async () => {
    const key = `claim-${POSITION}`;
    const { recordId } = await ledger.admit(claim(POSITION));
    await ledger.defer(key, "market_not_settled");
    expect(await ledger.get(key)).toMatchObject({
      status: "deferred",
      error: "market_not_settled",
      tries: 1,
    });
    expect(await ledger.inFlight(wallet)).toEqual([]);
    now += 31;
    expect(await ledger.admit(claim(POSITION))).toEqual({ admitted: true, tries: 2, recordId });
    await ledger.defer(key, "market_not_settled");
    expect(await ctx.redis.hget(ctx.keys.ledgerIntent(key), "deferrals")).toBe("2");
    now += 31;
    await ledger.admit(claim(POSITION));
    // Redis lost the record during the build (a restart without data, a failover): the deferral
    // neither writes back a stub holding only its count, nor passes for a move along.
    await ctx.redis.del(ctx.keys.ledgerIntent(key), ctx.keys.ledgerIndex, ctx.keys.ledgerInFlight(wallet));
    await expect(ledger.defer(key, "market_not_settled")).rejects.toThrow(`no intent ${key}`);
    const other = new Ledger(ctx.redis, ctx.keys, undefined, () => now);
    await expect(other.defer(key, "market_not_settled")).rejects.toThrow(`no intent ${key}`);
    expect(await ctx.redis.exists(ctx.keys.ledgerIntent(key))).toBe(0);
    // A later poll's claim is a whole new record: its key, wallet and kind, a first try.
    now += 31;
    expect(await ledger.admit(claim(POSITION))).toMatchObject({ admitted: true, tries: 1 });
    expect(await other.get(key)).toMatchObject({ key, wallet, kind: "claim", status: "pending", tries: 1 });
    expect(await ctx.redis.hget(ctx.keys.ledgerIntent(key), "deferrals")).toBeNull();
  });

  it("admits several intents in one call as one by one would, answers in order", async () => {
    const other = "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T";
    expect(await ledger.admit(claim(POSITION))).toEqual({
      admitted: true,
      tries: 1,
      recordId: expect.any(String),
    });
    await ledger.update(`claim-${POSITION}`, { status: "confirmed", signature: "sig1" });
    const answers = await ledger.admitMany([
      { intent: claim(POSITION), status: "pending" },
      { intent: claim(other), status: "left_to_service" },
    ]);
    expect(answers).toEqual([
      { admitted: false, status: "confirmed", owner: wallet },
      { admitted: true, tries: 1, recordId: expect.any(String) },
    ]);
    expect(await ledger.get(`claim-${other}`)).toMatchObject({ status: "left_to_service", tries: 1 });
    expect(await ledger.admitMany([{ intent: claim(other), status: "pending" }])).toEqual([
      { admitted: false, status: "left_to_service", owner: wallet },
    ]);
    expect(await ledger.admitMany([])).toEqual([]);
  });

  it("admitMany answers an admission Redis failed in its place; the others stand", async () => {
    const other = "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T";
    await ctx.redis.set(ctx.keys.ledgerIntent(`claim-${POSITION}`), "not a ledger record");
    const [failed, admitted] = await ledger.admitMany([
      { intent: claim(POSITION), status: "pending" },
      { intent: claim(other), status: "pending" },
    ]);
    expect(failed).toBeInstanceOf(Error);
    expect((failed as Error).message).toMatch(/WRONGTYPE/);
    expect(admitted).toEqual({ admitted: true, tries: 1, recordId: expect.any(String) });
    expect(await ledger.get(`claim-${other}`)).toMatchObject({ status: "pending" });
  });

  it("admits concurrent duplicates exactly once", async () => {
    const results = await Promise.all(Array.from({ length: 20 }, () => ledger.admit(claim(POSITION))));
    expect(results.filter((r) => r.admitted)).toHaveLength(1);
  });

  it("re-admits a failed intent after the cooldown, a bounded number of times", async () => {
    const { recordId } = await ledger.admit(claim(POSITION));
    await ledger.update(`claim-${POSITION}`, { status: "failed", error: "boom" });
    expect((await ledger.admit(claim(POSITION))).admitted).toBe(false);
    now += 31;
    // Another try of the same record: it keeps its id (see RecordTry).
    expect(await ledger.admit(claim(POSITION))).toEqual({ admitted: true, tries: 2, recordId });
    expect((await ledger.get(`claim-${POSITION}`))?.error).toBeUndefined();
    await ledger.update(`claim-${POSITION}`, { status: "failed" });
    now += 31;
    expect(await ledger.admit(claim(POSITION))).toEqual({ admitted: false, status: "failed", owner: wallet });
  });

  it("never re-admits a refused intent", async () => {
    await ledger.admit(claim(POSITION));
    await ledger.update(`claim-${POSITION}`, { status: "refused", reason: "fee_payer" });
    now += 10_000;
    expect(await ledger.admit(claim(POSITION))).toEqual({
      admitted: false,
      status: "refused",
      owner: wallet,
    });
  });

  it("records dry-run intents as done, outside the in-flight set", async () => {
    expect((await ledger.admit(claim(POSITION), "dry-run")).admitted).toBe(true);
    expect(await ledger.inFlight(wallet)).toEqual([]);
    expect((await ledger.list()).map((r) => r.status)).toEqual(["dry-run"]);
  });

  it("records a claim left to the service as done at once: outside the in-flight set, never re-admitted", async () => {
    const left: Intent = {
      kind: "claim",
      key: `claim-${POSITION}-left`,
      wallet,
      strategy: "auto-claim",
      positionPubkey: POSITION,
      leaveToService: true,
    };
    expect(await ledger.admit(left, "left_to_service")).toEqual({
      admitted: true,
      tries: 1,
      recordId: expect.any(String),
    });
    expect(await ledger.inFlight(wallet)).toEqual([]);
    now += 3_600;
    expect(await ledger.admit(left, "left_to_service")).toEqual({
      admitted: false,
      status: "left_to_service",
      owner: wallet,
    });
    expect(notAdmittedReason("left_to_service", false)).toBe("done");
    // The claim's own key stays free.
    expect((await ledger.admit(claim(POSITION))).admitted).toBe(true);
  });

  it("ends a claim settled: done, out of flight, not re-admitted, not for keeper retry", async () => {
    await ledger.admit(claim(POSITION));
    await ledger.update(`claim-${POSITION}`, { status: "settled", error: "no claim required" });
    expect(await ledger.inFlight(wallet)).toEqual([]);
    now += 3_600;
    expect(await ledger.admit(claim(POSITION))).toEqual({
      admitted: false,
      status: "settled",
      owner: wallet,
    });
    expect(notAdmittedReason("settled", false)).toBe("done");
    const row = await ledger.get(`claim-${POSITION}`);
    expect(await ledger.readmit(row as NonNullable<typeof row>)).toEqual({
      admitted: false,
      status: "settled",
    });
  });
});
