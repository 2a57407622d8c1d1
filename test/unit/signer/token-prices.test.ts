import { describe, expect, it } from "vitest";
import { PolicyRefusal, TransientError } from "../../../src/core/errors.js";
import type { Token } from "../../../src/core/schemas/tokens.js";
import { TokenPrices } from "../../../src/signer/token-prices.js";

const usdc = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const sol = "So11111111111111111111111111111111111111112";
const bonk = "DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263";

const token = (id: string, usdPrice: number | null, decimals = 6): Token => ({
  id,
  name: id.slice(0, 4),
  symbol: id.slice(0, 4),
  tokenProgram: "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA",
  decimals,
  usdPrice,
});

/** A token search over a fixed list that counts its requests; `fail` makes the next one fail. */
function searchOver(tokens: Token[]) {
  const queries: string[] = [];
  let fail = false;
  return {
    queries,
    failNext: () => {
      fail = true;
    },
    search: async ({ query }: { query: string }) => {
      queries.push(query);
      await new Promise((r) => setTimeout(r, 5));
      if (fail) {
        fail = false;
        throw new Error("searchTokens: HTTP 503");
      }
      const asked = query.split(",");
      return tokens.filter((t) => asked.includes(t.id));
    },
  };
}

async function refusal(promise: Promise<unknown>): Promise<PolicyRefusal> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof PolicyRefusal) return error;
    throw error;
  }
  throw new Error("expected a refusal");
}

describe("TokenPrices", () => {
  it("answers each mint's price and decimals; swaps at once share one search, later ones the cache until it expires", async () => {
    const service = searchOver([token(usdc, 1), token(sol, 150, 9)]);
    let now = 1_000_000;
    const prices = new TokenPrices(service.search, 30_000, () => now);
    const [a, b] = await Promise.all([prices.priced([usdc, sol]), prices.priced([sol, usdc])]);
    expect(a).toEqual([
      { mint: usdc, usdPrice: 1, decimals: 6 },
      { mint: sol, usdPrice: 150, decimals: 9 },
    ]);
    expect(b.map((t) => t.mint)).toEqual([sol, usdc]);
    expect(service.queries).toEqual([[usdc, sol].sort().join(",")]);
    now += 29_999;
    await prices.priced([usdc]);
    expect(service.queries).toHaveLength(1);
    now += 1;
    await prices.priced([usdc, sol]);
    expect(service.queries).toHaveLength(2);
  });

  it.each([
    ["a mint the search does not know", [token(usdc, 1)], `does not know mint ${bonk}`],
    ["a token without a price", [token(usdc, 1), token(bonk, null)], `no USD price for mint ${bonk}`],
    ["a price of 0", [token(usdc, 1), token(bonk, 0)], `no USD price for mint ${bonk} (usdPrice 0)`],
  ])("refuses price_unknown for %s, naming the mint", async (_what, tokens, detail) => {
    const prices = new TokenPrices(searchOver(tokens).search);
    const refused = await refusal(prices.priced([usdc, bonk]));
    expect(refused.reason).toBe("price_unknown");
    expect(refused.detail).toContain(detail);
  });

  it("a failed search is transient, and the next asks again", async () => {
    const service = searchOver([token(usdc, 1)]);
    const prices = new TokenPrices(service.search);
    service.failNext();
    await expect(prices.priced([usdc])).rejects.toBeInstanceOf(TransientError);
    await expect(prices.priced([usdc])).resolves.toEqual([{ mint: usdc, usdPrice: 1, decimals: 6 }]);
    expect(service.queries).toHaveLength(2);
  });
});
