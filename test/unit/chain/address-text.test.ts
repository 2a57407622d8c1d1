import { Keypair, PublicKey } from "@solana/web3.js";
import { describe, expect, it, vi } from "vitest";
import { addressOf, addressOrEmpty } from "../../../src/chain/address-text.js";

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
