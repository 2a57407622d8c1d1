import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Keypair } from "@solana/web3.js";
import bs58 from "bs58";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError } from "../../../src/core/errors.js";
import { secretForms } from "../../../src/ops/secret-forms.js";
import { REDACTED, SecretScrubber } from "../../../src/ops/secret-scrubber.js";
import { loadWallets } from "../../../src/signer/keys.js";
import { captureLogger } from "./helpers.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "keeper-keys-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function keyFile(name: string, content: string, mode = 0o600): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, content, { mode });
  await chmod(path, mode);
  return path;
}

describe("loadWallets", () => {
  it("loads a CLI keypair file and a base58 env key, without warnings for a 0600 file", async () => {
    const a = Keypair.generate();
    const b = Keypair.generate();
    const path = await keyFile("a.json", JSON.stringify([...a.secretKey]));
    const { logger, lines } = captureLogger();
    const wallets = await loadWallets(
      [
        { kind: "file", path },
        { kind: "env", name: "KEEPER_TEST_KEY" },
      ],
      { logger, env: { KEEPER_TEST_KEY: bs58.encode(b.secretKey) } },
    );
    expect(wallets.publicKeys()).toEqual([a.publicKey.toBase58(), b.publicKey.toBase58()]);
    expect(lines().filter((l) => l.level === "warn" || l.level === "error")).toEqual([]);
  });

  it("refuses a key file group or others can read, naming the key, the path and the rule, never the key", async () => {
    const kp = Keypair.generate();
    const path = await keyFile("open.json", JSON.stringify([...kp.secretKey]), 0o644);
    const { logger, text } = captureLogger();
    const error = await loadWallets([{ kind: "file", path, field: "wallets[3].keyFile" }], { logger }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([
      `wallets[3].keyFile: ${path} is open to group or others (mode 0644); a secret file must be readable by its owner only: chmod 600 ${path}`,
    ]);
    expect((error as Error).message).not.toContain(bs58.encode(kp.secretKey));
    expect((error as Error).message).not.toContain(JSON.stringify([...kp.secretKey]));
    expect(text()).not.toContain(bs58.encode(kp.secretKey));
  });

  // Each line names the config field, the file and the rule: the path alone left the operator to
  // find which wallet, and an out-of-range byte was told as "an array of 64 items".
  it.each([
    ["a missing file", null, "cannot read {path} (ENOENT)"],
    ["broken JSON", "[1,2,", "{path} is not valid JSON"],
    ["a JSON object", '{"secret": 1}', "{path} holds a JSON object"],
    ["32 numbers", JSON.stringify(Array(32).fill(1)), "{path} holds an array of 32 items"],
    [
      "an out-of-range byte",
      JSON.stringify([...Array(63).fill(7), 256]),
      "{path} holds an item that is not an integer from 0 to 255, at index 63",
    ],
  ])("refuses %s with the config field, the path and the rule, never a byte", async (name, content, what) => {
    const path =
      content === null
        ? join(dir, "missing.json")
        : await keyFile(`${name.replace(/\W/g, "-")}.json`, content);
    const { logger } = captureLogger();
    const error = await loadWallets([{ kind: "file", path, field: "wallets[2].keyFile" }], { logger }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([
      `wallets[2].keyFile: ${what.replace("{path}", path)}; expected a JSON array of 64 integers from 0 to 255 (a Solana CLI keypair file)`,
    ]);
    if (content) expect((error as Error).message).not.toMatch(/\b(7|256)\b/);
  });

  it("refuses a bad env key without echoing it, and reports every source at once", async () => {
    const { logger } = captureLogger();
    const short = bs58.encode(Keypair.generate().secretKey.slice(0, 32));
    const error = await loadWallets(
      [
        { kind: "env", name: "K1" },
        { kind: "env", name: "K2" },
        { kind: "env", name: "K3" },
      ],
      { logger, env: { K1: short, K2: "0OIl-not-base58" } },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems;
    expect(problems).toEqual([
      "env K1: expected a base58 64-byte secret key, got 32 bytes",
      "env K2: not base58; expected a base58 64-byte secret key",
      "env K3: not set or empty",
    ]);
    expect((error as Error).message).not.toContain(short);
  });
});

describe("loadWallets from key files: every rule", () => {
  const rule = "expected a JSON array of 64 integers from 0 to 255 (a Solana CLI keypair file)";

  async function problemsOf(path: string): Promise<readonly string[]> {
    const { logger } = captureLogger();
    const error = await loadWallets([{ kind: "file", path }], { logger }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }

  it("gives every form of a file's key to the scrubber", async () => {
    const kp = Keypair.generate();
    const path = await keyFile("scrubbed.json", JSON.stringify([...kp.secretKey]));
    const scrubber = new SecretScrubber();
    const { logger } = captureLogger();
    await loadWallets([{ kind: "file", path }], { logger, scrubber });
    const forms = secretForms(kp.secretKey);
    expect(forms.length).toBeGreaterThan(0);
    for (const form of forms) expect(scrubber.scrub(`leak: ${form}`)).toBe(`leak: ${REDACTED}`);
  });

  it.each(
    [0o640, 0o604, 0o620, 0o601, 0o660].map((mode) => [mode.toString(8).padStart(4, "0"), mode] as const),
  )("refuses a key file of mode %s (any bit for group or others)", async (shown, mode) => {
    const path = await keyFile(`mode-${shown}.json`, JSON.stringify([...Keypair.generate().secretKey]), mode);
    expect(await problemsOf(path)).toEqual([
      `keyFile: ${path} is open to group or others (mode ${shown}); a secret file must be readable by its owner only: chmod 600 ${path}`,
    ]);
  });

  it("accepts a key file of mode 0400 or 0700: the owner's own bits are the owner's business", async () => {
    for (const mode of [0o400, 0o700]) {
      const path = await keyFile(
        `owner-${mode}.json`,
        JSON.stringify([...Keypair.generate().secretKey]),
        mode,
      );
      const { logger } = captureLogger();
      expect((await loadWallets([{ kind: "file", path }], { logger })).size).toBe(1);
    }
  });

  it("refuses a directory as a key file", async () => {
    const path = join(dir, "a-directory");
    await mkdir(path);
    expect(await problemsOf(path)).toEqual([`keyFile: ${path} is not a regular file`]);
  });

  it("refuses a missing file, naming the path and the error code", async () => {
    const path = join(dir, "nowhere.json");
    expect(await problemsOf(path)).toEqual([`keyFile: cannot read ${path} (ENOENT); ${rule}`]);
  });

  it.each([
    ["broken JSON", "[1,2,", "is not valid JSON"],
    ["a JSON string", '"abc"', "holds a JSON string"],
    ["JSON null", "null", "holds null"],
    ["an array of 63", JSON.stringify(Array(63).fill(1)), "holds an array of 63 items"],
    ["an array of 65", JSON.stringify(Array(65).fill(1)), "holds an array of 65 items"],
    [
      "a negative byte",
      JSON.stringify([-1, ...Array(63).fill(1)]),
      "holds an item that is not an integer from 0 to 255, at index 0",
    ],
    [
      "a fraction",
      JSON.stringify([...Array(62).fill(1), 1.5, 1]),
      "holds an item that is not an integer from 0 to 255, at index 62",
    ],
    [
      "a byte as a string",
      JSON.stringify([...Array(63).fill(1), "1"]),
      "holds an item that is not an integer from 0 to 255, at index 63",
    ],
  ])("refuses %s with the whole rule", async (name, content, message) => {
    const path = await keyFile(`rule-${name.replace(/\W/g, "-")}.json`, content);
    expect(await problemsOf(path)).toEqual([`keyFile: ${path} ${message}; ${rule}`]);
  });

  it("accepts the bytes 0 and 255 at the ends of the range", async () => {
    // A key whose bytes include both ends: search seeds until one does.
    let kp = Keypair.generate();
    while (!(kp.secretKey.includes(0) && kp.secretKey.includes(255))) kp = Keypair.generate();
    const path = await keyFile("ends.json", JSON.stringify([...kp.secretKey]));
    const { logger } = captureLogger();
    const wallets = await loadWallets([{ kind: "file", path }], { logger });
    expect(wallets.publicKeys()).toEqual([kp.publicKey.toBase58()]);
  });

  it("names the file whose key halves do not match, without the key", async () => {
    const secret = Keypair.generate().secretKey.slice();
    secret.set(Keypair.generate().publicKey.toBytes(), 32);
    const path = await keyFile("mismatch.json", JSON.stringify([...secret]));
    const problems = await problemsOf(path);
    expect(problems).toEqual([`keyFile: ${path}: the public half of the key does not match its secret half`]);
    for (const form of secretForms(secret)) expect(problems.join("\n")).not.toContain(form);
  });

  it("reports a bad file and a bad variable together, and removes the variable", async () => {
    const path = join(dir, "absent.json");
    const env: NodeJS.ProcessEnv = { K: "" };
    const { logger } = captureLogger();
    const error = await loadWallets(
      [
        { kind: "file", path },
        { kind: "env", name: "K" },
      ],
      { logger, env },
    ).catch((e: unknown) => e);
    expect((error as ConfigError).problems).toEqual([
      `keyFile: cannot read ${path} (ENOENT); ${rule}`,
      "env K: not set or empty",
    ]);
    expect(env).toEqual({});
  });
});
