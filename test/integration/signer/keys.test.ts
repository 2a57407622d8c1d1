import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Keypair } from "@solana/web3.js";
import bs58 from "bs58";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError } from "../../../src/core/errors.js";
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

  it("warns when the key file is readable by group or others, naming the path and mode only", async () => {
    const kp = Keypair.generate();
    const path = await keyFile("open.json", JSON.stringify([...kp.secretKey]), 0o644);
    const { logger, lines, text } = captureLogger();
    await loadWallets([{ kind: "file", path }], { logger });
    const warn = lines().find((l) => l.level === "warn");
    expect(warn).toMatchObject({ path, mode: "0644" });
    expect(text()).not.toContain(bs58.encode(kp.secretKey));
    expect(text()).not.toContain(JSON.stringify([...kp.secretKey]));
  });

  it.each([
    ["a missing file", null, /cannot read the key file \(ENOENT\)/],
    ["broken JSON", "[1,2,", /not valid JSON/],
    ["a JSON object", '{"secret": 1}', /got object/],
    ["32 numbers", JSON.stringify(Array(32).fill(1)), /got an array of 32 items/],
    ["an out-of-range byte", JSON.stringify([...Array(63).fill(1), 256]), /64 integers from 0 to 255/],
  ])("refuses %s with the path and the rule", async (name, content, rule) => {
    const path =
      content === null
        ? join(dir, "missing.json")
        : await keyFile(`${name.replace(/\W/g, "-")}.json`, content);
    const { logger } = captureLogger();
    const error = await loadWallets([{ kind: "file", path }], { logger }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems.join("\n")).toMatch(rule);
    expect((error as ConfigError).problems.join("\n")).toContain(path);
    if (content) expect((error as Error).message).not.toContain(content);
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
