import {
  ComputeBudgetProgram,
  type Connection,
  Keypair,
  LAMPORTS_PER_SOL,
  type PublicKey,
  SystemProgram,
  Transaction,
} from "@solana/web3.js";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { priorityFeePrice, recentPriorityFeesOn } from "../../../src/chain/priority-fee.js";
import { congestionWalk } from "../../../src/sandbox/chain/congestion.js";
import { fundedKeypair, type Harness, startHarness, statusOf, waitFor } from "./chain-harness.js";

let h: Harness;
beforeEach(async () => {
  // Slots move only when the test says, so the threshold in force is known.
  h = await startHarness({ slotMs: 0 });
});
afterEach(async () => {
  await h.close();
});

/** A transfer bidding `microLamports` per unit (none at all when undefined). */
async function pricedTransfer(
  connection: Connection,
  from: Keypair,
  to: PublicKey,
  microLamports: number | undefined,
): Promise<Buffer> {
  const { blockhash, lastValidBlockHeight } = await connection.getLatestBlockhash();
  const tx = new Transaction({ feePayer: from.publicKey, blockhash, lastValidBlockHeight });
  if (microLamports !== undefined) tx.add(ComputeBudgetProgram.setComputeUnitPrice({ microLamports }));
  tx.add(SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: to, lamports: LAMPORTS_PER_SOL }));
  tx.sign(from);
  return tx.serialize();
}

async function send(bytes: Buffer): Promise<string> {
  return h.connection.sendRawTransaction(bytes, { skipPreflight: true, maxRetries: 0 });
}

