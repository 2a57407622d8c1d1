import { isMintAddress } from "../../strategies/config-parts.js";
import { checkDcaMinimums } from "../../strategies/dca.js";
import { ConfigError } from "../core/errors.js";
import type { Token } from "../core/schemas/tokens.js";
import type { ConfiguredStrategy, KeeperConfig } from "./load-config.js";

/**
 * Where the built-in strategies name tokens: a list in their config and the fields of each item.
 * Each such field may hold a mint, a symbol or a name; it is resolved here, once, to a mint.
 */
export const TOKEN_FIELDS: Readonly<
  Record<
    string,
    {
      list: string;
      fields: readonly string[];
      decimals?: Readonly<Record<string, string>>;
      /** Fields whose token's balance the engine reads into `snapshot.balances`. */
      balances?: readonly string[];
    }
  >
> = {
  dca: { list: "plans", fields: ["inputMint", "outputMint"] },
  "limit-orders": {
    list: "orders",
    fields: ["inputMint", "outputMint"],
    decimals: { inputMint: "inputDecimals", outputMint: "outputDecimals" },
  },
  sweep: { list: "rules", fields: ["fromMint", "toMint"], balances: ["fromMint"] },
};

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
 * Resolves every token a strategy's config names, once, and applies the checks that need the
 * token: DCA minimums (with the input token's price and decimals) and the decimals a limit order
 * states. Throws one ConfigError listing every problem by path (`strategies[2].plans[0].inputMint:
 * "BONK" matches 2 tokens ...; give the mint`). Strategies without token fields pass unchanged.
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
    const spec = TOKEN_FIELDS[entry.name];
    const items = spec ? (entry.config as Record<string, unknown>)[spec.list] : undefined;
    if (!spec || !Array.isArray(items)) {
      strategies.push(entry);
      continue;
    }
    const at = `strategies[${entry.index ?? position}]`;
    const copy = structuredClone(entry.config) as Record<string, unknown>;
    const list = copy[spec.list] as Array<Record<string, unknown>>;
    for (const [i, item] of list.entries()) {
      const tokens: Record<string, Token> = {};
      for (const field of spec.fields) {
        const reference = item[field];
        if (typeof reference !== "string") continue;
        const path = `${at}.${spec.list}[${i}].${field}`;
        const verdict = judgeToken(reference, await lookup(reference), config.tokens);
        if ("problem" in verdict) {
          problems.push(`${path}: ${verdict.problem}`);
          continue;
        }
        tokens[field] = verdict.token;
        item[field] = verdict.token.id;
        resolved.push({ path, reference, mint: verdict.token.id, symbol: verdict.token.symbol });
        const decimalsField = spec.decimals?.[field];
        if (decimalsField !== undefined && item[decimalsField] !== verdict.token.decimals)
          problems.push(
            `${at}.${spec.list}[${i}].${decimalsField}: ${String(item[decimalsField])}, but ${verdict.token.symbol} has ${verdict.token.decimals} decimals`,
          );
      }
      const fieldNames = spec.fields;
      const [inField, outField] = fieldNames as [string, string];
      if (tokens[inField] && tokens[outField] && tokens[inField].id === tokens[outField].id)
        problems.push(`${at}.${spec.list}[${i}].${outField}: names the same token as ${inField}`);
      const input = tokens[inField];
      if (entry.name === "dca" && input) {
        if (input.usdPrice === undefined || input.usdPrice === null)
          problems.push(
            `${at}.${spec.list}[${i}].${inField}: ${input.symbol} has no price; the $100 / $50 minimums cannot be checked`,
          );
        else
          for (const line of checkDcaMinimums(
            item as { inAmountRaw: string; numberOfOrders: number },
            input.usdPrice,
            input.decimals,
          ))
            problems.push(`${at}.${spec.list}[${i}].${line}`);
      }
    }
    strategies.push({ ...entry, config: copy });
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return { strategies, resolved };
}

/** The mints whose balances the strategies need in their snapshots (after resolution). */
export function balanceMints(strategies: readonly ConfiguredStrategy[]): string[] {
  const mints = new Set<string>();
  for (const entry of strategies) {
    const spec = TOKEN_FIELDS[entry.name];
    const items = spec?.balances ? (entry.config as Record<string, unknown>)[spec.list] : undefined;
    if (!spec?.balances || !Array.isArray(items)) continue;
    for (const item of items as Array<Record<string, unknown>>)
      for (const field of spec.balances)
        if (typeof item[field] === "string") mints.add(item[field] as string);
  }
  return [...mints].sort();
}

/** True when some strategy names tokens, so resolving needs the service. */
export function hasTokenFields(strategies: readonly ConfiguredStrategy[]): boolean {
  return strategies.some((s) => TOKEN_FIELDS[s.name] !== undefined);
}
