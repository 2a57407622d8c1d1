import {
  createAssociatedTokenAccountIdempotentInstruction,
  getAssociatedTokenAddressSync,
} from "@solana/spl-token";
import {
  ComputeBudgetProgram,
  Keypair,
  SystemProgram,
  Transaction,
  TransactionInstruction,
  TransactionMessage,
  VersionedTransaction,
} from "@solana/web3.js";
import bs58 from "bs58";
import { describe, expect, it } from "vitest";
import {
  messageOf,
  readWireTransaction,
  transactionOfWire,
  WireError,
  withSignature,
} from "../../../src/chain/wire-transaction.js";
import { lookupTableOf } from "../../helpers/lookup-table.js";

const payer = Keypair.generate();
const cosigner = Keypair.generate();
const mint = Keypair.generate().publicKey;
const blockhash = Keypair.generate().publicKey.toBase58();

/** A claim-like set of instructions: a compute budget, the payout account, a program call. */
function instructions(dataBytes: number): TransactionInstruction[] {
  const ata = getAssociatedTokenAddressSync(mint, payer.publicKey);
  return [
    ComputeBudgetProgram.setComputeUnitLimit({ units: 200_000 }),
    createAssociatedTokenAccountIdempotentInstruction(payer.publicKey, ata, payer.publicKey, mint),
    new TransactionInstruction({
      programId: Keypair.generate().publicKey,
      keys: [
        { pubkey: payer.publicKey, isSigner: true, isWritable: true },
        { pubkey: cosigner.publicKey, isSigner: true, isWritable: false },
        ...Array.from({ length: 6 }, (_, i) => ({
          pubkey: Keypair.generate().publicKey,
          isSigner: false,
          isWritable: i % 2 === 0,
        })),
      ],
      data: Buffer.alloc(dataBytes, 7),
    }),
  ];
}

/** Legacy and v0 transactions, unsigned and partly signed, with and without lookup tables, long data. */
function corpus(): Array<[string, VersionedTransaction]> {
  const cases: Array<[string, VersionedTransaction]> = [];
  for (const dataBytes of [0, 40, 130, 400]) {
    const message = new TransactionMessage({
      payerKey: payer.publicKey,
      recentBlockhash: blockhash,
      instructions: instructions(dataBytes),
    });
    const legacy = new VersionedTransaction(message.compileToLegacyMessage());
    const v0 = new VersionedTransaction(message.compileToV0Message());
    const lookups = lookupTableOf([Keypair.generate().publicKey, mint, Keypair.generate().publicKey]);
    const withTable = new VersionedTransaction(message.compileToV0Message([lookups]));
    const signed = new VersionedTransaction(message.compileToV0Message());
    signed.sign([cosigner]);
    cases.push(
      [`legacy, ${dataBytes} data bytes`, legacy],
      [`v0, ${dataBytes} data bytes`, v0],
      [`v0 with a lookup table, ${dataBytes} data bytes`, withTable],
      [`v0 signed by the cosigner, ${dataBytes} data bytes`, signed],
    );
  }
  return cases;
}

function refusal(bytes: Uint8Array): string {
  try {
    readWireTransaction(bytes);
  } catch (error) {
    if (error instanceof WireError) return error.message;
    throw error;
  }
  throw new Error("read without complaint");
}

