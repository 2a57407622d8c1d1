import { inspect } from "node:util";
import { Keypair } from "@solana/web3.js";
import bs58 from "bs58";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { verifyEd25519 } from "../../src/chain/ed25519.js";
import { ConfigError } from "../../src/core/errors.js";
import { secretForms as scrubberForms } from "../../src/ops/secret-forms.js";
import { REDACTED, SecretScrubber } from "../../src/ops/secret-scrubber.js";
import { dropKeyVariables, loadWallets, Wallets } from "../../src/signer/keys.js";

function secretForms(secret: Uint8Array): string[] {
  return [
    bs58.encode(secret),
    Buffer.from(secret).toString("base64"),
    JSON.stringify([...secret]),
    Buffer.from(secret).toString("hex"),
  ];
}

describe("Wallets", () => {
  it("signs by public key with a signature that verifies", () => {
    const a = Keypair.generate();
    const b = Keypair.generate();
    const wallets = Wallets.fromSecretKeys([a.secretKey.slice(), b.secretKey.slice()]);
    expect(wallets.publicKeys()).toEqual([a.publicKey.toBase58(), b.publicKey.toBase58()]);
    const message = new TextEncoder().encode("hello");
    const signature = wallets.sign(b.publicKey, message);
    expect(verifyEd25519(b.publicKey.toBytes(), message, signature)).toBe(true);
    expect(verifyEd25519(a.publicKey.toBytes(), message, signature)).toBe(false);
    expect(() => wallets.sign(Keypair.generate().publicKey, message)).toThrow(/no key held/);
  });

  it("shows only public keys through JSON, inspect, String and error paths", () => {
    const kp = Keypair.generate();
    const secret = kp.secretKey.slice();
    const wallets = Wallets.fromSecretKeys([kp.secretKey.slice()]);
    const shown = [
      JSON.stringify(wallets),
      JSON.stringify({ nested: { wallets } }),
      inspect(wallets, { depth: 10, showHidden: true }),
      inspect({ wallets }, { depth: 10, showHidden: true }),
      String(wallets),
      `${wallets}`,
    ];
    for (const text of shown) {
      expect(text).toContain(kp.publicKey.toBase58());
      for (const form of secretForms(secret)) expect(text).not.toContain(form);
      expect(text).not.toContain(bs58.encode(secret.subarray(0, 32)));
    }
    expect(Object.keys(wallets)).toEqual([]);
  });

  it("zeroes the secret it was given", () => {
    const secret = Keypair.generate().secretKey.slice();
    Wallets.fromSecretKeys([secret]);
    expect(secret.every((b) => b === 0)).toBe(true);
  });

  it.each([
    ["a short key", new Uint8Array(32).fill(7), /expected 64 bytes/],
    [
      "a key whose public half does not match",
      (() => {
        const s = Keypair.generate().secretKey.slice();
        s.set(Keypair.generate().publicKey.toBytes(), 32);
        return s;
      })(),
      /public half/,
    ],
  ])("refuses %s without showing it", (_name, secret, message) => {
    const forms = secretForms(secret);
    let error: unknown;
    try {
      Wallets.fromSecretKeys([secret], ["test-key"]);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).toContain("test-key");
    for (const form of forms) expect((error as Error).message).not.toContain(form);
  });
});

describe("loadWallets from an environment variable", () => {
  it("removes the variable once read and gives every form of the key to the scrubber", async () => {
    const kp = Keypair.generate();
    const secret = kp.secretKey.slice();
    const env: NodeJS.ProcessEnv = { WALLET_KEY: bs58.encode(kp.secretKey), OTHER: "kept" };
    const scrubber = new SecretScrubber();
    const wallets = await loadWallets([{ kind: "env", name: "WALLET_KEY" }], {
      logger: pino({ level: "silent" }),
      env,
      scrubber,
    });
    expect(wallets.publicKeys()).toEqual([kp.publicKey.toBase58()]);
    expect(env).toEqual({ OTHER: "kept" });
    for (const form of scrubberForms(secret))
      expect(scrubber.scrub(`leak: ${form}`)).toBe(`leak: ${REDACTED}`);
  });

  it("removes a variable it could not use too", async () => {
    const env: NodeJS.ProcessEnv = { WALLET_KEY: "not-a-key" };
    await expect(
      loadWallets([{ kind: "env", name: "WALLET_KEY" }], { logger: pino({ level: "silent" }), env }),
    ).rejects.toThrow(/env WALLET_KEY: not base58/);
    expect(env).toEqual({});
  });
});

describe("dropKeyVariables", () => {
  it("removes the configured wallets' key variables that are set, and names them", () => {
    const env: NodeJS.ProcessEnv = { A_KEY: "x", OTHER: "kept" };
    const removed = dropKeyVariables(
      [{ keyEnv: "A_KEY" }, { keyEnv: "B_KEY" }, { keyFile: "f" }] as Array<{
        keyEnv?: string;
      }>,
      env,
    );
    expect(removed).toEqual(["A_KEY"]);
    expect(env).toEqual({ OTHER: "kept" });
  });
});
