import { Keypair, PublicKey } from "@solana/web3.js";
import { describe, expect, it, vi } from "vitest";
import { addressOf, addressOfBytes, addressOrEmpty, publicKeyOf } from "../../../src/chain/address-text.js";

describe("a key's text, encoded once", () => {
  it("is the key's base58 text, for every key, whichever object holds it", () => {
    for (let i = 0; i < 20; i++) {
      const key = Keypair.generate().publicKey;
      const copy = new PublicKey(key.toBytes());
      expect(addressOf(key)).toBe(key.toBase58());
      expect(addressOf(copy)).toBe(key.toBase58());
    }
  });

  it("encodes a key object once however often its text is asked for", () => {
    const key = Keypair.generate().publicKey;
    const encode = vi.spyOn(key, "toBase58");
    const texts = [addressOf(key), addressOf(key), addressOf(key)];
    expect(new Set(texts)).toEqual(new Set([key.toBase58()]));
    // The spy's own call above counts once: the memo made one more, not three.
    expect(encode).toHaveBeenCalledTimes(2);
  });

  it("answers an empty text for a missing key", () => {
    expect(addressOrEmpty(undefined)).toBe("");
    const key = Keypair.generate().publicKey;
    expect(addressOrEmpty(key)).toBe(key.toBase58());
  });
});

describe("the text of raw key bytes, remembered", () => {
  it("is the bytes' base58 text, read in place from any offset, and stays right when the memo is full", () => {
    const keys = Array.from({ length: 40 }, () => Keypair.generate().publicKey);
    for (let round = 0; round < 3; round += 1)
      for (const [i, key] of keys.entries()) {
        const pool = new Uint8Array(64);
        pool.set(key.toBytes(), i % 32);
        expect(addressOfBytes(pool.subarray(i % 32, (i % 32) + 32))).toBe(key.toBase58());
      }
    // Past the memo's bound (16,384 texts) every answer is still the right one.
    for (let i = 0; i < 17_000; i += 1) {
      const bytes = new Uint8Array(32);
      new DataView(bytes.buffer).setUint32(0, i);
      if (i % 1_000 === 0) expect(addressOfBytes(bytes)).toBe(new PublicKey(bytes).toBase58());
      else addressOfBytes(bytes);
    }
    expect(addressOfBytes(keys[0]?.toBytes() ?? new Uint8Array())).toBe(keys[0]?.toBase58());
  });

  it("gives key objects for raw bytes whose text is known without encoding them again", () => {
    const key = Keypair.generate().publicKey;
    const made = publicKeyOf(key.toBytes());
    const encode = vi.spyOn(made, "toBase58");
    expect(made.equals(key)).toBe(true);
    expect(addressOf(made)).toBe(key.toBase58());
    expect(encode).not.toHaveBeenCalled();
  });
});