describe("a transaction's wire bytes, read in place", () => {
  it.each(corpus())("reads what web3.js reads: %s", (_name, tx) => {
    const bytes = tx.serialize();
    const wire = readWireTransaction(bytes);
    const message = tx.message;
    expect(wire.version).toBe(tx.version);
    expect(wire.header).toEqual(message.header);
    expect(wire.signatures.map((s) => [...s])).toEqual(tx.signatures.map((s) => [...s]));
    expect(wire.staticKeys.map((k) => [...k])).toEqual(
      message.staticAccountKeys.map((k) => [...k.toBytes()]),
    );
    expect(bs58.encode(wire.recentBlockhash)).toBe(message.recentBlockhash);
    expect(
      wire.instructions.map((ix) => [ix.programIdIndex, [...ix.accountKeyIndexes], [...ix.data]]),
    ).toEqual(
      message.compiledInstructions.map((ix) => [ix.programIdIndex, [...ix.accountKeyIndexes], [...ix.data]]),
    );
    expect(
      wire.lookups.map((l) => [[...l.accountKey], [...l.writableIndexes], [...l.readonlyIndexes]]),
    ).toEqual(
      message.addressTableLookups.map((l) => [
        [...l.accountKey.toBytes()],
        [...l.writableIndexes],
        [...l.readonlyIndexes],
      ]),
    );
    expect(Buffer.from(messageOf(wire)).equals(Buffer.from(message.serialize()))).toBe(true);
  });

  it.each(corpus())("refuses every strict prefix of the bytes: %s", (_name, tx) => {
    const bytes = tx.serialize();
    for (let end = 0; end < bytes.length; end += 1)
      expect(() => readWireTransaction(bytes.subarray(0, end))).toThrow(WireError);
  });

  it("writes a signature into the signer's slot and nothing else; web3.js signs the same bytes", () => {
    const message = new TransactionMessage({
      payerKey: payer.publicKey,
      recentBlockhash: blockhash,
      instructions: instructions(40),
    }).compileToV0Message();
    const partly = new VersionedTransaction(message);
    partly.sign([cosigner]);
    const wire = readWireTransaction(partly.serialize());
    const reference = VersionedTransaction.deserialize(partly.serialize());
    reference.sign([payer]);
    const signature = reference.signatures[0] ?? new Uint8Array();
    const signed = withSignature(wire, 0, signature);
    expect(Buffer.from(signed).equals(Buffer.from(reference.serialize()))).toBe(true);
    // The bytes read are left as they were.
    expect(wire.signatures[0]?.every((b) => b === 0)).toBe(true);
    expect(() => withSignature(wire, 2, signature)).toThrow(RangeError);
    expect(() => withSignature(wire, 0, signature.subarray(0, 63))).toThrow(RangeError);
  });

  it("refuses a length not in its shortest form, longer than three bytes, or past 65535", () => {
    const legacy = new Transaction({ feePayer: payer.publicKey, recentBlockhash: blockhash }).add(
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: cosigner.publicKey, lamports: 1 }),
    );
    const bytes = legacy.serialize({ requireAllSignatures: false, verifySignatures: false });
    expect(bytes[0]).toBe(1);
    // One signature, its count written as 0x81 0x00: the same number in two bytes.
    const padded = Buffer.concat([Buffer.from([0x81, 0x00]), bytes.subarray(1)]);
    expect(refusal(padded)).toBe("signature count: a length not in its shortest form");
    expect(refusal(Buffer.from([0x80, 0x80, 0x80, 0x01]))).toBe(
      "signature count: a length longer than three bytes",
    );
    expect(refusal(Buffer.from([0xff, 0xff, 0x04]))).toBe("signature count: a length past 65535");
  });

  it("refuses message versions past v0, header counts past the keys, and bytes after the end", () => {
    const v0 = new VersionedTransaction(
      new TransactionMessage({
        payerKey: payer.publicKey,
        recentBlockhash: blockhash,
        instructions: instructions(8),
      }).compileToV0Message(),
    );
    const bytes = Buffer.from(v0.serialize());
    const messageAt = 1 + 64 * v0.signatures.length;
    const v1 = Buffer.from(bytes);
    v1[messageAt] = 0x81;
    expect(refusal(v1)).toBe("message version 1: only legacy and v0 are known");
    const keys = v0.message.staticAccountKeys.length;
    const header = (offset: number, value: number) => {
      const changed = Buffer.from(bytes);
      changed[messageAt + offset] = value;
      return refusal(changed);
    };
    expect(header(1, keys + 1)).toBe(`header: ${keys + 1} signers but ${keys} account keys`);
    expect(header(2, 3)).toBe("header: 3 read-only signers of 2 signers");
    expect(header(3, keys - 1)).toBe(`header: ${keys - 1} read-only unsigned keys of ${keys - 2}`);
    expect(refusal(Buffer.concat([bytes, Buffer.from([0])]))).toBe(
      "1 bytes after the end of the transaction",
    );
  });

  it("lends the bytes to web3.js calls as a transaction that serializes to exactly them and cannot be signed", () => {
    for (const [, tx] of corpus()) {
      const bytes = tx.serialize();
      const lent = transactionOfWire(bytes);
      expect(lent).toBeInstanceOf(VersionedTransaction);
      expect(Buffer.from(lent.serialize()).equals(Buffer.from(bytes))).toBe(true);
      expect(lent.version).toBe(tx.version);
      expect(Buffer.from(lent.message.serialize()).equals(Buffer.from(tx.message.serialize()))).toBe(true);
      expect(lent.signatures.map((sig) => [...sig])).toEqual(tx.signatures.map((sig) => [...sig]));
      expect(() => lent.sign([payer])).toThrow("not signed through web3.js");
      expect(() => lent.addSignature(payer.publicKey, new Uint8Array(64))).toThrow(
        "not signed through web3.js",
      );
    }
  });
});
