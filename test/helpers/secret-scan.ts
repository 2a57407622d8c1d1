import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import bs58 from "bs58";
import { secretForms } from "../../src/ops/secret-forms.js";
import type { TestSecret } from "./test-secrets.js";

/** One textual form of one secret: what to look for, and how to name it without showing it. */
export interface SecretNeedle {
  /** Which secret, e.g. "the API key" or a keypair's public key. Never the secret itself. */
  label: string;
  /** Which form, e.g. "base58" or "seed as hex". */
  form: string;
  value: string;
}

/** A secret found in a log file: named by label and form, never shown. */
export interface SecretLeak {
  label: string;
  form: string;
  file: string;
}

const SEED_LENGTH = 32;

/**
 * The forms a key is looked for in: base58, base64, hex and JSON array (compact and spaced) of the
 * whole secret and of its 32-byte seed, plus whatever else `secretForms` (the scrubber's list) has.
 */
export function keyNeedles(label: string, secretKey: Uint8Array): SecretNeedle[] {
  const named = new Map<string, string>();
  const add = (form: string, bytes: Uint8Array) => {
    const numbers = Array.from(bytes);
    named.set(bs58.encode(bytes), `${form} as base58`);
    named.set(Buffer.from(bytes).toString("base64"), `${form} as base64`);
    named.set(Buffer.from(bytes).toString("hex"), `${form} as hex`);
    named.set(JSON.stringify(numbers), `${form} as JSON array`);
    named.set(`[${numbers.join(", ")}]`, `${form} as spaced JSON array`);
  };
  add("secret key", secretKey);
  if (secretKey.length > SEED_LENGTH) add("seed", secretKey.subarray(0, SEED_LENGTH));
  for (const value of secretForms(secretKey)) if (!named.has(value)) named.set(value, "other form");
  return [...named].map(([value, form]) => ({ label, form, value }));
}

/** The needles of every registered test key. */
export function registryNeedles(secrets: readonly TestSecret[]): SecretNeedle[] {
  return secrets.flatMap((s) => keyNeedles(s.label, Buffer.from(s.secretKeyHex, "hex")));
}

const BASE = 0x01000193;
const FEW_NEEDLES = 16;

/**
 * Which of `needles` occur in `text`, in one pass however many there are (thousands of keys, a dozen
 * forms each): a rolling hash over a window as long as the shortest needle finds candidate positions,
 * and each candidate is compared in full.
 */
export function findNeedles(text: string, needles: readonly string[]): Set<string> {
  const found = new Set<string>();
  const wanted = needles.filter((n) => n.length > 0);
  if (wanted.length === 0) return found;
  // A few needles: the engine's own substring search is faster than any pass written here.
  if (wanted.length <= FEW_NEEDLES) {
    for (const needle of wanted) if (text.includes(needle)) found.add(needle);
    return found;
  }
  const width = wanted.reduce((min, n) => Math.min(min, n.length), Number.POSITIVE_INFINITY);
  if (text.length < width) return found;
  const hashOf = (s: string, from: number) => {
    let h = 0;
    for (let i = from; i < from + width; i++) h = (Math.imul(h, BASE) + s.charCodeAt(i)) | 0;
    return h;
  };
  const byHash = new Map<number, string[]>();
  for (const needle of new Set(wanted)) {
    const h = hashOf(needle, 0);
    const bucket = byHash.get(h);
    if (bucket) bucket.push(needle);
    else byHash.set(h, [needle]);
  }
  let power = 1; // BASE ** width, modulo 2^32
  for (let i = 0; i < width; i++) power = Math.imul(power, BASE);
  let h = hashOf(text, 0);
  for (let at = 0; ; at++) {
    const bucket = byHash.get(h);
    if (bucket) for (const needle of bucket) if (text.startsWith(needle, at)) found.add(needle);
    if (at + width >= text.length) break;
    h = (Math.imul(h, BASE) - Math.imul(text.charCodeAt(at), power) + text.charCodeAt(at + width)) | 0;
  }
  return found;
}

/** Every file under `dir` (recursively), except `exclude` (the key registry, should it be there). */
export function logFiles(dir: string, exclude: readonly string[] = []): string[] {
  const skip = new Set(exclude.map((f) => resolve(f)));
  const files: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) files.push(...logFiles(path, exclude));
    else if (!skip.has(resolve(path))) files.push(path);
  }
  return files.sort();
}

/** Each secret form found in each file. An empty list means nothing leaked. */
export function scanFiles(files: readonly string[], needles: readonly SecretNeedle[]): SecretLeak[] {
  const byValue = new Map<string, SecretNeedle[]>();
  for (const needle of needles) byValue.set(needle.value, [...(byValue.get(needle.value) ?? []), needle]);
  const leaks: SecretLeak[] = [];
  for (const file of files) {
    for (const value of findNeedles(readFileSync(file, "utf8"), [...byValue.keys()]))
      for (const { label, form } of byValue.get(value) ?? []) leaks.push({ label, form, file });
  }
  return leaks;
}
