import { VersionedTransaction } from "@solana/web3.js";

/**
 * A transaction's wire bytes read in place (legacy and v0): signatures, header, keys, blockhash,
 * instructions and lookup tables as views of the bytes, nothing re-encoded. The signer checks these
 * bytes, signs their message slice and sends them with its signature written in: what is sent is
 * what was checked, byte for byte, with no serializer in between.
 *
 * Strict where web3.js's decoder is lenient (it was followed by a re-encode and compare): every length
 * is a canonical compact-u16, the header's counts fit the keys, and nothing follows the last field.
 */
export interface WireTransaction {
  /** The bytes as given. */
  readonly bytes: Uint8Array;
  /** Offset of signature 0; signature i lies at signaturesAt + 64 i. */
  readonly signaturesAt: number;
  readonly signatures: readonly Uint8Array[];
  /** The message (what every signer signs) is bytes[messageAt..]. */
  readonly messageAt: number;
  readonly version: "legacy" | 0;
  readonly header: {
    readonly numRequiredSignatures: number;
    readonly numReadonlySignedAccounts: number;
    readonly numReadonlyUnsignedAccounts: number;
  };
  readonly staticKeys: readonly Uint8Array[];
  readonly recentBlockhash: Uint8Array;
  readonly instructions: readonly WireInstruction[];
  readonly lookups: readonly WireLookup[];
}

export interface WireInstruction {
  readonly programIdIndex: number;
  readonly accountKeyIndexes: readonly number[];
  readonly data: Uint8Array;
}

export interface WireLookup {
  readonly accountKey: Uint8Array;
  readonly writableIndexes: readonly number[];
  readonly readonlyIndexes: readonly number[];
}

/** Bytes that are not exactly one transaction; the message says which rule and where. */
export class WireError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WireError";
  }
}

const SIGNATURE_BYTES = 64;
const KEY_BYTES = 32;
const VERSION_PREFIX = 0x80;

/** Reads `bytes` as one transaction; throws WireError naming the field for anything else. */
export function readWireTransaction(bytes: Uint8Array): WireTransaction {
  const reader = new Reader(bytes);
  const signatureCount = reader.length("signature count");
  const signaturesAt = reader.at;
  const signatures = reader.many(signatureCount, () => reader.take(SIGNATURE_BYTES, "signatures"));
  const messageAt = reader.at;
  const first = reader.byte("message prefix");
  const version = (first & VERSION_PREFIX) === 0 ? "legacy" : first & ~VERSION_PREFIX;
  if (version !== "legacy" && version !== 0)
    throw new WireError(`message version ${version}: only legacy and v0 are known`);
  const header = {
    numRequiredSignatures: version === "legacy" ? first : reader.byte("header"),
    numReadonlySignedAccounts: reader.byte("header"),
    numReadonlyUnsignedAccounts: reader.byte("header"),
  };
  const staticKeys = reader.many(reader.length("account key count"), () =>
    reader.take(KEY_BYTES, "account keys"),
  );
  checkHeader(header, staticKeys.length);
  const recentBlockhash = reader.take(KEY_BYTES, "recent blockhash");
  const instructions = reader.many(reader.length("instruction count"), () => ({
    programIdIndex: reader.byte("instruction program index"),
    accountKeyIndexes: reader.indexes("instruction accounts"),
    data: reader.take(reader.length("instruction data length"), "instruction data"),
  }));
  const lookups =
    version === "legacy"
      ? []
      : reader.many(reader.length("lookup table count"), () => ({
          accountKey: reader.take(KEY_BYTES, "lookup table key"),
          writableIndexes: reader.indexes("lookup writable indexes"),
          readonlyIndexes: reader.indexes("lookup readonly indexes"),
        }));
  if (reader.at !== bytes.length)
    throw new WireError(`${bytes.length - reader.at} bytes after the end of the transaction`);
  return {
    bytes,
    signaturesAt,
    signatures,
    messageAt,
    version,
    header,
    staticKeys,
    recentBlockhash,
    instructions,
    lookups,
  };
}

