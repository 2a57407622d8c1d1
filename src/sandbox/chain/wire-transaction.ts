import { type PublicKey, type VersionedMessage, VersionedTransaction } from "@solana/web3.js";
import bs58 from "bs58";
import type { LiteSVM } from "litesvm";

/** The transaction shape LiteSVM's `sendTransaction`/`simulateTransaction` take (a @solana/kit Transaction). */
export type SvmTransaction = Parameters<LiteSVM["sendTransaction"]>[0];

/** A transaction received on the wire, with what the chain needs to check and execute it. */
export interface WireTransaction {
  readonly bytes: Uint8Array;
  /** base58 of the first signature: the transaction's id, as an RPC node reports it. */
  readonly signature: string;
  readonly signatures: readonly Uint8Array[];
  readonly message: VersionedMessage;
  readonly messageBytes: Uint8Array;
  readonly version: "legacy" | 0;
  readonly blockhash: string;
  readonly signerKeys: readonly PublicKey[];
}

export class MalformedTransactionError extends Error {
  override readonly name = "MalformedTransactionError";
}

/** Reads the short-vec (compact-u16) length prefix at the start of the wire bytes. */
function readShortVec(bytes: Uint8Array): { value: number; size: number } {
  let value = 0;
  for (let size = 0; size < 3; size++) {
    const byte = bytes[size];
    if (byte === undefined) throw new MalformedTransactionError("truncated signature count");
    value |= (byte & 0x7f) << (7 * size);
    if ((byte & 0x80) === 0) return { value, size: size + 1 };
  }
  throw new MalformedTransactionError("bad signature count");
}

/** Decodes legacy or v0 wire bytes; the message bytes are sliced, not re-serialized, so they stay exact. */
export function decodeWireTransaction(bytes: Uint8Array): WireTransaction {
  let parsed: VersionedTransaction;
  try {
    parsed = VersionedTransaction.deserialize(bytes);
  } catch (error) {
    throw new MalformedTransactionError(`cannot decode transaction: ${(error as Error).message}`);
  }
  const { value: count, size } = readShortVec(bytes);
  const messageStart = size + 64 * count;
  if (bytes.length <= messageStart) throw new MalformedTransactionError("no message after signatures");
  const signatures = Array.from({ length: count }, (_, i) => bytes.slice(size + 64 * i, size + 64 * (i + 1)));
  const message = parsed.message;
  const required = message.header.numRequiredSignatures;
  if (count !== required || count === 0) {
    throw new MalformedTransactionError(`${count} signatures for ${required} required signers`);
  }
  const first = signatures[0];
  if (first === undefined) throw new MalformedTransactionError("no signature");
  return {
    bytes,
    signature: bs58.encode(first),
    signatures,
    message,
    messageBytes: bytes.slice(messageStart),
    version: message.version === "legacy" ? "legacy" : 0,
    blockhash: message.recentBlockhash,
    signerKeys: message.staticAccountKeys.slice(0, required),
  };
}

/**
 * The kit-shaped transaction LiteSVM executes. Missing signatures stay as 64 zero bytes (not null) so
 * LiteSVM's own signature check fails them, as a validator would, instead of kit throwing first.
 */
export function toSvmTransaction(tx: WireTransaction): SvmTransaction {
  const signatures: Record<string, Uint8Array> = {};
  tx.signerKeys.forEach((key, i) => {
    signatures[key.toBase58()] = tx.signatures[i] ?? new Uint8Array(64);
  });
  return Object.freeze({ messageBytes: tx.messageBytes, signatures }) as unknown as SvmTransaction;
}

/** Whether every required signature is present (non-zero); says nothing about validity. */
export function hasAllSignatures(tx: WireTransaction): boolean {
  return tx.signatures.every((sig) => sig.some((byte) => byte !== 0));
}
