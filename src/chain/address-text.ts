import { PublicKey } from "@solana/web3.js";
import bs58 from "bs58";

/**
 * Each key object's base58 text, encoded once: one check of a transaction asks for the text of the
 * same few keys half a dozen times (its decode, static rules, reads, simulation), and web3.js
 * encodes anew each time (base58 over a BN, a claim's largest pure-CPU cost before this memo).
 * Keys are immutable; the memo lives as long as its key object does.
 */
const texts = new WeakMap<PublicKey, string>();

export function addressOf(key: PublicKey): string {
  let text = texts.get(key);
  if (text === undefined) {
    text = key.toBase58();
    texts.set(key, text);
  }
  return text;
}

/** The text of a key that may be missing (an index past the message's keys): "" then. */
export function addressOrEmpty(key: PublicKey | undefined): string {
  return key === undefined ? "" : addressOf(key);
}

/**
 * The base58 text of 32 raw key bytes (a token account's mint, owner, delegate), remembered: the
 * check reads the same few accounts (the wallet's, its payout mint's) several times a transaction,
 * and the same wallets and mints every claim. Bounded by dropping all when full.
 */
const textsOfBytes = new Map<string, string>();
const MAX_TEXTS_OF_BYTES = 16_384;

export function addressOfBytes(bytes: Uint8Array): string {
  const key = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");
  let text = textsOfBytes.get(key);
  if (text === undefined) {
    text = bs58.encode(bytes);
    if (textsOfBytes.size >= MAX_TEXTS_OF_BYTES) textsOfBytes.clear();
    textsOfBytes.set(key, text);
  }
  return text;
}

/**
 * A key object for 32 raw bytes whose text is known at once (addressOfBytes): the keys a transaction
 * names repeat from claim to claim (programs, mints, vaults), so their text is rarely encoded anew.
 */
export function publicKeyOf(bytes: Uint8Array): PublicKey {
  const key = new PublicKey(bytes);
  texts.set(key, addressOfBytes(bytes));
  return key;
}
