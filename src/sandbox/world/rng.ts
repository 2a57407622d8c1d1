import { createHash, createPrivateKey, createPublicKey, type KeyObject } from "node:crypto";
import { Keypair, PublicKey } from "@solana/web3.js";
import bs58 from "bs58";

/** A seeded PRNG (mulberry32): a 32-bit state, uniform floats in [0, 1). */
export type Random = () => number;

export function mulberry32(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** Avalanche of a 32-bit integer (murmur3's finaliser): nearby inputs give unrelated outputs. */
export function fmix32(value: number): number {
  let h = value >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Hashes integers into one 32-bit value; used for noise that must be random-access (price at minute m). */
export function hash32(...parts: readonly number[]): number {
  let h = 0x811c9dc5;
  for (const part of parts) h = fmix32(h ^ Math.imul(part >>> 0, 0x9e3779b1));
  return h;
}

/** FNV-1a of a string, finalised: a 32-bit seed for a labelled stream. */
export function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return fmix32(h);
}

/** A PRNG for one labelled part of the world, so adding a part does not shift the others' numbers. */
export function streamFor(seed: number, label: string): Random {
  return mulberry32(hashString(`${label}#${seed}`));
}

/** Integer in [min, max] inclusive. */
export function intBetween(random: Random, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}

export function pick<T>(random: Random, items: readonly T[]): T {
  const item = items[Math.floor(random() * items.length)];
  if (item === undefined) throw new RangeError("pick: empty list");
  return item;
}

export function seedBytes(label: string, seed: number): Uint8Array {
  return createHash("sha256").update(`${label}${seed}`).digest();
}

/** A deterministic address for an account nobody signs for (positions, orders, markets). */
export function derivePubkey(label: string, seed: number): PublicKey {
  return new PublicKey(seedBytes(label, seed));
}

/** The DER header of a PKCS #8 Ed25519 private key; the 32-byte seed follows it. */
const ED25519_PKCS8_HEADER = Buffer.from("302e020100300506032b657004220420", "hex");
/** The length of an SPKI Ed25519 public key's DER header; the 32-byte key follows it. */
const ED25519_SPKI_HEADER_LENGTH = 12;

/** Node's key object of an Ed25519 private key, from its 32-byte seed (a Solana secret key's first half). */
export function ed25519PrivateKey(seed: Uint8Array): KeyObject {
  return createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_HEADER, seed]), format: "der", type: "pkcs8" });
}

/**
 * A deterministic keypair for accounts the sandbox or its users sign with (wallets, vault authorities).
 * The public key comes from Node's crypto (OpenSSL), twice as fast as web3.js's `Keypair.fromSeed` and
 * the same key: 10,000 wallets take about a second, not two.
 */
export function deriveKeypair(label: string, seed: number): Keypair {
  const secret = seedBytes(label, seed);
  const privateKey = ed25519PrivateKey(secret);
  const spki = createPublicKey(privateKey).export({ format: "der", type: "spki" });
  const publicKey = Uint8Array.from(spki.subarray(ED25519_SPKI_HEADER_LENGTH));
  const secretKey = new Uint8Array(64);
  secretKey.set(secret);
  secretKey.set(publicKey, 32);
  return new Keypair({ publicKey, secretKey });
}

/** A deterministic 64-byte, base58 transaction signature for records made before the world began. */
export function deriveSignature(label: string, seed: number): string {
  return bs58.encode(createHash("sha512").update(`${label}${seed}`).digest());
}

/** A short, stable hex tag (ids, hashes) from a label. */
export function hexTag(label: string, length = 16): string {
  return createHash("sha256").update(label).digest("hex").slice(0, length);
}
