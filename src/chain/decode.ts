import {
  type AddressLookupTableAccount,
  type Connection,
  PublicKey,
  VersionedTransaction,
} from "@solana/web3.js";
import bs58 from "bs58";
import { PolicyRefusal } from "../core/errors.js";
import { addressOf, addressOfBytes, publicKeyOf } from "./address-text.js";
import { messageOf, readWireTransaction, WireError, type WireTransaction } from "./wire-transaction.js";

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
  /** The wire bytes as the service built them, read in place: signed and sent as they are. */
  wire: WireTransaction;
  version: "legacy" | 0;
  feePayer: PublicKey;
  recentBlockhash: string;
  header: { numRequiredSignatures: number; numReadonlySigned: number; numReadonlyUnsigned: number };
  accountKeys: AccountKeyView[];
  instructions: InstructionView[];
  signers: SignerView[];
  /** Serialized message: what every signer signs (a view of the wire bytes). */
  messageBytes: Uint8Array;
}

/** Reads lookup tables; the RPC in production, a fixed set in unit tests. */
export type LookupTableLoader = (address: PublicKey) => Promise<AddressLookupTableAccount | null>;

export function rpcLookupTableLoader(connection: Connection): LookupTableLoader {
  return async (address) => (await connection.getAddressLookupTable(address)).value;
}

/** Parses the wire bytes only; a refusal `decode_failed` for anything that is not exactly one transaction. */
export function parseWireTransaction(transactionBase64: string): WireTransaction {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(transactionBase64) || transactionBase64.length === 0) {
    throw new PolicyRefusal("decode_failed", "not base64");
  }
  return readOrRefuse(Buffer.from(transactionBase64, "base64"));
}

/** The wire reading of `bytes`; a refusal `decode_failed` naming the broken rule otherwise. */
function readOrRefuse(bytes: Uint8Array): WireTransaction {
  try {
    return readWireTransaction(bytes);
  } catch (error) {
    if (error instanceof WireError)
      throw new PolicyRefusal("decode_failed", `not a transaction (${error.message})`);
    throw error;
  }
}

/** Decodes base64 wire bytes and resolves lookup tables into the uniform view. */
export async function decodeTransaction(
  transactionBase64: string,
  loadLookupTable: LookupTableLoader,
): Promise<DecodedTransaction> {
  const wire = parseWireTransaction(transactionBase64);
  const tables: AddressLookupTableAccount[] = [];
  for (const lookup of wire.lookups) {
    const table = await loadLookupTable(new PublicKey(lookup.accountKey));
    if (!table) {
      throw new PolicyRefusal("decode_failed", `lookup table ${addressOfBytes(lookup.accountKey)} not found`);
    }
    tables.push(table);
  }
  return viewTransaction(wire, tables);
}

/**
 * The uniform view of a parsed transaction, given its lookup tables (pure). A web3.js transaction
 * object is read through its serialized bytes, like any other.
 */
export function viewTransaction(
  source: WireTransaction | VersionedTransaction,
  tables: readonly AddressLookupTableAccount[],
): DecodedTransaction {
  const wire = source instanceof VersionedTransaction ? readOrRefuse(source.serialize()) : source;
  const { header, lookups } = wire;
  const staticKeys = wire.staticKeys.map((bytes) => publicKeyOf(bytes));
  const accountKeys: AccountKeyView[] = staticKeys.map((pubkey, index) => ({
    index,
    pubkey,
    isSigner: index < header.numRequiredSignatures,
    isWritable: isStaticKeyWritable(header, staticKeys.length, index),
    source: "static",
  }));
  const loaded = (kind: "writable" | "readonly") => {
    for (const lookup of lookups) {
      const table = tables.find((t) => addressOf(t.key) === addressOfBytes(lookup.accountKey));
      if (!table)
        throw new PolicyRefusal("decode_failed", `lookup table ${addressOfBytes(lookup.accountKey)} missing`);
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

  const instructions: InstructionView[] = wire.instructions.map((ix, index) => {
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
      data: ix.data.slice(),
    };
  });

  const feePayer = staticKeys[0];
  if (!feePayer || header.numRequiredSignatures < 1) {
    throw new PolicyRefusal("decode_failed", "no fee payer");
  }
  if (wire.signatures.length !== header.numRequiredSignatures) {
    throw new PolicyRefusal("decode_failed", "signature count does not match the header");
  }
  const signers: SignerView[] = wire.signatures.map((signature, i) => ({
    pubkey: staticKeys[i] as PublicKey,
    isSigned: signature.some((b) => b !== 0),
    signature: signature.slice(),
  }));

  return {
    wire,
    version: wire.version,
    feePayer,
    recentBlockhash: bs58.encode(wire.recentBlockhash),
    header: {
      numRequiredSignatures: header.numRequiredSignatures,
      numReadonlySigned: header.numReadonlySignedAccounts,
      numReadonlyUnsigned: header.numReadonlyUnsignedAccounts,
    },
    accountKeys,
    instructions,
    signers,
    messageBytes: messageOf(wire),
  };
}

/**
 * The message's own writability of static key `index` (the header's counts; the runtime may demote a
 * reserved account further): signed keys first, their read-only ones last, then unsigned keys, their
 * read-only ones last.
 */
function isStaticKeyWritable(header: WireTransaction["header"], keys: number, index: number): boolean {
  const signed = header.numRequiredSignatures;
  if (index < signed) return index < signed - header.numReadonlySignedAccounts;
  return index - signed < keys - signed - header.numReadonlyUnsignedAccounts;
}

/** The transaction's id: its first signature (the fee payer's), base58. */
export function transactionSignature(transaction: VersionedTransaction): string {
  const first = transaction.signatures[0];
  if (!first) throw new Error("transaction has no signature slot");
  return bs58.encode(first);
}
