import { ConfigError } from "../core/errors.js";
import { isMintAddress } from "../core/mint-address.js";
import type { Token } from "../core/schemas/tokens.js";
import type { ConfigPath, TokenFacts, TokenField } from "../core/strategy-hooks.js";
import { formatPath } from "./format-issues.js";
import type { ConfiguredStrategy, KeeperConfig } from "./load-config.js";

export type SearchTokens = (params: { query: string }) => Promise<readonly Token[]>;

export interface TokenGate {
  minOrganicScore: number;
}

export type TokenVerdict = { token: Token } | { problem: string };

/**
 * Picks the one token a config value names, and checks it: a mint must be found as such; a symbol
 * or a name (case-insensitive, exact) must match exactly one token. The token must be verified, not
 * flagged `audit.isSus`, and have at least the configured organic score.
 */
export function judgeToken(reference: string, found: readonly Token[], gate: TokenGate): TokenVerdict {
  const lower = reference.toLowerCase();
  const matches = isMintAddress(reference)
    ? found.filter((t) => t.id === reference)
    : found.filter((t) => t.symbol.toLowerCase() === lower || t.name.toLowerCase() === lower);
  if (matches.length === 0)
    return {
      problem: isMintAddress(reference)
        ? `"${reference}" is not a token the service knows`
        : `"${reference}" matches no token by symbol or name; give the mint`,
    };
  if (matches.length > 1)
    return {
      problem: `"${reference}" matches ${matches.length} tokens (${matches
        .map((t) => `${t.symbol} ${t.id}`)
        .join(", ")}); give the mint`,
    };
  const token = matches[0] as Token;
  const label = isMintAddress(reference) ? `${token.symbol} (${token.id})` : `"${reference}" (${token.id})`;
  if (token.isVerified !== true) return { problem: `${label} is not verified` };
  if (token.audit?.isSus === true) return { problem: `${label} is flagged suspicious (audit.isSus)` };
  const score = token.organicScore ?? 0;
  if (score < gate.minOrganicScore)
    return {
      problem: `${label} has organic score ${score}, below tokens.minOrganicScore ${gate.minOrganicScore}`,
    };
  return { token };
}

export interface ResolvedToken {
  readonly path: string;
  readonly reference: string;
  readonly mint: string;
  readonly symbol: string;
}

export interface TokenResolution {
  readonly strategies: readonly ConfiguredStrategy[];
  readonly resolved: readonly ResolvedToken[];
}

/**
 * Resolves every token a strategy's config names (its `tokenFields` hook), once, checks the decimals
 * a field states against the token's own, then runs the strategy's own checks that need the tokens
 * (its `checkTokens` hook: dca's minimums with the input token's price, say). Throws one ConfigError
 * listing every problem by path (`strategies[2].plans[0].inputMint: "BONK" matches 2 tokens ...; give
 * the mint`). Strategies without token fields pass unchanged.
 */
export async function resolveStrategyTokens(
  config: Pick<KeeperConfig, "strategies" | "tokens">,
  search: SearchTokens,
): Promise<TokenResolution> {
  const problems: string[] = [];
  const resolved: ResolvedToken[] = [];
  const cache = new Map<string, Promise<readonly Token[]>>();
  const lookup = (reference: string) => {
    let hit = cache.get(reference);
    if (!hit) {
      hit = search({ query: reference });
      cache.set(reference, hit);
    }
    return hit;
  };
  const strategies: ConfiguredStrategy[] = [];
  for (const [position, entry] of config.strategies.entries()) {
    const at = `strategies[${entry.index ?? position}]`;
    const fields = hookAnswer(entry, at, problems, () => entry.strategy.tokenFields?.(entry.config) ?? []);
    if (!fields || fields.length === 0) {
      strategies.push(entry);
      continue;
    }
    const copy = structuredClone(entry.config) as Record<string, unknown>;
    const tokens = new Map<string, TokenFacts>();
    for (const field of fields) {
      const reference = valueAt(copy, field.path);
      if (typeof reference !== "string") continue;
      const path = `${at}.${formatPath(field.path)}`;
      const verdict = judgeToken(reference, await lookup(reference), config.tokens);
      if ("problem" in verdict) {
        problems.push(`${path}: ${verdict.problem}`);
        continue;
      }
      const { token } = verdict;
      setValueAt(copy, field.path, token.id);
      tokens.set(token.id, factsOf(token));
      resolved.push({ path, reference, mint: token.id, symbol: token.symbol });
      problems.push(...decimalsProblems(copy, field, token, at));
    }
    const checks = hookAnswer(entry, at, problems, () => entry.strategy.checkTokens?.(copy, tokens) ?? []);
    for (const problem of checks ?? [])
      problems.push(`${at}.${formatPath(problem.path)}: ${problem.message}`);
    strategies.push({ ...entry, config: copy });
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return { strategies, resolved };
}

/** A stated decimals field that is not the token's own. */
function decimalsProblems(config: unknown, field: TokenField, token: Token, at: string): string[] {
  if (field.decimalsPath === undefined) return [];
  const stated = valueAt(config, field.decimalsPath);
  if (stated === token.decimals) return [];
  return [
    `${at}.${formatPath(field.decimalsPath)}: ${String(stated)}, but ${token.symbol} has ${token.decimals} decimals`,
  ];
}

function factsOf(token: Token): TokenFacts {
  return { mint: token.id, symbol: token.symbol, decimals: token.decimals, usdPrice: token.usdPrice ?? null };
}

/** A strategy hook's answer, or undefined (with a problem naming the strategy) when it threw. */
function hookAnswer<T>(
  entry: ConfiguredStrategy,
  at: string,
  problems: string[],
  call: () => T,
): T | undefined {
  try {
    return call();
  } catch (error) {
    problems.push(`${at}: ${entry.name}'s token hooks failed: ${(error as Error).message}`);
    return undefined;
  }
}

function valueAt(root: unknown, path: ConfigPath): unknown {
  let node = root;
  for (const key of path) {
    if (node === null || typeof node !== "object") return undefined;
    node = (node as Record<string | number, unknown>)[key];
  }
  return node;
}

function setValueAt(root: unknown, path: ConfigPath, value: unknown): void {
  const parent = valueAt(root, path.slice(0, -1));
  const key = path[path.length - 1];
  if (parent !== null && typeof parent === "object" && key !== undefined)
    (parent as Record<string | number, unknown>)[key] = value;
}

/** True when some strategy names tokens, so resolving needs the service. */
export function hasTokenFields(strategies: readonly ConfiguredStrategy[]): boolean {
  return strategies.some((s) => {
    try {
      return (s.strategy.tokenFields?.(s.config) ?? []).length > 0;
    } catch {
      // Resolution asks again and reports the failure with the strategy's path.
      return true;
    }
  });
}
