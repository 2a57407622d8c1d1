import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { Keypair } from "@solana/web3.js";
import { afterAll, describe, expect, it } from "vitest";
import { createWorld } from "../../src/sandbox/world/world.js";
import {
  keyNeedles,
  logFiles,
  registryNeedles,
  type SecretNeedle,
  scanFiles,
} from "../helpers/secret-scan.js";
import {
  readTestSecrets,
  TEST_ADMIN_TOKEN,
  TEST_API_KEY,
  testLogDir,
  testSecretsFile,
} from "../helpers/test-secrets.js";

/**
 * Runs after every other test (its project's groupOrder is last): everything the suite printed or
 * logged, in-process and in spawned keepers, must hold no form of any test key's secret (every key
 * registered during the run, random ones included, and the sandbox's seed-1 wallets) and not the
 * API key.
 */
describe("secret scan of everything the suite logged", () => {
  const dir = testLogDir();
  const registry = testSecretsFile();
  const files = dir ? logFiles(dir, registry ? [registry] : []) : [];
  const registered = readTestSecrets(registry);

  it("has logs to scan", () => {
    expect(dir).toBeDefined();
    expect(files.length).toBeGreaterThan(0);
    const total = files.reduce((n, f) => n + readFileSync(f).length, 0);
    // The e2e tests log at debug level: a few kilobytes at least, or the tee is broken.
    expect(total).toBeGreaterThan(10_000);
  });

  it("has the run's test keys, registered outside the log directory", () => {
    expect(registry).toBeDefined();
    if (!registry || !dir) return;
    // The registry holds the secrets themselves: it must never be among the files scanned as logs.
    expect(relative(resolve(dir), resolve(dirname(registry))).startsWith("..")).toBe(true);
    expect(files).not.toContain(registry);
    expect(registered.length).toBeGreaterThan(0);
  });

  const world = createWorld({ seed: 1 });
  const fixed: SecretNeedle[] = [
    { label: "the API key", form: "as is", value: TEST_API_KEY },
    { label: "the ops server's operator token", form: "as is", value: TEST_ADMIN_TOKEN },
  ];
  for (let i = 0; i < world.walletCount; i += 1)
    fixed.push(...keyNeedles(`sandbox seed-1 wallet ${i}`, world.walletKeypair(i).secretKey));

  it.each(fixed.map((n) => [n.label, n.form, n] as const))("finds no trace of %s (%s)", (_l, _f, needle) => {
    expect(scanFiles(files, [needle])).toEqual([]);
  });

  it("finds no trace of any test key registered during the run, in any form", () => {
    // Leaks are reported by label, form and file: the secret itself is never shown.
    expect(scanFiles(files, registryNeedles(registered))).toEqual([]);
  });
});

const PLACES = ["start", "middle", "end", "inside a longer token"] as const;
type Place = (typeof PLACES)[number];

/** The scan must be able to fail: a key planted in a log file is found, in every form, anywhere. */
describe("the secret scan finds a planted key", () => {
  const root = mkdtempSync(join(tmpdir(), "keeper-scan-self-check-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const planted = Keypair.generate();
  const label = `planted ${planted.publicKey.toBase58()}`;
  const needles = keyNeedles(label, planted.secretKey);
  const decoys = [Keypair.generate(), Keypair.generate(), Keypair.generate()];
  let n = 0;

  /** A log dir with one file of ordinary log lines and `text` at `where`; and a registry beside it. */
  function plant(text: string, where: Place) {
    n += 1;
    const registry = join(root, `secrets-${n}.jsonl`);
    const noise = [
      JSON.stringify({ level: "info", wallet: planted.publicKey.toBase58(), msg: "transaction signed" }),
      JSON.stringify({ level: "debug", tx: Buffer.alloc(600, 7).toString("base64"), msg: "built" }),
    ].join("\n");
    const content = {
      start: `${text}\n${noise}\n`,
      middle: `${noise}\n{"msg":"oops","value":"${text}"}\n${noise}\n`,
      end: `${noise}\n${text}`,
      "inside a longer token": `${noise}\nprefix${text}suffix\n`,
    }[where];
    // Other keys on the registry too, as in a real run: the scan then takes its many-needle path.
    const entries = [planted, ...decoys].map((key, i) => ({
      label: i === 0 ? label : `decoy ${key.publicKey.toBase58()}`,
      secretKeyHex: Buffer.from(key.secretKey).toString("hex"),
    }));
    writeFileSync(registry, entries.map((e) => `${JSON.stringify(e)}\n`).join(""));
    const logDir = mkdtempSync(join(root, "logs-"));
    writeFileSync(join(logDir, "stdout-1.log"), content);
    return { logDir, registry };
  }

  const forms = ["base58", "base64", "hex", "JSON array"].flatMap((encoding) =>
    ["secret key", "seed"].map((part) => `${part} as ${encoding}`),
  );
  const cases: Array<[string, Place]> = forms.flatMap((form) =>
    PLACES.map((place) => [form, place] as [string, Place]),
  );

  it.each(cases)("finds the %s, at the %s of a log file", (form, where) => {
    const needle = needles.find((x) => x.form === form);
    expect(needle).toBeDefined();
    if (!needle) return;
    const { logDir, registry } = plant(needle.value, where);
    const registered = registryNeedles(readTestSecrets(registry));
    expect(registered.length).toBeGreaterThan(40);
    const leaks = scanFiles(logFiles(logDir, [registry]), registered);
    expect(leaks.map((l) => `${l.label} / ${l.form}`)).toContain(`${label} / ${form}`);
    expect(leaks.every((l) => l.label === label && l.file === join(logDir, "stdout-1.log"))).toBe(true);
  });

  it("finds nothing where only the public key and other data appear, and skips the registry", () => {
    const { logDir, registry } = plant(planted.publicKey.toBase58(), "middle");
    // A registry that sits among the logs by mistake is not read as one (it holds the secret).
    const misplaced = join(logDir, "secrets.jsonl");
    writeFileSync(misplaced, readFileSync(registry));
    expect(logFiles(logDir, [misplaced])).toEqual([join(logDir, "stdout-1.log")]);
    const registered = registryNeedles(readTestSecrets(registry));
    expect(scanFiles(logFiles(logDir, [misplaced]), registered)).toEqual([]);
    // ...while scanning it would find every key in it: the scan itself is not blind to hex.
    const inRegistry = scanFiles([misplaced], registered).filter((l) => l.form === "secret key as hex");
    expect(inRegistry).toHaveLength(1 + decoys.length);
  });
});
