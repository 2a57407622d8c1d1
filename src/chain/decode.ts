import {
  type AddressLookupTableAccount,
  type Connection,
  type PublicKey,
  VersionedTransaction,
} from "@solana/web3.js";
import bs58 from "bs58";
import { PolicyRefusal } from "../core/errors.js";
import { addressOf } from "./address-text.js";

/** Where an account key of a transaction comes from. */
export type AccountSource = "static" | "lookup-writable" | "lookup-readonly";

export interface AccountKeyView {
  index: number;
  pubkey: PublicKey;
  isSigner: boolean;
  isWritable: boolean;
  source: AccountSource;
  /** The lookup table it was loaded from, for loaded keys. */
  lookupTable?: PublicKey;
}

export interface InstructionView {
  /** Position in the message (top-level instructions only). */
  index: number;
  programId: PublicKey;
  programIndex: number;
  accountIndexes: number[];
  accounts: PublicKey[];
  data: Uint8Array;
}

export interface SignerView {
  pubkey: PublicKey;
  /** The signature slot is filled (not all zeroes). Validity is checked by the policy, not here. */
  isSigned: boolean;
  signature: Uint8Array;
}

/** One uniform view of a legacy or v0 transaction, with its lookup tables resolved. */
export interface DecodedTransaction {
  transaction: VersionedTransaction;
  version: "legacy" | 0;
  feePayer: PublicKey;
  recentBlockhash: string;
  header: { numRequiredSignatures: number; numReadonlySigned: number; numReadonlyUnsigned: number };
  accountKeys: AccountKeyView[];
  instructions: InstructionView[];
  signers: SignerView[];
  /** Serialized message: what every signer signs. */
  messageBytes: Uint8Array;
}

/** Reads lookup tables; the RPC in production, a fixed set in unit tests. */
export type LookupTableLoader = (address: PublicKey) => Promise<AddressLookupTableAccount | null>;

export function rpcLookupTableLoader(connection: Connection): LookupTableLoader {
  return async (address) => (await connection.getAddressLookupTable(address)).value;
}

/** Parses the wire bytes only; a refusal `decode_failed` for anything that is not exactly one transaction. */
export function parseWireTransaction(transactionBase64: string): VersionedTransaction {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(transactionBase64) || transactionBase64.length === 0) {
    throw new PolicyRefusal("decode_failed", "not base64");
  }
  const bytes = Buffer.from(transactionBase64, "base64");
  let transaction: VersionedTransaction;
  try {
    transaction = VersionedTransaction.deserialize(bytes);
  } catch (error) {
    throw new PolicyRefusal("decode_failed", `not a transaction (${(error as Error).message})`);
  }
  // Trailing or re-encoded bytes would mean we check one thing and send another: refuse them.
  if (!Buffer.from(transaction.serialize()).equals(bytes)) {
    throw new PolicyRefusal("decode_failed", "bytes do not round-trip (trailing or non-canonical data)");
  }
  return transaction;
}

/** Decodes base64 wire bytes and resolves lookup tables into the uniform view. */
export async function decodeTransaction(
  transactionBase64: string,
  loadLookupTable: LookupTableLoader,
): Promise<DecodedTransaction> {
  const transaction = parseWireTransaction(transactionBase64);
  const tables: AddressLookupTableAccount[] = [];
  for (const lookup of transaction.message.addressTableLookups) {
    const table = await loadLookupTable(lookup.accountKey);
    if (!table) {
      throw new PolicyRefusal("decode_failed", `lookup table ${addressOf(lookup.accountKey)} not found`);
    }
    tables.push(table);
  }
  return viewTransaction(transaction, tables);
}

/** The uniform view of a parsed transaction, given its lookup tables (pure). */
export function viewTransaction(
  transaction: VersionedTransaction,
  tables: readonly AddressLookupTableAccount[],
): DecodedTransaction {
  const message = transaction.message;
  const header = message.header;
  const lookups = message.addressTableLookups;
  const staticKeys = message.staticAccountKeys;

  const accountKeys: AccountKeyView[] = staticKeys.map((pubkey, index) => ({
    index,
    pubkey,
    isSigner: index < header.numRequiredSignatures,
    isWritable: message.isAccountWritable(index),
    source: "static",
  }));
  const loaded = (kind: "writable" | "readonly") => {
    for (const lookup of lookups) {
      const table = tables.find((t) => t.key.equals(lookup.accountKey));
      if (!table)
        throw new PolicyRefusal("decode_failed", `lookup table ${addressOf(lookup.accountKey)} missing`);
      const indexes = kind === "writable" ? lookup.writableIndexes : lookup.readonlyIndexes;
      for (const i of indexes) {
        const pubkey = table.state.addresses[i];
        if (!pubkey) {
          throw new PolicyRefusal("decode_failed", `lookup table ${addressOf(table.key)} has no index ${i}`);
        }
        accountKeys.push({
          index: accountKeys.length,
          pubkey,
          isSigner: false,
          isWritable: kind === "writable",
          source: kind === "writable" ? "lookup-writable" : "lookup-readonly",
          lookupTable: table.key,
        });
      }
    }
  };
  // Account index order of a v0 message: static keys, then every table's writable, then every readonly.
  loaded("writable");
  // Stryker disable next-line StringLiteral: loaded() only compares its argument with "writable"
  loaded("readonly");

  const seen = new Set<string>();
  for (const key of accountKeys) {
    const text = addressOf(key.pubkey);
    if (seen.has(text)) throw new PolicyRefusal("decode_failed", `account ${text} appears twice`);
    seen.add(text);
  }

  const instructions: InstructionView[] = message.compiledInstructions.map((ix, index) => {
    const program = accountKeys[ix.programIdIndex];
    if (program?.source !== "static") {
      throw new PolicyRefusal(
        "decode_failed",
        `instruction ${index}: bad program index ${ix.programIdIndex}`,
      );
    }
    const accounts = ix.accountKeyIndexes.map((i) => {
      const key = accountKeys[i];
      if (!key) throw new PolicyRefusal("decode_failed", `instruction ${index}: bad account index ${i}`);
      return key.pubkey;
    });
    return {
      index,
      programId: program.pubkey,
      programIndex: ix.programIdIndex,
      accountIndexes: [...ix.accountKeyIndexes],
      accounts,
      data: ix.data,
    };
  });

  const feePayer = staticKeys[0];
  if (!feePayer || header.numRequiredSignatures < 1) {
    throw new PolicyRefusal("decode_failed", "no fee payer");
  }
  if (transaction.signatures.length !== header.numRequiredSignatures) {
    throw new PolicyRefusal("decode_failed", "signature count does not match the header");
  }
  const signers: SignerView[] = transaction.signatures.map((signature, i) => ({
    pubkey: staticKeys[i] as PublicKey,
    isSigned: signature.some((b) => b !== 0),
    signature,
  }));

  return {
    transaction,
    version: transaction.version === "legacy" ? "legacy" : 0,
    feePayer,
    recentBlockhash: message.recentBlockhash,
    header: {
      numRequiredSignatures: header.numRequiredSignatures,
      numReadonlySigned: header.numReadonlySignedAccounts,
      numReadonlyUnsigned: header.numReadonlyUnsignedAccounts,
    },
    accountKeys,
    instructions,
    signers,
    messageBytes: message.serialize(),
  };
}

/** The transaction's id: its first signature (the fee payer's), base58. */
export function transactionSignature(transaction: VersionedTransaction): string {
  const first = transaction.signatures[0];
  if (!first) throw new Error("transaction has no signature slot");
  return bs58.encode(first);
}
