import type { Connection, SignatureStatus } from "@solana/web3.js";
import { afterEach, describe, expect, it, vi } from "vitest";
import { withBatchedReads } from "../../../src/chain/batched-reads.js";

/** A fake RPC connection (outside the process): answers statuses by signature and counts calls. */
function fakeConnection() {
  const calls: Array<{ method: string; args: unknown[] }> = [];
  let height = 100;
  let failNext = false;
  const status = (signature: string): SignatureStatus | null =>
    signature.startsWith("landed")
      ? { slot: 7, confirmations: 1, err: null, confirmationStatus: "confirmed" }
      : null;
  const connection = {
    rpcEndpoint: "http://fake",
    async getSignatureStatuses(signatures: string[], config?: unknown) {
      calls.push({ method: "getSignatureStatuses", args: [signatures, config] });
      if (failNext) {
        failNext = false;
        throw new Error("node unreachable");
      }
      return { context: { slot: 9 }, value: signatures.map(status) };
    },
    async getBlockHeight(commitment?: unknown) {
      calls.push({ method: "getBlockHeight", args: [commitment] });
      height += 1;
      return height;
    },
    async isBlockhashValid(blockhash: string, config?: unknown) {
      calls.push({ method: "isBlockhashValid", args: [blockhash, config] });
      return { context: { slot: height }, value: blockhash.startsWith("live") };
    },
  };
  return {
    connection: connection as unknown as Connection,
    calls,
    failOnce() {
      failNext = true;
    },
  };
}

/** Block height reads that stay pending until the test answers them, in the order they were made. */
function heightReadsAnsweredByTheTest() {
  const answers: Array<{ resolve: (h: number) => void; reject: (e: Error) => void }> = [];
  const connection = {
    getBlockHeight: () =>
      new Promise<number>((resolve, reject) => {
        answers.push({ resolve, reject });
      }),
  } as unknown as Connection;
  return { answers, reads: withBatchedReads(connection, { heightMaxAgeMs: 200 }) };
}

