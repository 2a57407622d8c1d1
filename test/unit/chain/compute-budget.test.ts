import { ComputeBudgetProgram, Keypair, SystemProgram, type TransactionInstruction } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import { readComputeBudget } from "../../../src/chain/compute-budget.js";
import type { InstructionView } from "../../../src/chain/decode.js";

/** The compute budget a transaction asks for, at the edges of what the fee ceiling relies on. */
const payer = Keypair.generate().publicKey;

function views(...ixs: TransactionInstruction[]): InstructionView[] {
  return ixs.map((ix, index) => ({
    index,
    programId: ix.programId,
    programIndex: 0,
    accountIndexes: [],
    accounts: ix.keys.map((k) => k.pubkey),
    data: ix.data,
  }));
}
const price = (microLamports: number | bigint) => ComputeBudgetProgram.setComputeUnitPrice({ microLamports });
const limit = (units: number) => ComputeBudgetProgram.setComputeUnitLimit({ units });
const transfer = () => SystemProgram.transfer({ fromPubkey: payer, toPubkey: payer, lamports: 1 });
const budgetIx = (bytes: number[]): TransactionInstruction =>
  ({
    programId: ComputeBudgetProgram.programId,
    keys: [],
    data: Buffer.from(bytes),
  }) as TransactionInstruction;

describe("readComputeBudget", () => {
  it("without a limit, counts 200,000 units per other instruction and 3,000 per budget instruction", () => {
    expect(readComputeBudget(views(transfer(), transfer(), price(1_000_000), transfer()))).toEqual({
      unitPriceMicroLamports: 1_000_000n,
      unitLimit: 603_000n,
      priorityFeeLamports: 603_000n,
      priceInstructions: 1,
      limitInstructions: 0,
    });
  });

  it("caps the default limit of many instructions at 1,400,000 units", () => {
    const many = Array.from({ length: 8 }, transfer);
    expect(readComputeBudget(views(...many, price(1_000_000)))).toMatchObject({
      unitLimit: 1_400_000n,
      priorityFeeLamports: 1_400_000n,
    });
  });

  it("keeps a limit of exactly 1,400,000 units and a price at the u64 maximum", () => {
    const budget = readComputeBudget(views(limit(1_400_000), price(2n ** 64n - 1n)));
    expect(budget.unitLimit).toBe(1_400_000n);
    expect(budget.unitPriceMicroLamports).toBe(2n ** 64n - 1n);
    expect(budget.priorityFeeLamports).toBe(((2n ** 64n - 1n) * 1_400_000n + 999_999n) / 1_000_000n);
  });

  it("rounds the fee up to the next lamport, and a whole one stays as it is", () => {
    expect(readComputeBudget(views(limit(1_000), price(1_000))).priorityFeeLamports).toBe(1n);
    expect(readComputeBudget(views(limit(1_000), price(1_001))).priorityFeeLamports).toBe(2n);
    expect(readComputeBudget(views(limit(1), price(1))).priorityFeeLamports).toBe(1n);
    expect(readComputeBudget(views(limit(0), price(10n ** 12n))).priorityFeeLamports).toBe(0n);
  });

  it("a limit of zero is a limit: no fee, whatever the other instructions", () => {
    expect(readComputeBudget(views(limit(0), price(5), transfer()))).toMatchObject({
      unitLimit: 0n,
      priorityFeeLamports: 0n,
      limitInstructions: 1,
    });
  });

  it("a price of zero set twice still counts both instructions", () => {
    expect(readComputeBudget(views(price(0), price(0), transfer()))).toMatchObject({
      unitPriceMicroLamports: 0n,
      priceInstructions: 2,
    });
  });

  it.each([
    ["a price of 8 bytes", [3, 1, 0, 0, 0, 0, 0, 0], "compute unit price data is 8 bytes"],
    ["a price of 10 bytes", [3, 1, 0, 0, 0, 0, 0, 0, 0, 0], "compute unit price data is 10 bytes"],
    ["a limit of 4 bytes", [2, 1, 0, 0], "compute unit limit data is 4 bytes"],
    ["a limit of 6 bytes", [2, 1, 0, 0, 0, 0], "compute unit limit data is 6 bytes"],
  ])("throws on %s, naming the instruction", (_name, bytes, message) => {
    expect(() => readComputeBudget(views(transfer(), budgetIx(bytes)))).toThrow(`instruction 1: ${message}`);
  });

  it("ignores other Compute Budget instructions (heap frame, loaded accounts) but counts their default units", () => {
    const heap = ComputeBudgetProgram.requestHeapFrame({ bytes: 64 * 1024 });
    expect(readComputeBudget(views(heap, price(1_000_000)))).toEqual({
      unitPriceMicroLamports: 1_000_000n,
      unitLimit: 6_000n,
      priorityFeeLamports: 6_000n,
      priceInstructions: 1,
      limitInstructions: 0,
    });
  });
});
