import { createPrivateKey, generateKeyPairSync, sign } from "node:crypto";
import { Keypair } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import { ed25519PublicKey, rawPublicKey, verifyEd25519 } from "../../../src/chain/ed25519.js";

const message = new TextEncoder().encode("the message every signer signs");

/** Signs with a Solana keypair (its first 32 secret bytes are the Ed25519 seed), through Node's PKCS8 form. */
function signWith(keypair: Keypair, bytes: Uint8Array): Uint8Array {
  const pkcs8 = Buffer.concat([
    Buffer.from("302e020100300506032b657004220420", "hex"),
    keypair.secretKey.subarray(0, 32),
  ]);
  return new Uint8Array(sign(null, bytes, createPrivateKey({ key: pkcs8, format: "der", type: "pkcs8" })));
}

describe("ed25519", () => {
  it("verifies a Solana keypair's signature and refuses another key, message or a bad signature", () => {
    const signer = Keypair.generate();
    const signature = signWith(signer, message);
    const key = signer.publicKey.toBytes();
    expect(verifyEd25519(key, message, signature)).toBe(true);
    expect(verifyEd25519(Keypair.generate().publicKey.toBytes(), message, signature)).toBe(false);
    expect(verifyEd25519(key, new TextEncoder().encode("another message"), signature)).toBe(false);
    const flipped = signature.slice();
    flipped[10] = (flipped[10] ?? 0) ^ 1;
    expect(verifyEd25519(key, message, flipped)).toBe(false);
    expect(verifyEd25519(key, message, signature.subarray(0, 63))).toBe(false);
    expect(verifyEd25519(key, message, new Uint8Array([...signature, 0]))).toBe(false);
  });

  it("remembers co-signers' keys by their bytes, never one key's answer for another's, past its bound", () => {
    const signers = Array.from({ length: 3 }, () => Keypair.generate());
    const signatures = signers.map((signer) => signWith(signer, message));
    // A view into a larger buffer at an offset reads as the same key as its own copy.
    const inLargerBuffer = (key: Uint8Array) => {
      const buffer = new Uint8Array(40);
      buffer.set(key, 5);
      return buffer.subarray(5, 37);
    };
    for (let round = 0; round < 2; round++)
      signers.forEach((signer, i) => {
        const key = signer.publicKey.toBytes();
        expect(verifyEd25519(inLargerBuffer(key), message, signatures[i] ?? new Uint8Array())).toBe(true);
        const other = signatures[(i + 1) % signers.length] ?? new Uint8Array();
        expect(verifyEd25519(key, message, other)).toBe(false);
      });
    // More keys than the memo holds: it starts over, and every answer stays right.
    const first = signatures[0] ?? new Uint8Array();
    const keyOf = (i: number) => signers[i]?.publicKey.toBytes() ?? new Uint8Array();
    for (let i = 0; i < 1_100; i++)
      expect(verifyEd25519(Keypair.generate().publicKey.toBytes(), message, first)).toBe(false);
    expect(verifyEd25519(keyOf(0), message, first)).toBe(true);
    expect(verifyEd25519(keyOf(1), message, first)).toBe(false);
  });

  it("refuses a public key that is not 32 bytes, saying how long it was", () => {
    expect(() => ed25519PublicKey(new Uint8Array(31))).toThrow(
      new RangeError("an Ed25519 public key is 32 bytes, got 31"),
    );
    expect(() => ed25519PublicKey(new Uint8Array(33))).toThrow("an Ed25519 public key is 32 bytes, got 33");
  });

  it("gives back the raw 32 bytes of a key object, the same as Solana's public key", () => {
    const signer = Keypair.generate();
    const key = ed25519PublicKey(signer.publicKey.toBytes());
    expect(rawPublicKey(key)).toEqual(signer.publicKey.toBytes());
    // And a key made by Node: its raw bytes verify what its private key signed.
    const pair = generateKeyPairSync("ed25519");
    const raw = rawPublicKey(pair.publicKey);
    expect(raw).toHaveLength(32);
    expect(verifyEd25519(raw, message, sign(null, message, pair.privateKey))).toBe(true);
  });
});
