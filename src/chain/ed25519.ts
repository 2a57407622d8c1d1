import { createPublicKey, type KeyObject, verify } from "node:crypto";

/**
 * Ed25519 verification with Node's own crypto. Solana public keys are the raw 32 bytes; Node wants
 * them wrapped in an SPKI envelope whose prefix is fixed for Ed25519.
 */
const SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");

export function ed25519PublicKey(raw: Uint8Array): KeyObject {
  if (raw.length !== 32) throw new RangeError(`an Ed25519 public key is 32 bytes, got ${raw.length}`);
  return createPublicKey({ key: Buffer.concat([SPKI_PREFIX, raw]), format: "der", type: "spki" });
}

/**
 * Key objects of the co-signers seen, by their bytes: the same service signer co-signs every claim,
 * and wrapping its key (an SPKI parse) cost about as much as the verification itself. Bounded by
 * dropping all when full, so a service naming a new key each time costs a parse, not memory.
 */
const verifyingKeys = new Map<string, KeyObject>();
const MAX_VERIFYING_KEYS = 1_024;

function verifyingKeyOf(raw: Uint8Array): KeyObject {
  const id = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString("latin1");
  let key = verifyingKeys.get(id);
  if (key === undefined) {
    key = ed25519PublicKey(raw);
    if (verifyingKeys.size >= MAX_VERIFYING_KEYS) verifyingKeys.clear();
    verifyingKeys.set(id, key);
  }
  return key;
}

/** True when `signature` is a valid Ed25519 signature of `message` by the raw public key. */
export function verifyEd25519(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  // Stryker disable next-line ConditionalExpression: Node's verify also answers false for a signature that is not 64 bytes
  if (signature.length !== 64) return false;
  return verify(null, message, verifyingKeyOf(publicKey), signature);
}

/** The raw 32 bytes of an Ed25519 public key object. */
export function rawPublicKey(key: KeyObject): Uint8Array {
  const der = key.export({ format: "der", type: "spki" });
  return new Uint8Array(der.subarray(der.length - 32));
}
