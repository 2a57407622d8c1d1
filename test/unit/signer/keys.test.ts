import { inspect } from "node:util";
import { Keypair } from "@solana/web3.js";
import bs58 from "bs58";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { verifyEd25519 } from "../../../src/chain/ed25519.js";
import { ConfigError } from "../../../src/core/errors.js";
import { secretForms as scrubberForms } from "../../../src/ops/secret-forms.js";
import { REDACTED, SecretScrubber } from "../../../src/ops/secret-scrubber.js";
import { keySourcesOf, loadWallets, refuseKeyVariables, Wallets } from "../../../src/signer/keys.js";

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

describe("refuseKeyVariables", () => {
  it("refuses each configured wallet's key variable that is set, naming it and the rule, and changes nothing", () => {
    const env: NodeJS.ProcessEnv = { A_KEY: "x", C_KEY: "", OTHER: "kept" };
    const wallets = [{ keyEnv: "A_KEY" }, { keyEnv: "B_KEY" }, { keyFile: "f" }, { keyEnv: "C_KEY" }];
    let error: unknown;
    try {
      refuseKeyVariables(wallets, "role worker", env);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems;
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(
      /^wallets\[0\]\.keyEnv: A_KEY is set for a process that loads no key \(role worker\);.*\/proc\/self\/environ.*unset A_KEY here$/,
    );
    expect(problems[1]).toMatch(/^wallets\[3\]\.keyEnv: C_KEY is set/);
    expect((error as Error).message).not.toContain("x,");
    expect(env).toEqual({ A_KEY: "x", C_KEY: "", OTHER: "kept" });
  });

  it("lets a process with none of the variables go on", () => {
    expect(() => refuseKeyVariables([{ keyEnv: "A_KEY" }, {}], "dry-run", { OTHER: "kept" })).not.toThrow();
  });
});

const silent = pino({ level: "silent" });

/** The ConfigError a call throws, or fails the test. */
async function configError(run: () => unknown): Promise<ConfigError> {
  let error: unknown;
  try {
    await run();
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(ConfigError);
  return error as ConfigError;
}

/** A 64-byte secret key whose second half is another wallet's public key. */
function mismatchedKey(): Uint8Array {
  const secret = Keypair.generate().secretKey.slice();
  secret.set(Keypair.generate().publicKey.toBytes(), 32);
  return secret;
}

describe("Wallets: what it holds and what it says", () => {
  it("answers has and size for the wallets held, by string or PublicKey", () => {
    const a = Keypair.generate();
    const b = Keypair.generate();
    const wallets = Wallets.fromSecretKeys([a.secretKey.slice(), b.secretKey.slice()]);
    expect(wallets.size).toBe(2);
    expect(wallets.has(a.publicKey)).toBe(true);
    expect(wallets.has(b.publicKey.toBase58())).toBe(true);
    expect(wallets.has(Keypair.generate().publicKey)).toBe(false);
    expect(Wallets.fromSecretKeys([]).size).toBe(0);
  });

  it("lists every wallet in its text form", () => {
    const a = Keypair.generate();
    const b = Keypair.generate();
    const wallets = Wallets.fromSecretKeys([a.secretKey.slice(), b.secretKey.slice()]);
    expect(String(wallets)).toBe(`Wallets(${a.publicKey.toBase58()}, ${b.publicKey.toBase58()})`);
    expect(inspect(wallets)).toBe(String(wallets));
  });

  it("names the wallet it holds no key for", () => {
    const wallets = Wallets.fromSecretKeys([Keypair.generate().secretKey.slice()]);
    const stranger = Keypair.generate().publicKey.toBase58();
    expect(() => wallets.sign(stranger, new Uint8Array([1]))).toThrow(`no key held for wallet ${stranger}`);
  });

  it("numbers the keys from 1 when no labels are given", async () => {
    const good = Keypair.generate().secretKey.slice();
    const error = await configError(() => Wallets.fromSecretKeys([good, new Uint8Array(32).fill(3)]));
    expect(error.problems).toEqual(["key #2: expected 64 bytes, got 32"]);
  });

  it("refuses a wallet loaded twice, naming it, and still zeroes every input", async () => {
    const kp = Keypair.generate();
    const first = kp.secretKey.slice();
    const second = kp.secretKey.slice();
    const error = await configError(() => Wallets.fromSecretKeys([first, second], ["a.json", "env K"]));
    expect(error.problems).toEqual([`env K: wallet ${kp.publicKey.toBase58()} is loaded twice`]);
    expect([...first, ...second].every((b) => b === 0)).toBe(true);
  });
});

describe("keySourcesOf", () => {
  it("takes keyFile before keyEnv, and keyEnv alone", () => {
    expect(
      keySourcesOf([
        { keyFile: "/k/a.json", keyEnv: "A_KEY" },
        { keyEnv: "B_KEY" },
        { keyFile: "/k/c.json" },
      ]),
    ).toEqual([
      { kind: "file", path: "/k/a.json", field: "wallets[0].keyFile" },
      { kind: "env", name: "B_KEY" },
      { kind: "file", path: "/k/c.json", field: "wallets[2].keyFile" },
    ]);
  });

  it("names every wallet that has neither, at once", async () => {
    const error = await configError(() =>
      keySourcesOf([{}, { keyEnv: "B_KEY" }, { keyFile: "", keyEnv: "" }]),
    );
    expect(error.problems).toEqual([
      "wallets[0]: the signer needs keyFile or keyEnv (live mode)",
      "wallets[2]: the signer needs keyFile or keyEnv (live mode)",
    ]);
  });
});

describe("loadWallets from environment variables: every rule", () => {
  it("trims the value around the key", async () => {
    const kp = Keypair.generate();
    const env: NodeJS.ProcessEnv = { K: `  ${bs58.encode(kp.secretKey)}\n` };
    const wallets = await loadWallets([{ kind: "env", name: "K" }], { logger: silent, env });
    expect(wallets.publicKeys()).toEqual([kp.publicKey.toBase58()]);
  });

  it("reads process.env when no env is given, and removes the variable from it", async () => {
    const name = `KEEPER_TEST_KEY_${process.pid}_${Date.now()}`;
    const kp = Keypair.generate();
    process.env[name] = bs58.encode(kp.secretKey);
    try {
      const wallets = await loadWallets([{ kind: "env", name }], { logger: silent });
      expect(wallets.publicKeys()).toEqual([kp.publicKey.toBase58()]);
      expect(name in process.env).toBe(false);
    } finally {
      delete process.env[name];
    }
  });

  it("calls a blank variable empty and removes it", async () => {
    const env: NodeJS.ProcessEnv = { K: " \t " };
    const error = await configError(() => loadWallets([{ kind: "env", name: "K" }], { logger: silent, env }));
    expect(error.problems).toEqual(["env K: not set or empty"]);
    expect(env).toEqual({});
  });

  it("names the variable whose key halves do not match, without the key", async () => {
    const secret = mismatchedKey();
    const forms = secretForms(secret);
    const env: NodeJS.ProcessEnv = { K: bs58.encode(secret) };
    const error = await configError(() => loadWallets([{ kind: "env", name: "K" }], { logger: silent, env }));
    expect(error.problems).toEqual(["env K: the public half of the key does not match its secret half"]);
    for (const form of forms) expect(error.message).not.toContain(form);
  });

  it("names the second variable holding a wallet already loaded", async () => {
    const kp = Keypair.generate();
    const env: NodeJS.ProcessEnv = { K1: bs58.encode(kp.secretKey), K2: bs58.encode(kp.secretKey) };
    const error = await configError(() =>
      loadWallets(
        [
          { kind: "env", name: "K1" },
          { kind: "env", name: "K2" },
        ],
        { logger: silent, env },
      ),
    );
    expect(error.problems).toEqual([`env K2: wallet ${kp.publicKey.toBase58()} is loaded twice`]);
  });

  it("refuses an empty list of sources", async () => {
    const error = await configError(() => loadWallets([], { logger: silent, env: {} }));
    expect(error.problems).toEqual(["wallets: at least one key source is required"]);
  });

  it("reports a bad source without a good one's key, and gives the scrubber only keys it read", async () => {
    const kp = Keypair.generate();
    const scrubber = new SecretScrubber();
    const env: NodeJS.ProcessEnv = { GOOD: bs58.encode(kp.secretKey) };
    const error = await configError(() =>
      loadWallets(
        [
          { kind: "env", name: "GOOD" },
          { kind: "env", name: "MISSING" },
        ],
        { logger: silent, env, scrubber },
      ),
    );
    expect(error.problems).toEqual(["env MISSING: not set or empty"]);
    expect(env).toEqual({});
    // The good key was read before the bad source was found: it is scrubbed all the same.
    expect(scrubber.scrub(bs58.encode(kp.secretKey))).toBe(REDACTED);
  });

  it("lets an error that is not a configuration problem through", async () => {
    const failing = {
      add() {
        throw new RangeError("scrubber full");
      },
    } as unknown as SecretScrubber;
    const env: NodeJS.ProcessEnv = { K: bs58.encode(Keypair.generate().secretKey) };
    await expect(
      loadWallets([{ kind: "env", name: "K" }], { logger: silent, env, scrubber: failing }),
    ).rejects.toThrow(RangeError);
  });
});