describe("local chain congestion knob", () => {
  it("drops a bid below the threshold, lands one above, and the recent fees show what landed", async () => {
    h.chain.congest({ thresholds: [5_000], backgroundTraffic: false });
    const payer = fundedKeypair(h.chain);
    const low = Keypair.generate().publicKey;
    const unpriced = Keypair.generate().publicKey;
    const high = Keypair.generate().publicKey;
    const lowSignature = await send(await pricedTransfer(h.connection, payer, low, 4_999));
    const unpricedSignature = await send(await pricedTransfer(h.connection, payer, unpriced, undefined));
    const highSignature = await send(await pricedTransfer(h.connection, payer, high, 12_000));
    const landedSlot = h.chain.slot;
    h.chain.advanceSlots(3);

    expect((await waitFor(() => statusOf(h.connection, highSignature), "the high bid")).err).toBeNull();
    expect(await h.connection.getBalance(high)).toBe(LAMPORTS_PER_SOL);
    expect(await statusOf(h.connection, lowSignature)).toBeUndefined();
    expect(await statusOf(h.connection, unpricedSignature)).toBeUndefined();
    expect(await h.connection.getBalance(low)).toBe(0);
    expect(await h.connection.getBalance(unpriced)).toBe(0);

    const fees = await h.connection.getRecentPrioritizationFees({ lockedWritableAccounts: [high] });
    // One entry a slot since the knob was set: the landed bid in its slot, nothing in the others.
    expect(fees).toEqual([
      { slot: landedSlot, prioritizationFee: 12_000 },
      { slot: landedSlot + 1, prioritizationFee: 0 },
      { slot: landedSlot + 2, prioritizationFee: 0 },
      { slot: landedSlot + 3, prioritizationFee: 0 },
    ]);

    // Off again: the same low bid, re-signed on a new blockhash, lands.
    h.chain.congest(undefined);
    const again = await send(await pricedTransfer(h.connection, payer, low, 4_999));
    h.chain.advanceSlots(1);
    expect((await waitFor(() => statusOf(h.connection, again), "the low bid, knob off")).err).toBeNull();
    expect(await h.connection.getBalance(low)).toBe(LAMPORTS_PER_SOL);
  });

  it("the threshold moves by slot: a rebroadcast of a dropped bid lands once the threshold falls below it", async () => {
    h.chain.congest({ thresholds: [2_000, 2_000, 20_000, 20_000, 1_000] });
    const payer = fundedKeypair(h.chain);
    const first = Keypair.generate().publicKey;
    const second = Keypair.generate().publicKey;
    const start = h.chain.slot;
    expect(await send(await pricedTransfer(h.connection, payer, first, 5_000))).toBeTruthy();
    h.chain.advanceSlots(2); // the threshold is now 20,000
    const bytes = await pricedTransfer(h.connection, payer, second, 5_000);
    const signature = await send(bytes);
    h.chain.advanceSlots(1);
    expect(await statusOf(h.connection, signature)).toBeUndefined();
    expect(await h.connection.getBalance(second)).toBe(0);
    h.chain.advanceSlots(1); // 1,000 from here on
    await send(bytes);
    expect((await waitFor(() => statusOf(h.connection, signature), "the rebroadcast")).err).toBeNull();
    expect(await h.connection.getBalance(first)).toBe(LAMPORTS_PER_SOL);
    expect(await h.connection.getBalance(second)).toBe(LAMPORTS_PER_SOL);

    // Background traffic (the default) lands at the threshold every slot; ours landed above it.
    const fees = await h.connection.getRecentPrioritizationFees();
    expect(fees.map((f) => f.slot)).toEqual([start, start + 1, start + 2, start + 3, start + 4]);
    expect(fees.map((f) => f.prioritizationFee)).toEqual([2_000, 2_000, 20_000, 20_000, 1_000]);
  });

  it("Keeper's fee estimate follows the congested market: its bid lands where the floor's is dropped", async () => {
    h.chain.congest({ thresholds: [6_000, 6_500, 7_000, 7_000] });
    h.chain.advanceSlots(3);
    const payer = fundedKeypair(h.chain);
    const recent = recentPriorityFeesOn(h.connection, pino({ level: "silent" }));
    const samples = await recent([payer.publicKey.toBase58()]);
    expect(samples).toEqual([6_000, 6_500, 7_000, 7_000]);
    const settings = {
      percentile: 75,
      minMicroLamports: 1_000,
      escalation: 1.5,
      maxUnitPriceMicroLamports: 2_000_000,
      maxPriorityFeeLamports: 1_000_000,
    };
    const bid = priorityFeePrice({ samples, build: 1, settings });
    expect(bid).toBe(7_000);
    const followed = Keypair.generate().publicKey;
    const floored = Keypair.generate().publicKey;
    const followedSignature = await send(await pricedTransfer(h.connection, payer, followed, bid));
    const flooredSignature = await send(await pricedTransfer(h.connection, payer, floored, 1_000));
    h.chain.advanceSlots(1);
    expect(
      (await waitFor(() => statusOf(h.connection, followedSignature), "the followed bid")).err,
    ).toBeNull();
    expect(await statusOf(h.connection, flooredSignature)).toBeUndefined();
    expect(await h.connection.getBalance(followed)).toBe(LAMPORTS_PER_SOL);
    expect(await h.connection.getBalance(floored)).toBe(0);
  });

  it("an explicit recentPriorityFees answer still wins over the congestion's", async () => {
    h.chain.congest({ thresholds: [3_000] });
    h.chain.advanceSlots(2);
    expect((await h.connection.getRecentPrioritizationFees()).map((f) => f.prioritizationFee)).toEqual([
      3_000, 3_000, 3_000,
    ]);
    h.chain.faults.recentPriorityFees = [7];
    expect((await h.connection.getRecentPrioritizationFees()).map((f) => f.prioritizationFee)).toEqual([7]);
    h.chain.faults.reset();
    expect(h.chain.faults.congestion).toBeUndefined();
  });

  it("refuses an empty or negative schedule, naming the field", () => {
    expect(() => h.chain.congest({ thresholds: [] })).toThrow(/congestion\.thresholds/);
    expect(() => h.chain.congest({ thresholds: [1, -5] })).toThrow(/congestion\.thresholds.*-5/);
  });
});

describe("congestionWalk", () => {
  it("is the same for a seed, differs for another, and drifts by its growth", () => {
    const walk = { startMicroLamports: 1_000, slots: 400, growthPerSlot: 1.01, volatility: 0.05 };
    const a = congestionWalk({ ...walk, seed: 3 });
    expect(congestionWalk({ ...walk, seed: 3 })).toEqual(a);
    expect(congestionWalk({ ...walk, seed: 4 })).not.toEqual(a);
    expect(a).toHaveLength(400);
    expect(a[0]).toBe(1_000);
    // 1.01^399 is about 53: noise of 0.05 a step (about 1 over the walk) cannot hide that.
    expect(a.at(-1)).toBeGreaterThan(10_000);
    expect(new Set(a).size).toBeGreaterThan(300);
    const flat = congestionWalk({ startMicroLamports: 500, slots: 50, volatility: 0.5, floor: 400, seed: 9 });
    expect(Math.min(...flat)).toBeGreaterThanOrEqual(400);
  });
});
