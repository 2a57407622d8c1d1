import type { PublicKey } from "@solana/web3.js";

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
