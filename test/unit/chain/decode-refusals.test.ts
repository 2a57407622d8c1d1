import {
  AddressLookupTableAccount,
  Keypair,
  SystemProgram,
  Transaction,
  TransactionMessage,
  VersionedTransaction,
} from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import { parseWireTransaction, viewTransaction } from "../../../src/chain/decode.js";
import { PolicyRefusal } from "../../../src/core/errors.js";
import { lookupTableOf } from "../../helpers/lookup-table.js";

/** What the decoder says when it refuses, and the flags the policy reads from its view. */
const payer = Keypair.generate();
const vault = Keypair.generate();
const stranger = Keypair.generate().publicKey;
const blockhash = Keypair.generate().publicKey.toBase58();

function detail(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof PolicyRefusal && error.reason === "decode_failed") return error.detail;
    throw error;
  }
  throw new Error("not refused");
}

function v0(lookups: AddressLookupTableAccount[], to = stranger): VersionedTransaction {
  const message = new TransactionMessage({
    payerKey: payer.publicKey,
    recentBlockhash: blockhash,
    instructions: [SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports: 1 })],
  }).compileToV0Message(lookups);
  return new VersionedTransaction(message);
}

describe("decode refusals", () => {
  const legacy = () => {
    const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: blockhash }).add(
      SystemProgram.transfer({ fromPubkey: vault.publicKey, toPubkey: stranger, lamports: 1 }),
    );
    tx.partialSign(vault);
    return tx.serialize({ requireAllSignatures: false }).toString("base64");
  };

  it.each([
    ["empty", ""],
    ["a character outside base64", `${legacy()}$`],
    ["text before base64", `$${legacy()}`],
    ["padding in the middle", `AA==${legacy()}`],
  ])("refuses %s as not base64", (_name, input) => {
    expect(detail(() => parseWireTransaction(input))).toBe("not base64");
  });

  it("refuses bytes that are no transaction, and bytes with a tail", () => {
    expect(detail(() => parseWireTransaction(Buffer.from([1, 2, 3]).toString("base64")))).toMatch(
      /^not a transaction \(.+\)$/,
    );
    const withTail = Buffer.concat([Buffer.from(legacy(), "base64"), Buffer.from([7, 7])]).toString("base64");
    expect(detail(() => parseWireTransaction(withTail))).toBe(
      "not a transaction (2 bytes after the end of the transaction)",
    );
  });

  it("marks the signers of the header as signers and no other key", () => {
    const view = viewTransaction(parseWireTransaction(legacy()), []);
    expect(view.accountKeys.map((k) => [k.pubkey.toBase58(), k.isSigner])).toEqual([
      [payer.publicKey.toBase58(), true],
      [vault.publicKey.toBase58(), true],
      [stranger.toBase58(), false],
      [SystemProgram.programId.toBase58(), false],
    ]);
    expect(view.header).toEqual({ numRequiredSignatures: 2, numReadonlySigned: 0, numReadonlyUnsigned: 1 });
    expect(view.instructions[0]?.accountIndexes).toEqual([1, 2]);
    expect(view.instructions[0]?.programIndex).toBe(3);
  });

  it("refuses a lookup table it was not given, and an index the table does not have", () => {
    const lookups = lookupTableOf([stranger]);
    const tx = v0([lookups]);
    expect(detail(() => viewTransaction(tx, []))).toBe(`lookup table ${lookups.key.toBase58()} missing`);
    const shorter = new AddressLookupTableAccount({
      key: lookups.key,
      state: { ...lookups.state, addresses: [] },
    });
    expect(detail(() => viewTransaction(tx, [shorter]))).toBe(
      `lookup table ${lookups.key.toBase58()} has no index 0`,
    );
  });

  it("refuses an account named twice (a static key again in a lookup table)", () => {
    const lookups = lookupTableOf([stranger]);
    const tx = v0([lookups]);
    const twice = new AddressLookupTableAccount({
      key: lookups.key,
      state: { ...lookups.state, addresses: [payer.publicKey] },
    });
    expect(detail(() => viewTransaction(tx, [twice]))).toBe(
      `account ${payer.publicKey.toBase58()} appears twice`,
    );
  });

  it("refuses a signature count that does not match the header", () => {
    const tx = v0([]);
    tx.signatures.push(new Uint8Array(64));
    expect(detail(() => viewTransaction(tx, []))).toBe("signature count does not match the header");
  });

  it("refuses an instruction whose program index is not a static key or whose account index is out of range", () => {
    const program = Keypair.generate().publicKey;
    const lookups = lookupTableOf([program]);
    const tx = v0([]);
    tx.message.compiledInstructions.push({
      programIdIndex: 3,
      accountKeyIndexes: [],
      data: new Uint8Array(),
    });
    expect(detail(() => viewTransaction(tx, [lookups]))).toBe("instruction 1: bad program index 3");
    const badAccount = v0([]);
    badAccount.message.compiledInstructions[0]?.accountKeyIndexes.push(9);
    expect(detail(() => viewTransaction(badAccount, []))).toBe("instruction 0: bad account index 9");
  });
});
