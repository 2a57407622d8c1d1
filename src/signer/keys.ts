import { createPrivateKey, createPublicKey, type KeyObject, sign } from "node:crypto";
import { inspect } from "node:util";
import { PublicKey } from "@solana/web3.js";
import bs58 from "bs58";
import type { Logger } from "pino";
import { rawPublicKey } from "../chain/ed25519.js";
import { readSecretFile } from "../config/secret-file.js";
import { ConfigError } from "../core/errors.js";
import { secretForms } from "../ops/secret-forms.js";
import type { SecretScrubber } from "../ops/secret-scrubber.js";
import type { Signer } from "./signer.js";

/**
 * Where a wallet's secret key comes from. Config names the source; the key itself never is config.
 * `field` is the config key that named a file (`wallets[0].keyFile`), for messages.
 */
export type KeySource = { kind: "file"; path: string; field?: string } | { kind: "env"; name: string };

// PKCS#8 envelope of a raw 32-byte Ed25519 seed, so Node's crypto holds the key (as an opaque KeyObject).
const PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");

/**
 * The wallets Keeper signs for. Secret keys live only inside Node KeyObjects in a private field: there
 * is no getter, `JSON.stringify` and `util.inspect` show public keys only, and errors never carry bytes.
 */
export class Wallets implements Signer {
  readonly #keys: Map<string, KeyObject>;

  private constructor(keys: Map<string, KeyObject>) {
    this.#keys = keys;
  }

  /** Builds the holder from 64-byte Solana secret keys (seed + public key); the input is zeroed. */
  static fromSecretKeys(secretKeys: readonly Uint8Array[], labels?: readonly string[]): Wallets {
    const keys = new Map<string, KeyObject>();
    try {
      secretKeys.forEach((secret, i) => {
        const label = labels?.[i] ?? `key #${i + 1}`;
        const { publicKey, key } = importSecretKey(secret, label);
        if (keys.has(publicKey)) throw new ConfigError([`${label}: wallet ${publicKey} is loaded twice`]);
        keys.set(publicKey, key);
      });
    } finally {
      // The bytes now live only in the KeyObjects: leave no copy in the caller's buffers.
      for (const secret of secretKeys) secret.fill(0);
    }
    return new Wallets(keys);
  }

  get size(): number {
    return this.#keys.size;
  }

