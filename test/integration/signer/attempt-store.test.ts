import { Redis } from "ioredis";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RedisAttemptStore } from "../../../src/signer/attempt-store.js";
import { REDIS_URL, testRedis } from "../../helpers/redis.js";

let env: Awaited<ReturnType<typeof testRedis>>;
let store: RedisAttemptStore;
let clock = 1_000;

beforeEach(async () => {
  env = await testRedis("attempts");
  clock = 1_000;
  store = new RedisAttemptStore(env.redis, `${env.prefix}:`, () => clock++);
});
afterEach(async () => {
  await env.cleanup();
});

const signed = (attempt: number, signature: string) => ({
  attempt,
  signature,
  lastValidBlockHeight: 500 + attempt,
  recentBlockhash: `hash${attempt}`,
  signedTransaction: `dHg${attempt}`,
});

describe("RedisAttemptStore", () => {
  it("records a signed attempt before sending, then its outcome", async () => {
    expect(await store.get("claim-a")).toBeUndefined();
    expect(await store.recordSigned("claim-a", signed(1, "sig1"))).toBe(true);
    expect(await store.get("claim-a")).toMatchObject({
      intentKey: "claim-a",
      attempt: 1,
      status: "sent",
      signature: "sig1",
      lastValidBlockHeight: 501,
      recentBlockhash: "hash1",
      signedTransaction: "dHg1",
    });
    await store.finish("claim-a", "sig1", { status: "confirmed", slot: 77 });
    expect(await store.get("claim-a")).toMatchObject({ status: "confirmed", slot: 77, attempt: 1 });
  });

  it("forgets a finished attempt for keeper retry, never one in flight or confirmed", async () => {
    expect(await store.clearFinished("claim-none")).toEqual({ cleared: false });
    await store.recordSigned("claim-e", signed(1, "e1"));
    await store.finish("claim-e", "e1", { status: "expired" });
    await store.recordRefused("claim-r", 4, "outflow_sol", "drains");
    expect(await store.clearFinished("claim-e")).toEqual({ cleared: true, status: "expired" });
    expect(await store.clearFinished("claim-r")).toEqual({ cleared: true, status: "refused" });
    expect(await store.get("claim-e")).toBeUndefined();
    // The next try starts at attempt 1 again.
    expect(await store.recordSigned("claim-r", signed(1, "r1"))).toBe(true);
    expect(await store.clearFinished("claim-r")).toEqual({ cleared: false, status: "sent" });
    await store.finish("claim-r", "r1", { status: "confirmed", slot: 9 });
    expect(await store.clearFinished("claim-r")).toEqual({ cleared: false, status: "confirmed" });
    expect(await store.get("claim-r")).toMatchObject({ attempt: 1, status: "confirmed", signature: "r1" });
  });

  it("lets only one run claim an attempt, and none while one is in flight or confirmed", async () => {
    const results = await Promise.all([
      store.recordSigned("claim-b", signed(1, "sigA")),
      store.recordSigned("claim-b", signed(1, "sigB")),
    ]);
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await store.recordSigned("claim-b", signed(2, "sig2"))).toBe(false);
    const winner = (await store.get("claim-b"))?.signature as string;
    await store.finish("claim-b", winner, { status: "confirmed", slot: 1 });
    expect(await store.recordSigned("claim-b", signed(2, "sig2"))).toBe(false);
  });

  it("opens the next attempt after an expired one, and a late finish of the old one changes nothing", async () => {
    await store.recordSigned("claim-c", signed(1, "old"));
    await store.finish("claim-c", "old", { status: "expired" });
    expect(await store.recordSigned("claim-c", signed(3, "skip"))).toBe(false);
    expect(await store.recordSigned("claim-c", signed(2, "new"))).toBe(true);
    await store.finish("claim-c", "old", { status: "failed", error: "late" });
    expect(await store.get("claim-c")).toMatchObject({ attempt: 2, status: "sent", signature: "new" });
  });

  it("records a refusal without a signature", async () => {
    await store.recordRefused("claim-d", 1, "fee_payer", "fee payer X is not Y");
    const record = await store.get("claim-d");
    expect(record).toMatchObject({
      attempt: 1,
      status: "refused",
      reason: "fee_payer",
      error: "fee payer X is not Y",
    });
    expect(record?.signature).toBeUndefined();
    expect(await store.recordSigned("claim-d", signed(2, "s2"))).toBe(true);
  });

  it("keeps everything under its prefix, one hash per intent", async () => {
    await store.recordSigned("claim-e", signed(1, "s"));
    const keys = await env.redis.keys(`${env.prefix}*`);
    expect(keys).toEqual([`${env.prefix}:attempt:claim-e`]);
    expect(await env.redis.type(keys[0] as string)).toBe("hash");
  });

  it("reads a record back exactly, through another connection (as after a crash)", async () => {
    await store.recordSigned("claim-x", signed(1, "sig1")); // clock 1000
    await store.finish("claim-x", "sig1", {
      status: "failed",
      error: "custom program error: 0x1",
      reason: "onchain",
    }); // 1001
    // A new process: its own connection and store, nothing shared with the one that wrote.
    const other = new Redis(REDIS_URL, { lazyConnect: true });
    await other.connect();
    try {
      const reread = new RedisAttemptStore(other, `${env.prefix}:`);
      expect(await reread.get("claim-x")).toStrictEqual({
        intentKey: "claim-x",
        attempt: 1,
        status: "failed",
        signature: "sig1",
        lastValidBlockHeight: 501,
        recentBlockhash: "hash1",
        signedTransaction: "dHg1",
        reason: "onchain",
        error: "custom program error: 0x1",
        createdAt: 1000,
        updatedAt: 1001,
      });
    } finally {
      other.disconnect();
    }
  });

  it("keeps the first attempt's creation time and drops the previous outcome when the next attempt is signed", async () => {
    await store.recordSigned("claim-y", signed(1, "a")); // 1000
    await store.finish("claim-y", "a", { status: "confirmed", slot: 12 }); // 1001
    expect(await store.get("claim-y")).toStrictEqual({
      intentKey: "claim-y",
      attempt: 1,
      status: "confirmed",
      signature: "a",
      lastValidBlockHeight: 501,
      recentBlockhash: "hash1",
      signedTransaction: "dHg1",
      slot: 12,
      createdAt: 1000,
      updatedAt: 1001,
    });
    await store.recordRefused("claim-z", 1, "outflow_sol", "drains 5 SOL"); // 1002
    await store.recordSigned("claim-z", signed(2, "b")); // 1003
    expect(await store.get("claim-z")).toStrictEqual({
      intentKey: "claim-z",
      attempt: 2,
      status: "sent",
      signature: "b",
      lastValidBlockHeight: 502,
      recentBlockhash: "hash2",
      signedTransaction: "dHg2",
      createdAt: 1002,
      updatedAt: 1003,
    });
  });

  it("a refusal after an expired attempt keeps no trace of its transaction", async () => {
    await store.recordSigned("claim-w", signed(1, "w1")); // 1000
    await store.finish("claim-w", "w1", { status: "expired" }); // 1001
    expect(await store.recordRefused("claim-w", 2, "fee_payer", "not ours")).toBe(true); // 1002
    expect(await store.get("claim-w")).toStrictEqual({
      intentKey: "claim-w",
      attempt: 2,
      status: "refused",
      reason: "fee_payer",
      error: "not ours",
      createdAt: 1000,
      updatedAt: 1002,
    });
  });

  it("a second finish of the same attempt keeps the details it does not repeat", async () => {
    // Two watchers of one attempt (one lost to a crash and run again) may both finish it.
    await store.recordSigned("claim-u", signed(1, "u"));
    await store.finish("claim-u", "u", { status: "confirmed", slot: 77 });
    await store.finish("claim-u", "u", { status: "confirmed" });
    expect(await store.get("claim-u")).toMatchObject({ status: "confirmed", slot: 77 });
    await store.recordSigned("claim-t", signed(1, "t"));
    await store.finish("claim-t", "t", {
      status: "failed",
      reason: "onchain",
      error: "custom program error: 0x1",
    });
    await store.finish("claim-t", "t", { status: "failed" });
    expect(await store.get("claim-t")).toMatchObject({
      status: "failed",
      reason: "onchain",
      error: "custom program error: 0x1",
    });
  });

  it("stamps records with the wall clock when given none", async () => {
    const wall = new RedisAttemptStore(env.redis, `${env.prefix}:`);
    const before = Date.now();
    await wall.recordSigned("claim-v", signed(1, "v"));
    const after = Date.now();
    const record = await wall.get("claim-v");
    expect(record?.createdAt).toBeGreaterThanOrEqual(before);
    expect(record?.createdAt).toBeLessThanOrEqual(after);
    expect(record?.updatedAt).toBe(record?.createdAt);
  });
});
