import bs58 from "bs58";

/** A Solana keypair's secret key is 64 bytes: a 32-byte seed, then the public key. */
const KEYPAIR_LENGTH = 64;
const SEED_LENGTH = 32;

/**
 * Every textual form in which a secret key is likely to leak into a log line: base58 (wallet apps),
 * base64 (RPC and SDK dumps), hex, and the JSON byte array of a Solana CLI keypair file, compact or
 * spaced. For a 64-byte keypair the seed alone is listed too, so a truncated or partial dump is still
 * caught; the public half is never listed, because wallet addresses are logged on purpose.
 */
export function secretForms(secretKey: Uint8Array): string[] {
  const forms = new Set<string>(formsOf(secretKey));
  if (secretKey.length === KEYPAIR_LENGTH) {
    const seed = secretKey.subarray(0, SEED_LENGTH);
    for (const form of formsOf(seed)) forms.add(form);
    // The seed's numbers without brackets: found inside the full array however it is formatted.
    forms.add(Array.from(seed).join(","));
    forms.add(Array.from(seed).join(", "));
  }
  return [...forms];
}

function formsOf(bytes: Uint8Array): string[] {
  const numbers = Array.from(bytes);
  return [
    bs58.encode(bytes),
    Buffer.from(bytes).toString("base64"),
    Buffer.from(bytes).toString("hex"),
    JSON.stringify(numbers),
    `[${numbers.join(", ")}]`,
  ];
}

/** Shorter path segments and query values are words ("v1", "solana"), not keys. */
const MIN_URL_TOKEN_LENGTH = 16;

/**
 * The parts of an RPC URL that providers use to carry an API key: the password, and any path segment
 * or query value long enough to be a token (`/v2/<key>`, `?api-key=<key>`). The host and short words
 * are left out, so a log line still says which node it was about.
 */
export function urlSecrets(url: string): string[] {
  const parsed = new URL(url);
  const parts = new Set<string>();
  if (parsed.password) parts.add(decoded(parsed.password)).add(parsed.password);
  const tokens = [
    ...parsed.pathname.split("/").flatMap((segment) => [segment, decoded(segment)]),
    ...parsed.searchParams.values(),
  ];
  for (const token of tokens) {
    if (token.length < MIN_URL_TOKEN_LENGTH) continue;
    parts.add(token);
    parts.add(encodeURIComponent(token));
  }
  return [...parts];
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text; // a stray "%": the text as written is the form that can leak
  }
}

/** Whether a URL carries a password (`redis://:pw@host`, `redis://user:pw@host`). */
export function urlHasPassword(url: string): boolean {
  try {
    return new URL(url).password !== "";
  } catch {
    return false;
  }
}