/** The runtime's own sanity rule: the signed and the read-only keys are keys of the message. */
function checkHeader(header: WireTransaction["header"], keys: number): void {
  const { numRequiredSignatures, numReadonlySignedAccounts, numReadonlyUnsignedAccounts } = header;
  if (numRequiredSignatures > keys)
    throw new WireError(`header: ${numRequiredSignatures} signers but ${keys} account keys`);
  if (numReadonlySignedAccounts > numRequiredSignatures)
    throw new WireError(
      `header: ${numReadonlySignedAccounts} read-only signers of ${numRequiredSignatures} signers`,
    );
  if (numReadonlyUnsignedAccounts > keys - numRequiredSignatures)
    throw new WireError(
      `header: ${numReadonlyUnsignedAccounts} read-only unsigned keys of ${keys - numRequiredSignatures}`,
    );
}

/** The message bytes: what each signer signs. A view, not a copy. */
export function messageOf(wire: WireTransaction): Uint8Array {
  return wire.bytes.subarray(wire.messageAt);
}

/** A copy of the bytes with `signature` in signer slot `index` (the rest as they were). */
export function withSignature(wire: WireTransaction, index: number, signature: Uint8Array): Uint8Array {
  if (index < 0 || index >= wire.signatures.length)
    throw new RangeError(`signer slot ${index} of ${wire.signatures.length}`);
  if (signature.length !== SIGNATURE_BYTES)
    throw new RangeError(`a signature is 64 bytes, got ${signature.length}`);
  const signed = new Uint8Array(wire.bytes);
  signed.set(signature, wire.signaturesAt + SIGNATURE_BYTES * index);
  return signed;
}

/**
 * The wire bytes as a web3.js transaction for the RPC calls that take one (the policy's simulation):
 * its `serialize()` answers the bytes themselves, so what is simulated is exactly what was checked
 * and will be signed, and nothing is decoded unless a caller looks inside (a test's fake node, say).
 * It only reads: signing it would change nothing it serializes, so that throws.
 */
export function transactionOfWire(bytes: Uint8Array): VersionedTransaction {
  let decoded: VersionedTransaction | undefined;
  const inside = () => {
    decoded ??= VersionedTransaction.deserialize(bytes);
    return decoded;
  };
  const readOnly = () => {
    throw new Error("a transaction read from its wire bytes is not signed through web3.js");
  };
  return Object.create(VersionedTransaction.prototype, {
    serialize: { value: () => bytes.slice() },
    message: { get: () => inside().message, enumerable: true },
    signatures: { get: () => inside().signatures, enumerable: true },
    sign: { value: readOnly },
    addSignature: { value: readOnly },
  }) as VersionedTransaction;
}

/** A cursor over the bytes that refuses to read past their end. */
class Reader {
  at = 0;
  constructor(private readonly bytes: Uint8Array) {}

  byte(field: string): number {
    const value = this.bytes[this.at];
    if (value === undefined) throw new WireError(`ends inside the ${field}`);
    this.at += 1;
    return value;
  }

  take(count: number, field: string): Uint8Array {
    if (this.at + count > this.bytes.length) throw new WireError(`ends inside the ${field}`);
    const view = this.bytes.subarray(this.at, this.at + count);
    this.at += count;
    return view;
  }

  many<T>(count: number, read: () => T): T[] {
    const items: T[] = [];
    for (let i = 0; i < count; i += 1) items.push(read());
    return items;
  }

  indexes(field: string): number[] {
    return [...this.take(this.length(field), field)];
  }

  /**
   * A compact-u16 (Solana's short vector length): 7 bits a byte, low first, at most three bytes, in
   * its shortest form (a longer one would encode the same transaction as different bytes).
   */
  length(field: string): number {
    let value = 0;
    for (let size = 0; size < 3; size += 1) {
      const byte = this.byte(field);
      value |= (byte & 0x7f) << (7 * size);
      if ((byte & 0x80) === 0) {
        if (size > 0 && byte === 0) throw new WireError(`${field}: a length not in its shortest form`);
        if (value > 0xffff) throw new WireError(`${field}: a length past 65535`);
        return value;
      }
    }
    throw new WireError(`${field}: a length longer than three bytes`);
  }
}
