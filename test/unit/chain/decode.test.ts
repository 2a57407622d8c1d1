import { createTransferInstruction, TOKEN_PROGRAM_ID } from "@solana/spl-token";
import {
  ComputeBudgetProgram,
  Keypair,
  SystemProgram,
  Transaction,
  TransactionMessage,
  VersionedTransaction,
} from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import { readComputeBudget } from "../../../src/chain/compute-budget.js";
import { parseWireTransaction, viewTransaction } from "../../../src/chain/decode.js";
import { PolicyRefusal } from "../../../src/core/errors.js";
import { lookupTableOf } from "../../helpers/lookup-table.js";

const payer = Keypair.generate();
const vault = Keypair.generate();
const stranger = Keypair.generate().publicKey;
const blockhash = Keypair.generate().publicKey.toBase58();

function legacyBase64(): string {
  const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: blockhash });
  tx.add(
    ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 1_000 }),
    createTransferInstruction(stranger, stranger, vault.publicKey, 5n),
  );
  tx.partialSign(vault);
  return tx.serialize({ requireAllSignatures: false }).toString("base64");
}

describe("decode", () => {
  it("reads a legacy transaction: fee payer, signers, instructions, blockhash", () => {
    const view = viewTransaction(parseWireTransaction(legacyBase64()), []);
    expect(view.version).toBe("legacy");
    expect(view.feePayer.equals(payer.publicKey)).toBe(true);
    expect(view.recentBlockhash).toBe(blockhash);
    expect(view.signers.map((s) => [s.pubkey.toBase58(), s.isSigned])).toEqual([
      [payer.publicKey.toBase58(), false],
      [vault.publicKey.toBase58(), true],
    ]);
    expect(view.instructions.map((ix) => ix.programId.toBase58())).toEqual([
      ComputeBudgetProgram.programId.toBase58(),
      TOKEN_PROGRAM_ID.toBase58(),
    ]);
    expect(view.accountKeys.every((k) => k.source === "static")).toBe(true);
  });

  it("reads a v0 transaction and resolves its lookup table into writable and readonly keys", () => {
    const writable = Keypair.generate().publicKey;
    const readonly = Keypair.generate().publicKey;
    const table = lookupTableOf([readonly, writable]);
    const message = new TransactionMessage({
      payerKey: payer.publicKey,
      recentBlockhash: blockhash,
      instructions: [
        SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: writable, lamports: 1 }),
        {
          programId: SystemProgram.programId,
          keys: [{ pubkey: readonly, isSigner: false, isWritable: false }],
          data: Buffer.alloc(0),
        },
      ],
    }).compileToV0Message([table]);
    const base64 = Buffer.from(new VersionedTransaction(message).serialize()).toString("base64");
    const view = viewTransaction(parseWireTransaction(base64), [table]);
    expect(view.version).toBe(0);
    const loaded = view.accountKeys.filter((k) => k.source !== "static");
    expect(loaded.map((k) => [k.pubkey.toBase58(), k.source, k.isWritable])).toEqual([
      [writable.toBase58(), "lookup-writable", true],
      [readonly.toBase58(), "lookup-readonly", false],
    ]);
    expect(view.instructions[0]?.accounts.map((a) => a.toBase58())).toEqual([
      payer.publicKey.toBase58(),
      writable.toBase58(),
    ]);
    expect(view.signers).toHaveLength(1);
    expect(view.signers[0]?.isSigned).toBe(false);
  });

  it.each([
    ["not base64", "%%%"],
    ["empty", ""],
    ["garbage bytes", Buffer.from([1, 2, 3]).toString("base64")],
    [
      "trailing bytes",
      Buffer.concat([Buffer.from(legacyBase64(), "base64"), Buffer.from([0])]).toString("base64"),
    ],
  ])("refuses %s as decode_failed", (_name, input) => {
    expect(() => parseWireTransaction(input)).toThrow(PolicyRefusal);
    try {
      parseWireTransaction(input);
    } catch (error) {
      expect((error as PolicyRefusal).reason).toBe("decode_failed");
    }
  });
});

describe("compute budget", () => {
  const view = (...ixs: Parameters<Transaction["add"]>) => {
    const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: blockhash }).add(...ixs);
    return viewTransaction(
      parseWireTransaction(tx.serialize({ requireAllSignatures: false }).toString("base64")),
      [],
    );
  };
  const transfer = SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: stranger, lamports: 1 });

  it.each([
    ["no budget instructions", [transfer], 0n, 200_000n, 0n],
    [
      "a price and a limit",
      [
        ComputeBudgetProgram.setComputeUnitLimit({ units: 100_000 }),
        ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 5_000 }),
        transfer,
      ],
      5_000n,
      100_000n,
      500n,
    ],
    [
      // The default limit counts the Compute Budget instruction too (3,000 units since SIMD-0170).
      "a price, default limit",
      [ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 3 }), transfer],
      3n,
      203_000n,
      1n,
    ],
    [
      "a huge price",
      [ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 10n ** 15n }), transfer],
      10n ** 15n,
      203_000n,
      203n * 10n ** 12n,
    ],
  ] as const)("%s", (_name, ixs, price, limit, fee) => {
    const budget = readComputeBudget(view(...ixs).instructions);
    expect(budget).toMatchObject({
      unitPriceMicroLamports: price,
      unitLimit: limit,
      priorityFeeLamports: fee,
    });
  });

  const price = (microLamports: number) => ComputeBudgetProgram.setComputeUnitPrice({ microLamports });
  const limit = (units: number) => ComputeBudgetProgram.setComputeUnitLimit({ units });

  it.each([
    ["the second price is the higher", [price(1_000), price(9_000_000), limit(200_000), transfer]],
    ["the first price is the higher", [price(9_000_000), price(1_000), limit(200_000), transfer]],
    ["a higher price after the transfer", [price(1_000), limit(200_000), transfer, price(9_000_000)]],
  ] as const)("takes the highest of several prices: %s", (_name, ixs) => {
    expect(readComputeBudget(view(...ixs).instructions)).toEqual({
      unitPriceMicroLamports: 9_000_000n,
      unitLimit: 200_000n,
      // 200,000 units x 9,000,000 micro-lamports = 1,800,000 lamports.
      priorityFeeLamports: 1_800_000n,
      priceInstructions: 2,
      limitInstructions: 1,
    });
  });

  it.each([
    ["the second limit is the higher", [limit(10_000), limit(1_000_000), price(1_000), transfer]],
    ["the first limit is the higher", [limit(1_000_000), limit(10_000), price(1_000), transfer]],
  ] as const)("takes the highest of several limits: %s", (_name, ixs) => {
    expect(readComputeBudget(view(...ixs).instructions)).toEqual({
      unitPriceMicroLamports: 1_000n,
      unitLimit: 1_000_000n,
      priorityFeeLamports: 1_000n,
      priceInstructions: 1,
      limitInstructions: 2,
    });
  });

  it("caps a limit above the runtime's maximum at 1,400,000 units and rounds the fee up", () => {
    const budget = readComputeBudget(view(limit(5_000_000), price(3), transfer).instructions);
    // 1,400,000 x 3 = 4,200,000 micro-lamports = 4.2 lamports, charged as 5.
    expect(budget).toMatchObject({ unitLimit: 1_400_000n, priorityFeeLamports: 5n });
  });

  it("throws on malformed compute budget data", () => {
    const bad = { programId: ComputeBudgetProgram.programId, keys: [], data: Buffer.from([3, 1, 2]) };
    expect(() => readComputeBudget(view(bad).instructions)).toThrow(RangeError);
  });
});
