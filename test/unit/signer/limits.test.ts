import { describe, expect, it } from "vitest";
import { formatIssues } from "../../../src/config/format-issues.js";
import type { ConfiguredStrategy } from "../../../src/config/load-config.js";
import { configSchema } from "../../../src/config/schema.js";
import { PolicyRefusal } from "../../../src/core/errors.js";
import type { Intent } from "../../../src/core/intent.js";
import { limitSettingsFrom, needsStrategyMints } from "../../../src/signer/limit-settings.js";
import { checkSpend, type SignerLimitSettings, type Spend, spendOf } from "../../../src/signer/limits.js";
import { dca } from "../../../strategies/dca.js";
import { sweep } from "../../../strategies/sweep.js";

const wallet = "7YttLkHDoNj9wyDur5pM1ejNaAvT9X4eqaYcHQqtj2G5";
const usdc = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const sol = "So11111111111111111111111111111111111111112";
const bonk = "DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263";
const jup = "JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN";

const sides = (input: string[], output: string[]) => ({ input: new Set(input), output: new Set(output) });
const settings: SignerLimitSettings = {
  allowedMints: {
    swap: sides([usdc], [sol]),
    createTrigger: sides([sol], [usdc]),
    createRecurring: sides([usdc], [sol, jup]),
  },
  perIntent: new Map([[usdc, 100_000_000n]]),
  perDay: new Map([[usdc, 250_000_000n]]),
};
const spend = (over: Partial<Spend>): Spend => ({
  kind: "swap",
  inputMint: usdc,
  outputMint: sol,
  amount: 1_000_000n,
  ...over,
});

function refusal(fn: () => unknown): PolicyRefusal | undefined {
  try {
    fn();
  } catch (error) {
    if (error instanceof PolicyRefusal) return error;
    throw error;
  }
  return undefined;
}

describe("checkSpend", () => {
  it.each([
    ["an allowed swap", spend({}), 0n, undefined, undefined],
    [
      "a swap of an input mint not allowed",
      spend({ inputMint: bonk }),
      0n,
      "mint_not_allowed",
      `input mint ${bonk}`,
    ],
    [
      "a swap into a mint not allowed",
      spend({ outputMint: bonk }),
      0n,
      "mint_not_allowed",
      `output mint ${bonk}`,
    ],
    [
      "a swap's mints allowed only for another kind",
      spend({ inputMint: sol, outputMint: usdc }),
      0n,
      "mint_not_allowed",
      `input mint ${sol}`,
    ],
    [
      "a recurring plan into a second allowed output",
      spend({ kind: "createRecurring", outputMint: jup }),
      0n,
      undefined,
      undefined,
    ],
    [
      "a trigger order as configured",
      spend({ kind: "createTrigger", inputMint: sol, outputMint: usdc, amount: 10n ** 30n }),
      0n,
      undefined,
      undefined,
    ],
    ["exactly the per-intent cap", spend({ amount: 100_000_000n }), 0n, undefined, undefined],
    [
      "one raw unit over the per-intent cap",
      spend({ amount: 100_000_001n }),
      0n,
      "cap_per_intent",
      "a swap of 100000001 of mint",
    ],
    ["up to the day's cap exactly", spend({ amount: 50_000_000n }), 200_000_000n, undefined, undefined],
    [
      "one raw unit over the day's cap",
      spend({ amount: 50_000_001n }),
      200_000_000n,
      "cap_per_day",
      "200000000 signed today (UTC), signer.limits.perDay allows 250000000",
    ],
    [
      "a day already over its cap",
      spend({ amount: 1n }),
      300_000_000n,
      "cap_per_day",
      "300000000 signed today",
    ],
  ] as const)("%s", (_name, input, spentToday, reason, detail) => {
    const refused = refusal(() => checkSpend(input, settings, spentToday));
    expect(refused?.reason).toBe(reason);
    if (detail) expect(refused?.detail).toContain(detail);
  });

  it("no mint at all is allowed for a kind no strategy names", () => {
    const none = { ...settings, allowedMints: { ...settings.allowedMints, swap: sides([], []) } };
    expect(refusal(() => checkSpend(spend({}), none, 0n))?.detail).toContain(
      "the signer allows no mint as input",
    );
  });
});

