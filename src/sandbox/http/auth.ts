import { HttpProblem } from "./errors.js";
import type { RateLimitPlan } from "./rate-limit.js";

/** A key the sandbox accepts, with its own plan (`false`: never limited) or the server's default plan. */
export interface ApiKeySpec {
  readonly key: string;
  readonly rateLimit?: RateLimitPlan | false;
}

export const API_KEY_HEADER = "x-api-key";
/** Who a request without a key counts as: all keyless callers share the keyless plan. */
export const KEYLESS = "(keyless)";

/** The set of accepted keys and the plan each one runs on. */
export interface KeyTable {
  readonly keys: ReadonlySet<string>;
  readonly plans: ReadonlyMap<string, RateLimitPlan>;
}

export function buildKeyTable(
  apiKeys: readonly (string | ApiKeySpec)[],
  defaultPlan: RateLimitPlan | false | undefined,
): KeyTable {
  const keys = new Set<string>();
  const plans = new Map<string, RateLimitPlan>();
  for (const entry of apiKeys) {
    const spec: ApiKeySpec = typeof entry === "string" ? { key: entry } : entry;
    if (spec.key.length === 0) throw new Error("an API key must not be empty");
    keys.add(spec.key);
    const plan = spec.rateLimit === undefined ? defaultPlan : spec.rateLimit;
    if (plan) plans.set(spec.key, plan);
  }
  // Keyless callers run on the default plan (the live service's keyless limits).
  if (defaultPlan) plans.set(KEYLESS, defaultPlan);
  return { keys, plans };
}

/**
 * The key a request authenticates with, KEYLESS without one (as the live service, which answers at
 * its keyless limits), or a 401 for a key it does not know. The messages never repeat the key that
 * was sent: a key must not end up in a client's error log.
 */
export function authenticate(table: KeyTable, header: string | string[] | undefined): string {
  const key = Array.isArray(header) ? header[0] : header;
  if (key === undefined || key.length === 0) return KEYLESS;
  if (!table.keys.has(key))
    throw new HttpProblem(401, "invalid_api_key", "is not a valid API key", API_KEY_HEADER);
  return key;
}
