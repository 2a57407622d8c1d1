import {
  type AddressLookupTableAccount,
  type Connection,
  Keypair,
  MessageV0,
  type PublicKey,
  SystemProgram,
  TransactionMessage,
  VersionedTransaction,
} from "@solana/web3.js";
import bs58 from "bs58";
import { describe, expect, it } from "vitest";
import {
  decodeTransaction,
  rpcLookupTableLoader,
  transactionSignature,
  viewTransaction,
} from "../../../src/chain/decode.js";
import { PolicyRefusal } from "../../../src/core/errors.js";
import { lookupTableOf } from "../../helpers/lookup-table.js";

const payer = Keypair.generate();
const blockhash = Keypair.generate().publicKey.toBase58();

/** A v0 transfer from the payer to `to` through `lookups`, as base64 wire bytes. */
function v0Base64(to: PublicKey, lookups: AddressLookupTableAccount[]): string {
  const message = new TransactionMessage({
    payerKey: payer.publicKey,
    recentBlockhash: blockhash,
    instructions: [SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports: 1 })],
  }).compileToV0Message(lookups);
  return Buffer.from(new VersionedTransaction(message).serialize()).toString("base64");
}

/** A message built by hand, header and keys as given: what a hostile builder could hand the decoder. */
function handBuilt(numRequiredSignatures: number, staticAccountKeys: PublicKey[]): VersionedTransaction {
  const message = new MessageV0({
    header: { numRequiredSignatures, numReadonlySignedAccounts: 0, numReadonlyUnsignedAccounts: 0 },
    staticAccountKeys,
    recentBlockhash: blockhash,
    compiledInstructions: [],
    addressTableLookups: [],
  });
  return new VersionedTransaction(message);
}

async function refusalOf(run: () => unknown): Promise<string> {
  try {
    await run();
  } catch (error) {
    if (error instanceof PolicyRefusal && error.reason === "decode_failed") return error.detail;
    throw error;
  }
  throw new Error("not refused");
}

describe("decodeTransaction", () => {
  it("loads each lookup table the message names and resolves its keys (never as signers)", async () => {
    const to = Keypair.generate().publicKey;
    const lookups = lookupTableOf([to]);
    const asked: string[] = [];
    const view = await decodeTransaction(v0Base64(to, [lookups]), async (address) => {
      asked.push(address.toBase58());
      return address.equals(lookups.key) ? lookups : null;
    });
    expect(asked).toEqual([lookups.key.toBase58()]);
    const loaded = view.accountKeys.filter((k) => k.source !== "static");
    expect(loaded.map((k) => [k.pubkey.toBase58(), k.isSigner, k.lookupTable?.toBase58()])).toEqual([
      [to.toBase58(), false, lookups.key.toBase58()],
    ]);
  });

  it("refuses a transaction whose lookup table the node does not have", async () => {
    const to = Keypair.generate().publicKey;
    const lookups = lookupTableOf([to]);
    expect(await refusalOf(() => decodeTransaction(v0Base64(to, [lookups]), async () => null))).toBe(
      `lookup table ${lookups.key.toBase58()} not found`,
    );
  });

  it("reads lookup tables through the RPC connection", async () => {
    const to = Keypair.generate().publicKey;
    const lookups = lookupTableOf([to]);
    const connection = {
      async getAddressLookupTable(address: PublicKey) {
        return { context: { slot: 1 }, value: address.equals(lookups.key) ? lookups : null };
      },
    } as unknown as Connection;
    const loader = rpcLookupTableLoader(connection);
    expect(await loader(lookups.key)).toBe(lookups);
    expect(await loader(Keypair.generate().publicKey)).toBeNull();
    const view = await decodeTransaction(v0Base64(to, [lookups]), loader);
    expect(view.accountKeys.map((k) => k.pubkey.toBase58())).toContain(to.toBase58());
  });
});

describe("viewTransaction of hand-built messages", () => {
  it("refuses a message that asks for no signature: it has no fee payer", async () => {
    const tx = handBuilt(0, [payer.publicKey, SystemProgram.programId]);
    expect(tx.signatures).toHaveLength(0);
    expect(await refusalOf(() => viewTransaction(tx, []))).toBe("no fee payer");
  });

  it("refuses a message that asks for a signature but names no account", async () => {
    const tx = handBuilt(1, []);
    expect(await refusalOf(() => viewTransaction(tx, []))).toBe(
      "not a transaction (header: 1 signers but 0 account keys)",
    );
  });

  it("counts a signature slot as signed when any byte is set, not only when all are", () => {
    const tx = handBuilt(1, [payer.publicKey]);
    const partly = new Uint8Array(64);
    partly[5] = 1;
    tx.signatures[0] = partly;
    expect(viewTransaction(tx, []).signers.map((s) => s.isSigned)).toEqual([true]);
    tx.signatures[0] = new Uint8Array(64);
    expect(viewTransaction(tx, []).signers.map((s) => s.isSigned)).toEqual([false]);
  });
});

describe("transactionSignature", () => {
  it("is the fee payer's signature in base58", () => {
    const tx = handBuilt(1, [payer.publicKey]);
    const signature = new Uint8Array(64).fill(7);
    tx.signatures[0] = signature;
    expect(transactionSignature(tx)).toBe(bs58.encode(signature));
  });

  it("throws for a transaction with no signature slot", () => {
    expect(() => transactionSignature(handBuilt(0, [payer.publicKey]))).toThrow(
      new Error("transaction has no signature slot"),
    );
  });
});
