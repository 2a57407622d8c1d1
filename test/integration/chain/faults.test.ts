import { Keypair, LAMPORTS_PER_SOL } from "@solana/web3.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  fundedKeypair,
  type Harness,
  signedTransfer,
  startHarness,
  statusOf,
  waitFor,
} from "./chain-harness.js";

let h: Harness;
beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  await h.close();
});

describe("local chain fault knobs", () => {
  it("dropFirstSends(2): the first two sends are acknowledged but lost, the third lands", async () => {
    h.chain.dropFirstSends(2);
    const payer = fundedKeypair(h.chain);
    const to = Keypair.generate().publicKey;
    const bytes = (await signedTransfer(h.connection, payer, to, LAMPORTS_PER_SOL)).serialize();
    const first = await h.connection.sendRawTransaction(bytes, { skipPreflight: true, maxRetries: 0 });
    h.chain.advanceSlots(2);
    expect(await statusOf(h.connection, first)).toBeUndefined();
    const second = await h.connection.sendRawTransaction(bytes, { skipPreflight: true, maxRetries: 0 });
    h.chain.advanceSlots(2);
    expect(second).toBe(first);
    expect(await statusOf(h.connection, first)).toBeUndefined();
    expect(await h.connection.getBalance(to)).toBe(0);
    await h.connection.sendRawTransaction(bytes, { skipPreflight: true, maxRetries: 0 });
    const status = await waitFor(() => statusOf(h.connection, first), "third send to land");
    expect(status.err).toBeNull();
    expect(await h.connection.getBalance(to)).toBe(LAMPORTS_PER_SOL);
  });

  it("recentPriorityFees: getRecentPrioritizationFees answers them, oldest slot first; bad accounts get -32602", async () => {
    const account = Keypair.generate().publicKey;
    const none = await h.connection.getRecentPrioritizationFees({ lockedWritableAccounts: [account] });
    expect(none.map((f) => f.prioritizationFee)).toEqual([0]);
    h.chain.advanceSlots(5); // a slot for each fee: a younger chain answers fewer
    h.chain.faults.recentPriorityFees = [5_000, 0, 7_000];
    const fees = await h.connection.getRecentPrioritizationFees({ lockedWritableAccounts: [account] });
    expect(fees.map((f) => f.prioritizationFee)).toEqual([5_000, 0, 7_000]);
    // One entry a slot, consecutive, the newest no later than now (the chain moves on meanwhile).
    const slots = fees.map((f) => f.slot);
    expect(slots.slice(1).map((slot, i) => slot - (slots[i] ?? 0))).toEqual([1, 1]);
    expect(slots.at(-1)).toBeLessThanOrEqual(h.chain.slot);
    expect(await h.connection.getRecentPrioritizationFees()).toHaveLength(3);
    const refused = await fetch(h.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "getRecentPrioritizationFees",
        params: [["nope"]],
      }),
    });
    expect(await refused.json()).toMatchObject({
      error: { code: -32602, message: expect.stringContaining("nope") },
    });
    h.chain.faults.reset();
    expect(await h.connection.getRecentPrioritizationFees()).toHaveLength(1);
  });

  it("landDelayMs holds a send, then lands it while its blockhash is valid", async () => {
    h.chain.faults.landDelayMs = 600_000;
    const payer = fundedKeypair(h.chain);
    const to = Keypair.generate().publicKey;
    const tx = await signedTransfer(h.connection, payer, to, LAMPORTS_PER_SOL);
    const signature = await h.connection.sendRawTransaction(tx.serialize());
    // Held: nothing yet after the send returns, until the delay is over (here: until the test says).
    expect(h.chain.transaction(signature)).toBeUndefined();
    expect(h.chain.heldSends).toBe(1);
    h.chain.landHeldSends();
    const status = await waitFor(() => statusOf(h.connection, signature), "delayed landing");
    expect(status.err).toBeNull();
    expect(await h.connection.getBalance(to)).toBe(LAMPORTS_PER_SOL);
  });

  it("landDelayMs drops a held send whose blockhash expires meanwhile", async () => {
    const payer = fundedKeypair(h.chain);
    const to = Keypair.generate().publicKey;
    const tx = await signedTransfer(h.connection, payer, to, LAMPORTS_PER_SOL);
    h.chain.faults.landDelayMs = 100;
    const signature = await h.connection.sendRawTransaction(tx.serialize());
    expect(h.chain.heldSends).toBe(1);
    h.chain.advanceSlots(200);
    await waitFor(() => (h.chain.heldSends === 0 ? true : undefined), "the held send to be released");
    expect(await statusOf(h.connection, signature)).toBeUndefined();
    expect(await h.connection.getBalance(to)).toBe(0);
  });

  it("methodErrors fails a seeded share of calls with the configured error", async () => {
    h.chain.faults.methodErrors = { getSlot: { rate: 0.5, code: -32005, message: "Node is behind" } };
    const outcomes: string[] = [];
    for (let i = 0; i < 40; i++) {
      outcomes.push(
        await h.connection.getSlot().then(
          () => "ok",
          (error: Error) => (error.message.includes("Node is behind") ? "error" : `other: ${error.message}`),
        ),
      );
    }
    expect(outcomes.filter((o) => o === "error").length).toBeGreaterThan(5);
    expect(outcomes.filter((o) => o === "ok").length).toBeGreaterThan(5);
    expect(outcomes.every((o) => o === "ok" || o === "error")).toBe(true);
    // Other methods are untouched, and a rate of 1 fails every call.
    await expect(h.connection.getBlockHeight()).resolves.toBeGreaterThan(0);
    h.chain.faults.methodErrors = { getBlockHeight: { rate: 1 } };
    await expect(h.connection.getBlockHeight()).rejects.toThrow();
  });

  it("methodErrors draws the same sequence for the same seed", async () => {
    const run = async (): Promise<string> => {
      const other = await startHarness({ seed: 99 });
      other.chain.faults.methodErrors = { getHealth: { rate: 0.3 } };
      const results: string[] = [];
      for (let i = 0; i < 20; i++) {
        const response = await fetch(other.url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ jsonrpc: "2.0", id: i, method: "getHealth" }),
        });
        results.push("error" in ((await response.json()) as object) ? "x" : ".");
      }
      await other.close();
      return results.join("");
    };
    const first = await run();
    expect(first).toContain("x");
    expect(await run()).toBe(first);
  });
});
