import { describe, expect, it } from "vitest";
import type { ConfiguredStrategy } from "../../../src/config/load-config.js";
import { judgeToken, resolveStrategyTokens } from "../../../src/config/resolve-tokens.js";
import { ConfigError } from "../../../src/core/errors.js";
import type { Token } from "../../../src/core/schemas/tokens.js";
import { dca } from "../../../strategies/dca.js";
import { limitOrders } from "../../../strategies/limit-orders.js";

const USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const SOL = "So11111111111111111111111111111111111111112";
const MOON_A = "MoonAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
const MOON_B = "MoonBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB";
const FISHY = "FishyCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC";
const NEW = "NewDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDD";
const LOW = "LowEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEE";

function token(id: string, symbol: string, name: string, extra: Partial<Token> = {}): Token {
  return {
    id,
    symbol,
    name,
    tokenProgram: "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA",
    decimals: 6,
    usdPrice: 1,
    isVerified: true,
    organicScore: 90,
    audit: { isSus: false },
    ...extra,
  };
}

const CATALOGUE = [
  token(USDC, "USDC", "USD Coin"),
  token(SOL, "SOL", "Wrapped SOL", { decimals: 9, usdPrice: 150 }),
  token(MOON_A, "MOON", "Moon Network"),
  token(MOON_B, "MOON", "MOON (copycat)", { isVerified: false }),
  token(FISHY, "FISH", "Fishy", { audit: { isSus: true } }),
  token(NEW, "NEW", "Brand New", { isVerified: false }),
  token(LOW, "LOW", "Low Score", { organicScore: 12 }),
];

/** Like the service: a term matches a mint exactly, or a symbol or name by substring. */
async function search({ query }: { query: string }): Promise<Token[]> {
  const term = query.toLowerCase();
  const exact = CATALOGUE.filter((t) => t.id === query);
  if (exact.length > 0) return exact;
  return CATALOGUE.filter(
    (t) => t.symbol.toLowerCase().includes(term) || t.name.toLowerCase().includes(term),
  );
}

describe("token resolution: one token per config value, and a safe one", () => {
  it.each<[string, string, string | RegExp, number?]>([
    ["a symbol", "SOL", SOL],
    ["a symbol in lower case", "usdc", USDC],
    ["a name", "Moon Network", MOON_A],
    ["a mint", USDC, USDC],
    ["an ambiguous symbol", "MOON", /"MOON" matches 2 tokens \(MOON Moon.*, MOON Moon.*\); give the mint/],
    ["no match", "BONK", /"BONK" matches no token by symbol or name; give the mint/],
    ["a substring is not a match", "USD", /"USD" matches no token/],
    ["an unknown mint", "UnknownFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF", /is not a token the service knows/],
    ["an unverified token", "NEW", /"NEW" \(New.*\) is not verified/],
    ["an unverified token given by mint", MOON_B, /MOON \(MoonB.*\) is not verified/],
    ["a suspicious token", "FISH", /is flagged suspicious \(audit.isSus\)/],
    ["a low organic score", "LOW", /has organic score 12, below tokens.minOrganicScore 50/, 50],
    ["a low organic score allowed by the gate", "LOW", LOW, 10],
  ])("%s", async (_label, reference, expected, minOrganicScore = 0) => {
    const verdict = judgeToken(reference, await search({ query: reference }), { minOrganicScore });
    if (typeof expected === "string")
      expect(verdict).toEqual({ token: expect.objectContaining({ id: expected }) });
    else expect("problem" in verdict ? verdict.problem : "").toMatch(expected);
  });
});

