import { appendFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** The API key every end-to-end test uses: distinctive, so the log scan can look for it. */
export const TEST_API_KEY = "e2e-api-key-7f3c9a1d5b2e8f4c6a0d9e7b3c1f5a8d";
/** The operator token of the ops server in tests (ops.adminTokenFile): the log scan looks for it too. */
export const TEST_ADMIN_TOKEN = "ops-admin-token-4b8e2d6f0a9c1e7b5d3f";

/** Where the suite's output is collected for the secret scan (set by test/setup/global-log-dir.ts). */
export function testLogDir(): string | undefined {
  return process.env.KEEPER_TEST_LOG_DIR;
}

/**
 * The registry of every test key made during the run, one JSON line each (set by
 * test/setup/global-log-dir.ts). It holds the secrets themselves, so it lives in a directory of its
 * own, never inside the log directory the scan reads, and is deleted when the run ends.
 */
export function testSecretsFile(): string | undefined {
  return process.env.KEEPER_TEST_SECRETS_FILE;
}

/** Appends text to this process's file in the suite's log directory, when there is one. */
export function recordTestOutput(name: string, text: string): void {
  const dir = testLogDir();
  if (!dir || text.length === 0) return;
  mkdirSync(dir, { recursive: true });
  appendFileSync(join(dir, `${name}-${process.pid}.log`), text);
}

/** One registered test key: what it is (public key, where it was made) and its secret bytes in hex. */
export interface TestSecret {
  label: string;
  secretKeyHex: string;
}

const registered = new Set<string>();

/**
 * Puts a secret key (64-byte keypair or 32-byte seed) on the run's registry, so the secret scan looks
 * for it in every form. `label` must not hold the secret: the scan shows it when the key leaks.
 */
export function recordTestSecret(secretKey: Uint8Array, label: string): void {
  const file = testSecretsFile();
  if (!file) return;
  const secretKeyHex = Buffer.from(secretKey).toString("hex");
  const entryKey = `${secretKeyHex} ${label}`;
  if (registered.has(entryKey)) return;
  registered.add(entryKey);
  const entry: TestSecret = { label, secretKeyHex };
  appendFileSync(file, `${JSON.stringify(entry)}\n`, { mode: 0o600 });
}

/** Every key on a registry file, once each, with every label it was registered under. */
export function readTestSecrets(file: string | undefined = testSecretsFile()): TestSecret[] {
  if (!file || !existsSync(file)) return [];
  const labels = new Map<string, Set<string>>();
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (line.trim() === "") continue;
    const entry = JSON.parse(line) as TestSecret;
    labels.set(entry.secretKeyHex, (labels.get(entry.secretKeyHex) ?? new Set()).add(entry.label));
  }
  return [...labels].map(([secretKeyHex, names]) => ({ label: [...names].join("; "), secretKeyHex }));
}