describe("the watcher's batched reads", () => {
  it("status reads made together go out as one call, each caller getting its own answers", async () => {
    const fake = fakeConnection();
    const reads = withBatchedReads(fake.connection, { gatherMs: 5 });
    const [a, b, c] = await Promise.all([
      reads.getSignatureStatuses(["landed-1"]),
      reads.getSignatureStatuses(["pending-2"]),
      reads.getSignatureStatuses(["landed-3", "pending-4"]),
    ]);
    expect(fake.calls).toEqual([
      {
        method: "getSignatureStatuses",
        args: [["landed-1", "pending-2", "landed-3", "pending-4"], undefined],
      },
    ]);
    expect(a.value.map((s) => s?.slot ?? null)).toEqual([7]);
    expect(b.value).toEqual([null]);
    expect(c.value.map((s) => s?.slot ?? null)).toEqual([7, null]);
    expect(c.context.slot).toBe(9);
  });

  it("never more than 256 signatures in one call", async () => {
    const fake = fakeConnection();
    const reads = withBatchedReads(fake.connection, { gatherMs: 5 });
    const answers = await Promise.all(
      Array.from({ length: 300 }, (_, i) => reads.getSignatureStatuses([`landed-${i}`])),
    );
    expect(fake.calls.map((c) => (c.args[0] as string[]).length)).toEqual([256, 44]);
    expect(answers.every((a) => a.value.length === 1 && a.value[0]?.slot === 7)).toBe(true);
  });

  it("a search of the history goes out on its own, at once", async () => {
    const fake = fakeConnection();
    const reads = withBatchedReads(fake.connection, { gatherMs: 60_000 });
    const answer = await reads.getSignatureStatuses(["landed-1"], { searchTransactionHistory: true });
    expect(answer.value[0]?.slot).toBe(7);
    expect(fake.calls).toEqual([
      { method: "getSignatureStatuses", args: [["landed-1"], { searchTransactionHistory: true }] },
    ]);
  });

  it("a failed call fails every read in it; the next reads ask again", async () => {
    const fake = fakeConnection();
    const reads = withBatchedReads(fake.connection, { gatherMs: 5 });
    fake.failOnce();
    const results = await Promise.allSettled([
      reads.getSignatureStatuses(["landed-1"]),
      reads.getSignatureStatuses(["landed-2"]),
    ]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    expect((await reads.getSignatureStatuses(["landed-1"])).value[0]?.slot).toBe(7);
    expect(fake.calls).toHaveLength(2);
  });

  it("shares a fresh block height per commitment, and reads it again once it is old", async () => {
    const fake = fakeConnection();
    const reads = withBatchedReads(fake.connection, { heightMaxAgeMs: 50 });
    const [first, second] = await Promise.all([
      reads.getBlockHeight("confirmed"),
      reads.getBlockHeight("confirmed"),
    ]);
    expect(second).toBe(first);
    expect(await reads.getBlockHeight("processed")).toBe(first + 1);
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(await reads.getBlockHeight("confirmed")).toBe(first + 2);
    expect(fake.calls.filter((c) => c.method === "getBlockHeight")).toHaveLength(3);
  });

  it('shares a blockhash\'s "still valid" for half a slot, per blockhash, never its "gone"', async () => {
    const fake = fakeConnection();
    const reads = withBatchedReads(fake.connection, { heightMaxAgeMs: 50 });
    const asked = () => fake.calls.filter((c) => c.method === "isBlockhashValid").map((c) => c.args[0]);
    const answers = await Promise.all([
      reads.isBlockhashValid("live-1", { commitment: "processed" }),
      reads.isBlockhashValid("live-1", { commitment: "processed" }),
      reads.isBlockhashValid("gone-2", { commitment: "processed" }),
      reads.isBlockhashValid("live-1", { commitment: "confirmed" }),
    ]);
    expect(answers.map((a) => a.value)).toEqual([true, true, false, true]);
    expect(asked()).toEqual(["live-1", "gone-2", "live-1"]);
    // "Gone" ends a watch: each caller hears it from the node, never from another's answer.
    expect((await reads.isBlockhashValid("gone-2", { commitment: "processed" })).value).toBe(false);
    expect((await reads.isBlockhashValid("live-1", { commitment: "processed" })).value).toBe(true);
    expect(asked()).toEqual(["live-1", "gone-2", "live-1", "gone-2"]);
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect((await reads.isBlockhashValid("live-1", { commitment: "processed" })).value).toBe(true);
    expect(asked()).toEqual(["live-1", "gone-2", "live-1", "gone-2", "live-1"]);
  });

  it("one caller's own list goes out whole, even past 256 signatures", async () => {
    const fake = fakeConnection();
    const reads = withBatchedReads(fake.connection, { gatherMs: 5 });
    const many = Array.from({ length: 300 }, (_, i) => `landed-${i}`);
    const [alone, next] = await Promise.all([
      reads.getSignatureStatuses(many),
      reads.getSignatureStatuses(["landed-x"]),
    ]);
    expect(fake.calls.map((c) => (c.args[0] as string[]).length)).toEqual([300, 1]);
    expect(alone.value).toHaveLength(300);
    expect(next.value[0]?.slot).toBe(7);
  });

  it("a failed block height read is not shared: the next caller asks again", async () => {
    const fake = fakeConnection();
    const reads = withBatchedReads(fake.connection, { heightMaxAgeMs: 60_000 });
    const original = fake.connection.getBlockHeight.bind(fake.connection);
    let failures = 1;
    fake.connection.getBlockHeight = async (commitment) => {
      if (failures-- > 0) {
        fake.calls.push({ method: "getBlockHeight", args: [commitment] });
        throw new Error("node unreachable");
      }
      return original(commitment);
    };
    await expect(reads.getBlockHeight("confirmed")).rejects.toThrow("node unreachable");
    const height = await reads.getBlockHeight("confirmed");
    expect(await reads.getBlockHeight("confirmed")).toBe(height);
    expect(fake.calls.filter((c) => c.method === "getBlockHeight")).toHaveLength(2);
  });

  describe("on a clock the test moves", () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it("gathers reads for 25 ms by default, from the first one waiting", async () => {
      vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
      const fake = fakeConnection();
      const reads = withBatchedReads(fake.connection);
      const a = reads.getSignatureStatuses(["landed-a"]);
      await vi.advanceTimersByTimeAsync(20);
      const b = reads.getSignatureStatuses(["landed-b"]);
      expect(fake.calls).toHaveLength(0);
      await vi.advanceTimersByTimeAsync(5);
      await Promise.all([a, b]);
      expect(fake.calls.map((c) => c.args[0])).toEqual([["landed-a", "landed-b"]]);
    });

    it("a read after a flush waits its own full window, not the rest of another's", async () => {
      vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
      const fake = fakeConnection();
      const reads = withBatchedReads(fake.connection, { gatherMs: 25 });
      const a = reads.getSignatureStatuses(["landed-a"]);
      await vi.advanceTimersByTimeAsync(10);
      const b = reads.getSignatureStatuses(["landed-b"]);
      await vi.advanceTimersByTimeAsync(15);
      await Promise.all([a, b]);
      const c = reads.getSignatureStatuses(["landed-c"]);
      await vi.advanceTimersByTimeAsync(10);
      const d = reads.getSignatureStatuses(["landed-d"]);
      // 10 ms after b's would-be window ended: c's window (25 ms from c) is still open.
      await vi.advanceTimersByTimeAsync(10);
      expect(fake.calls).toHaveLength(1);
      await vi.advanceTimersByTimeAsync(5);
      await Promise.all([c, d]);
      expect(fake.calls.map((call) => call.args[0])).toEqual([
        ["landed-a", "landed-b"],
        ["landed-c", "landed-d"],
      ]);
    });

    it("a read that fails after a newer one succeeded leaves the newer one shared", async () => {
      vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
      const { answers, reads } = heightReadsAnsweredByTheTest();
      const slow = reads.getBlockHeight("confirmed");
      await vi.advanceTimersByTimeAsync(200);
      const fresh = reads.getBlockHeight("confirmed");
      answers[1]?.resolve(500);
      expect(await fresh).toBe(500);
      answers[0]?.reject(new Error("node unreachable"));
      await expect(slow).rejects.toThrow("node unreachable");
      const again = reads.getBlockHeight("confirmed");
      expect(answers).toHaveLength(2);
      expect(await again).toBe(500);
    });

    it("two failed reads, the newer failing first: both callers hear it, the next caller asks again", async () => {
      vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
      const { answers, reads } = heightReadsAnsweredByTheTest();
      const older = reads.getBlockHeight("confirmed");
      await vi.advanceTimersByTimeAsync(200);
      const newer = reads.getBlockHeight("confirmed");
      answers[1]?.reject(new Error("second failure"));
      await expect(newer).rejects.toThrow("second failure");
      answers[0]?.reject(new Error("first failure"));
      await expect(older).rejects.toThrow("first failure");
      const again = reads.getBlockHeight("confirmed");
      expect(answers).toHaveLength(3);
      answers[2]?.resolve(600);
      expect(await again).toBe(600);
    });

    it("a block height exactly heightMaxAgeMs old is read again", async () => {
      vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
      const fake = fakeConnection();
      const reads = withBatchedReads(fake.connection, { heightMaxAgeMs: 200 });
      const first = await reads.getBlockHeight("confirmed");
      await vi.advanceTimersByTimeAsync(199);
      expect(await reads.getBlockHeight("confirmed")).toBe(first);
      await vi.advanceTimersByTimeAsync(1);
      expect(await reads.getBlockHeight("confirmed")).toBe(first + 1);
    });
  });

  it("leaves every other call to the connection", () => {
    const fake = fakeConnection();
    expect(withBatchedReads(fake.connection).rpcEndpoint).toBe("http://fake");
  });
});