describe("token resolution of strategy configs", () => {
  const entry = (
    index: number,
    strategy: typeof dca | typeof limitOrders,
    raw: unknown,
  ): ConfiguredStrategy => ({
    index,
    name: strategy.name,
    strategy: strategy as never,
    config: strategy.configSchema.parse(raw),
  });
  const plan = { id: "p", inAmountRaw: "200000000", numberOfOrders: 2, intervalSeconds: 60 };

  it("replaces symbols by mints and leaves other strategies alone", async () => {
    const other = { name: "auto-claim", strategy: {} as never, config: { minPayoutUsd: 0 } };
    const result = await resolveStrategyTokens(
      {
        tokens: { minOrganicScore: 0 },
        strategies: [other, entry(1, dca, { plans: [{ ...plan, inputMint: "USDC", outputMint: "sol" }] })],
      },
      search,
    );
    expect(result.strategies[0]).toBe(other);
    expect(result.strategies[1]?.config).toMatchObject({ plans: [{ inputMint: USDC, outputMint: SOL }] });
    expect(result.resolved.map((r) => `${r.path}=${r.symbol}`)).toEqual([
      "strategies[1].plans[0].inputMint=USDC",
      "strategies[1].plans[0].outputMint=SOL",
    ]);
  });

  it("resolves a user strategy's token fields through its hooks, and reports its own token checks", async () => {
    // A user strategy, not a built-in: what it names as tokens is all the engine knows of it.
    const payWith = {
      name: "pay-with",
      contractVersion: 1,
      description: "test: names tokens",
      configSchema: dca.configSchema,
      evaluate: () => ({ intents: [], state: {} }),
      tokenFields: () => [
        { path: ["pay", "token"] },
        { path: ["pay", "other"], decimalsPath: ["pay", "decimals"] },
      ],
      checkTokens: (
        config: unknown,
        tokens: ReadonlyMap<string, { symbol: string; usdPrice?: number | null }>,
      ) => {
        const pay = (config as { pay: { token: string } }).pay;
        return [
          {
            path: ["pay", "token"],
            message: `${tokens.get(pay.token)?.symbol} at $${tokens.get(pay.token)?.usdPrice}`,
          },
        ];
      },
    } as unknown as ConfiguredStrategy["strategy"];
    const attempt = resolveStrategyTokens(
      {
        tokens: { minOrganicScore: 0 },
        strategies: [
          {
            index: 4,
            name: "pay-with",
            module: "/x/pay-with.ts",
            strategy: payWith,
            config: { pay: { token: "sol", other: "USDC", decimals: 9 } },
          },
        ],
      },
      search,
    );
    expect(await attempt.catch((e: ConfigError) => e.problems)).toEqual([
      "strategies[4].pay.decimals: 9, but USDC has 6 decimals",
      "strategies[4].pay.token: SOL at $150",
    ]);
  });

  it("refuses two fields that resolve to the same token", async () => {
    const attempt = resolveStrategyTokens(
      {
        tokens: { minOrganicScore: 0 },
        strategies: [entry(0, dca, { plans: [{ ...plan, inputMint: "USDC", outputMint: USDC }] })],
      },
      search,
    );
    expect(await attempt.catch((e: ConfigError) => e.problems)).toEqual([
      "strategies[0].plans[0].outputMint: names the same token as inputMint",
    ]);
  });

  it("lists every problem by path and rule, DCA minimums and stated decimals included", async () => {
    const attempt = resolveStrategyTokens(
      {
        tokens: { minOrganicScore: 0 },
        strategies: [
          entry(2, dca, {
            plans: [
              { ...plan, inputMint: "MOON", outputMint: "SOL" },
              { ...plan, id: "small", inAmountRaw: "60000000", inputMint: "USDC", outputMint: "SOL" },
            ],
          }),
          entry(3, limitOrders, {
            orders: [
              {
                id: "o",
                side: "sell",
                inputMint: "SOL",
                outputMint: "USDC",
                inputDecimals: 6,
                outputDecimals: 6,
                amount: "1",
                price: "150",
              },
            ],
          }),
        ],
      },
      search,
    );
    await expect(attempt).rejects.toBeInstanceOf(ConfigError);
    const problems = await attempt.catch((e: ConfigError) => e.problems);
    expect(problems).toEqual([
      expect.stringMatching(
        /^strategies\[2\]\.plans\[0\]\.inputMint: "MOON" matches 2 tokens .*; give the mint$/,
      ),
      "strategies[2].plans[1].inAmountRaw: worth $60.00 in total, below the minimum of $100.00",
      "strategies[2].plans[1].numberOfOrders: 2 orders of $30.00 each, below the minimum of $50.00 an order",
      "strategies[3].orders[0].inputDecimals: 6, but SOL has 9 decimals",
    ]);
  });
});