  /** Base58 public keys of every wallet held. */
  publicKeys(): string[] {
    return [...this.#keys.keys()];
  }

  has(publicKey: PublicKey | string): boolean {
    return this.#keys.has(publicKey.toString());
  }

  /** Signs `message` with the wallet's key; throws when the wallet is not held. */
  sign(publicKey: PublicKey | string, message: Uint8Array): Uint8Array {
    const key = this.#keys.get(publicKey.toString());
    if (!key) throw new Error(`no key held for wallet ${publicKey.toString()}`);
    return new Uint8Array(sign(null, message, key));
  }

  toJSON(): { wallets: string[] } {
    return { wallets: this.publicKeys() };
  }

  toString(): string {
    return `Wallets(${this.publicKeys().join(", ")})`;
  }

  [inspect.custom](): string {
    return this.toString();
  }
}

export interface LoadWalletsOptions {
  logger: Logger;
  /** The environment to read `env` sources from; process.env when omitted. Each one read is removed. */
  env?: NodeJS.ProcessEnv;
  /** Given every textual form of each key loaded, so that none can reach a log line. */
  scrubber?: SecretScrubber;
}

/** The key source of each configured wallet; a wallet with neither keyFile nor keyEnv is a problem. */
export function keySourcesOf(wallets: ReadonlyArray<{ keyFile?: string; keyEnv?: string }>): KeySource[] {
  const problems: string[] = [];
  const sources: KeySource[] = [];
  wallets.forEach((w, i) => {
    if (w.keyFile) sources.push({ kind: "file", path: w.keyFile, field: `wallets[${i}].keyFile` });
    else if (w.keyEnv) sources.push({ kind: "env", name: w.keyEnv });
    else problems.push(`wallets[${i}]: the signer needs keyFile or keyEnv (live mode)`);
  });
  if (problems.length > 0) throw new ConfigError(problems);
  return sources;
}

/**
 * Refuses a configured wallet's key variable (`keyEnv`) set in the environment of a process that loads
 * no key (a role without the signer, or dry-run). Removing it from `process.env` is not enough: on
 * Linux the process's initial environment stays readable in /proc/self/environ, by code it runs (user
 * strategies) and by its user's other processes. `why` says why no key is loaded, for the message.
 */
export function refuseKeyVariables(
  wallets: ReadonlyArray<{ keyEnv?: string }>,
  why: string,
  env: NodeJS.ProcessEnv = process.env,
): void {
  const problems = wallets.flatMap((w, i) =>
    w.keyEnv && env[w.keyEnv] !== undefined
      ? [
          `wallets[${i}].keyEnv: ${w.keyEnv} is set for a process that loads no key (${why}); a key variable must reach the signer's process only (deleting it later leaves it in /proc/self/environ): unset ${w.keyEnv} here`,
        ]
      : [],
  );
  if (problems.length > 0) throw new ConfigError(problems);
}

/** Loads every source; all problems are reported together, by source, never with key material. */
export async function loadWallets(
  sources: readonly KeySource[],
  options: LoadWalletsOptions,
): Promise<Wallets> {
  const env = options.env ?? process.env;
  const problems: string[] = [];
  const secrets: Uint8Array[] = [];
  const labels: string[] = [];
  for (const source of sources) {
    // What names the source in messages: its config field, or its variable.
    const field = source.kind === "file" ? (source.field ?? "keyFile") : `env ${source.name}`;
    const label = source.kind === "file" ? `${field}: ${source.path}` : field;
    try {
      const secret =
        source.kind === "file" ? await readKeyFile(source.path, field) : readKeyEnv(source.name, env);
      options.scrubber?.add(secretForms(secret));
      secrets.push(secret);
      labels.push(label);
    } catch (error) {
      if (error instanceof ConfigError) problems.push(...error.problems);
      else throw error;
    }
  }
  if (problems.length === 0 && secrets.length === 0)
    problems.push("wallets: at least one key source is required");
  if (problems.length > 0) {
    for (const secret of secrets) secret.fill(0);
    throw new ConfigError(problems);
  }
  try {
    return Wallets.fromSecretKeys(secrets, labels);
  } finally {
    for (const secret of secrets) secret.fill(0);
  }
}

const KEY_FILE_RULE = "expected a JSON array of 64 integers from 0 to 255 (a Solana CLI keypair file)";

/**
 * Reads a Solana CLI keypair file: a JSON array of 64 integers from 0 to 255. Loading a key means
 * signing for real, so a file group or others can reach, or another user owns, is refused: it may
 * have been copied already (see readSecretFile). Every problem names the config field, the file and
 * the rule, never a byte of it.
 */
async function readKeyFile(path: string, field: string): Promise<Uint8Array> {
  let text: string;
  try {
    text = await readSecretFile(path, { key: field, isGuarded: true });
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    const code = (error as NodeJS.ErrnoException).code ?? "unknown error";
    throw new ConfigError([`${field}: cannot read ${path} (${code}); ${KEY_FILE_RULE}`]);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // JSON.parse's own message quotes the text, which is the key: never pass it on.
    throw new ConfigError([`${field}: ${path} is not valid JSON; ${KEY_FILE_RULE}`]);
  }
  const problem = keyArrayProblem(parsed);
  if (problem) throw new ConfigError([`${field}: ${path} ${problem}; ${KEY_FILE_RULE}`]);
  const bytes = Uint8Array.from(parsed as number[]);
  (parsed as number[]).fill(0);
  return bytes;
}

/** What is wrong with a parsed key file, by shape and position only: its values are key bytes. */
function keyArrayProblem(parsed: unknown): string | undefined {
  // Not an array: null, or an object, string, number or boolean (what typeof says of JSON values).
  if (!Array.isArray(parsed)) return `holds ${parsed === null ? "null" : `a JSON ${typeof parsed}`}`;
  if (parsed.length !== 64) return `holds an array of ${parsed.length} items`;
  const bad = parsed.findIndex((n) => !(Number.isInteger(n) && n >= 0 && n <= 255));
  return bad === -1 ? undefined : `holds an item that is not an integer from 0 to 255, at index ${bad}`;
}

/**
 * Reads a base58 64-byte secret key from an environment variable, and removes the variable: code that
 * runs in this process later (a dependency, a user strategy) cannot read the key from process.env.
 */
function readKeyEnv(name: string, env: NodeJS.ProcessEnv): Uint8Array {
  const value = env[name]?.trim();
  delete env[name];
  if (!value) throw new ConfigError([`env ${name}: not set or empty`]);
  let bytes: Uint8Array;
  try {
    bytes = bs58.decode(value);
  } catch {
    throw new ConfigError([`env ${name}: not base58; expected a base58 64-byte secret key`]);
  }
  if (bytes.length !== 64) {
    const length = bytes.length;
    bytes.fill(0);
    throw new ConfigError([`env ${name}: expected a base58 64-byte secret key, got ${length} bytes`]);
  }
  return bytes;
}

function importSecretKey(secret: Uint8Array, label: string): { publicKey: string; key: KeyObject } {
  if (secret.length !== 64) throw new ConfigError([`${label}: expected 64 bytes, got ${secret.length}`]);
  const der = Buffer.concat([PKCS8_PREFIX, secret.subarray(0, 32)]);
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: der, format: "der", type: "pkcs8" });
  } finally {
    der.fill(0);
  }
  const derived = rawPublicKey(createPublicKey(key));
  // The second half of a Solana secret key is its public key; a mismatch means a corrupt file.
  if (!Buffer.from(derived).equals(Buffer.from(secret.subarray(32)))) {
    throw new ConfigError([`${label}: the public half of the key does not match its secret half`]);
  }
  return { publicKey: new PublicKey(derived).toBase58(), key };
}
