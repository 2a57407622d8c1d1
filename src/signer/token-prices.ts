import { PolicyRefusal, TransientError } from "../core/errors.js";
import type { Token } from "../core/schemas/tokens.js";
import type { PricedToken } from "./swap-floor.js";

export type SearchTokens = (params: { query: string }) => Promise<readonly Token[]>;

/** How long a price read is used again: a burst of swaps costs one search, a stale price soon expires. */
export const DEFAULT_PRICE_TTL_MS = 30_000;

interface Cached {
  token: Token | undefined;
  atMs: number;
}

/**
 * The service's USD prices and decimals of the mints the signer swaps, read by the signer itself
 * through token search (never from Redis), kept briefly, one request at a time per set of mints
 * (callers asking meanwhile share its answer).
 */
export class TokenPrices {
  private readonly cache = new Map<string, Cached>();
  private readonly inFlight = new Map<string, Promise<void>>();

  constructor(
    private readonly search: SearchTokens,
    private readonly ttlMs = DEFAULT_PRICE_TTL_MS,
    private readonly nowMs: () => number = Date.now,
  ) {}

  /**
   * Each mint's price and decimals. A mint the service does not know or gives no positive price for
   * is refused `price_unknown`; a search that fails is transient (the sign job is retried).
   */
  async priced(mints: readonly string[]): Promise<PricedToken[]> {
    await this.refresh(mints);
    return mints.map((mint) => {
      const token = this.cache.get(mint)?.token;
      const price = token?.usdPrice;
      if (!token || typeof price !== "number" || !Number.isFinite(price) || price <= 0)
        throw new PolicyRefusal(
          "price_unknown",
          token
            ? `the service gives no USD price for mint ${mint} (usdPrice ${String(price)}): the swap's fair output cannot be checked`
            : `the service's token search does not know mint ${mint}: the swap's fair output cannot be checked`,
        );
      return { mint, usdPrice: price, decimals: token.decimals };
    });
  }

  private async refresh(mints: readonly string[]): Promise<void> {
    const now = this.nowMs();
    const stale = [...new Set(mints)].filter((mint) => {
      const hit = this.cache.get(mint);
      return !hit || now - hit.atMs >= this.ttlMs;
    });
    if (stale.length === 0) return;
    const query = stale.sort().join(",");
    let pending = this.inFlight.get(query);
    if (!pending) {
      pending = this.fetch(stale).finally(() => this.inFlight.delete(query));
      this.inFlight.set(query, pending);
    }
    await pending;
  }

  private async fetch(mints: readonly string[]): Promise<void> {
    let found: readonly Token[];
    try {
      found = await this.search({ query: mints.join(",") });
    } catch (error) {
      throw new TransientError(`token prices: the token search failed: ${(error as Error).message}`);
    }
    const atMs = this.nowMs();
    for (const mint of mints) this.cache.set(mint, { token: found.find((token) => token.id === mint), atMs });
  }
}