describe("spendOf: what each kind spends", () => {
  const base = { wallet, strategy: "test" };
  it.each([
    [
      { ...base, key: "s", kind: "swap", inputMint: usdc, outputMint: sol, amount: "5" },
      { kind: "swap", amount: 5n },
    ],
    [
      {
        ...base,
        key: "t",
        kind: "createTrigger",
        inputMint: usdc,
        outputMint: sol,
        makingAmount: "6",
        takingAmount: "1",
      },
      { kind: "createTrigger", amount: 6n },
    ],
    [
      {
        ...base,
        key: "r",
        kind: "createRecurring",
        inputMint: usdc,
        outputMint: sol,
        inAmount: "7",
        numberOfOrders: 2,
        intervalSeconds: 60,
      },
      { kind: "createRecurring", amount: 7n },
    ],
  ] as const)("%o", (intent, expected) => {
    expect(spendOf(intent as Intent)).toMatchObject({ ...expected, inputMint: usdc, outputMint: sol });
  });

  it.each([
    [{ ...base, key: "c", kind: "claim", positionPubkey: sol }],
    [{ ...base, key: "x", kind: "cancelTrigger", order: sol }],
  ] as const)("%o spends nothing", (intent) => {
    expect(spendOf(intent as Intent)).toBeUndefined();
  });
});

describe("limitSettingsFrom: the config's limits, or the mints its strategies name", () => {
  const parse = (signer: unknown) => {
    const parsed = configSchema.safeParse({ signer });
    if (!parsed.success) throw new Error(formatIssues(parsed.error).join("; "));
    return parsed.data.signer.limits;
  };
  // Each entry's mints come from its strategy's `spends` hook, which reads only the token fields.
  const strategies: ConfiguredStrategy[] = [
    {
      name: "sweep",
      strategy: sweep as ConfiguredStrategy["strategy"],
      config: {
        rules: [
          { fromMint: usdc, toMint: sol },
          { fromMint: bonk, toMint: usdc },
        ],
      },
    },
    {
      name: "dca",
      strategy: dca as ConfiguredStrategy["strategy"],
      config: { plans: [{ inputMint: usdc, outputMint: jup }] },
    },
  ];

  it("defaults each kind to the mints its strategies name, and nothing where none does", () => {
    const limits = parse({});
    expect(needsStrategyMints(limits, strategies)).toBe(true);
    const built = limitSettingsFrom(limits, strategies);
    expect(built.allowedMints.swap).toEqual(sides([usdc, bonk], [sol, usdc]));
    expect(built.allowedMints.createRecurring).toEqual(sides([usdc], [jup]));
    expect(built.allowedMints.createTrigger).toEqual(sides([], []));
    expect(built.perIntent.size + built.perDay.size).toBe(0);
  });

  it("never runs a user module's spends hook: its mints are the config's to list", () => {
    const userModule: ConfiguredStrategy = {
      name: "my-sweep",
      module: "/strategies/my-sweep.ts",
      strategy: { ...sweep, name: "my-sweep" } as ConfiguredStrategy["strategy"],
      config: { rules: [{ fromMint: jup, toMint: bonk }] },
    };
    const limits = parse({});
    expect(needsStrategyMints(limits, [userModule])).toBe(false);
    expect(limitSettingsFrom(limits, [userModule]).allowedMints.swap).toEqual(sides([], []));
  });

  it("takes the configured mints and caps over the strategies'", () => {
    const limits = parse({
      limits: {
        allowedMints: { swap: { input: [jup], output: [usdc] }, createRecurring: { input: [], output: [] } },
        perIntent: { [usdc]: "5" },
        perDay: { [usdc]: "123456789012345678901234567890" },
      },
    });
    expect(needsStrategyMints(limits, strategies)).toBe(false);
    const built = limitSettingsFrom(limits, strategies);
    expect(built.allowedMints.swap).toEqual(sides([jup], [usdc]));
    expect(built.allowedMints.createRecurring).toEqual(sides([], []));
    expect(built.perIntent.get(usdc)).toBe(5n);
    expect(built.perDay.get(usdc)).toBe(123_456_789_012_345_678_901_234_567_890n);
  });

  it.each([
    [
      { limits: { perDay: { "not-a-mint": "5" } } },
      "signer.limits.perDay.not-a-mint: expected mint addresses",
    ],
    [
      { limits: { allowedMints: { swap: { input: [usdc] } } } },
      "signer.limits.allowedMints.swap.output: expected a list",
    ],
    [{ limits: { perIntent: { [usdc]: "1.5" } } }, "expected an integer string of raw units of the mint"],
    [{ limits: { perIntent: { [usdc]: 5 } } }, "signer.limits.perIntent"],
    [
      { limits: { allowedMints: { swap: { input: ["USDC"], output: [] } } } },
      "signer.limits.allowedMints.swap.input",
    ],
    [{ limits: { allowedMints: { claim: { input: [], output: [] } } } }, "signer.limits.allowedMints"],
    [{ maxPriceDeviationPct: 0 }, "signer.maxPriceDeviationPct: expected a percent between 0.01 and 50"],
    [{ maxPriceDeviationPct: 80 }, "signer.maxPriceDeviationPct: expected a percent between 0.01 and 50"],
  ])("refuses %o naming the field", (signer, message) => {
    expect(() => parse(signer)).toThrow(message);
  });
});
