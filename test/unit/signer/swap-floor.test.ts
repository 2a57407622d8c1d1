import { describe, expect, it } from "vitest";
import { checkInflow, expectedInflow, heldToSwapFloor } from "../../../src/chain/inflow-rules.js";
import { PolicyRefusal } from "../../../src/core/errors.js";
import type { SwapQuote } from "../../../src/core/swap-quote.js";
import {
  decimalRatio,
  fairOutput,
  type PricedToken,
  type SwapIntent,
  swapFloor,
} from "../../../src/signer/swap-floor.js";

const wallet = "7YttLkHDoNj9wyDur5pM1ejNaAvT9X4eqaYcHQqtj2G5";
const usdcMint = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const solMint = "So11111111111111111111111111111111111111112";
const bonkMint = "DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263";

const usdc: PricedToken = { mint: usdcMint, usdPrice: 1, decimals: 6 };
const sol: PricedToken = { mint: solMint, usdPrice: 150, decimals: 9 };
const bonk: PricedToken = { mint: bonkMint, usdPrice: 0.0000123, decimals: 5 };
const settings = { maxPriceDeviationBps: 500, defaultSlippageBps: 50 };

/** $100 of USDC for SOL at $150: 666,666,666.67 lamports at the service's prices. */
const intent: SwapIntent = {
  key: "swap-1",
  kind: "swap",
  wallet,
  strategy: "test",
  inputMint: usdcMint,
  outputMint: solMint,
  amount: "100000000",
};
const quote = (
  outAmount: string,
  otherAmountThreshold: string,
  over: Partial<SwapQuote> = {},
): SwapQuote => ({
  inputMint: usdcMint,
  inAmount: "100000000",
  outputMint: solMint,
  outAmount,
  otherAmountThreshold,
  ...over,
});

function refusal(fn: () => unknown): PolicyRefusal {
  try {
    fn();
  } catch (error) {
    if (error instanceof PolicyRefusal) return error;
    throw error;
  }
  throw new Error("expected a refusal");
}

describe("decimalRatio: a price as the exact ratio of its decimal form", () => {
  it.each([
    [150, 150n, 1n],
    [0.42, 42n, 100n],
    [0.0000123, 123n, 10_000_000n],
    [1.5e-7, 15n, 100_000_000n],
    [2.5e21, 2_500_000_000_000_000_000_000n, 1n],
  ])("%d", (value, num, den) => {
    expect(decimalRatio(value)).toEqual({ num, den });
  });

  it.each([[-1], [Number.NaN], [Number.POSITIVE_INFINITY]])("refuses %d", (value) => {
    expect(() => decimalRatio(value)).toThrow(RangeError);
  });
});

describe("fairOutput: inAmount at the service's prices, decimals adjusted", () => {
  it.each([
    ["$100 of USDC (6) for SOL (9) at $150", 100_000_000n, usdc, sol, 666_666_666n],
    ["1 SOL (9) for USDC (6)", 1_000_000_000n, sol, usdc, 150_000_000n],
    ["1 SOL (9) for BONK (5) at $0.0000123", 1_000_000_000n, sol, bonk, 1_219_512_195_121n],
    ["a million BONK (5) for USDC (6)", 100_000_000_000n, bonk, usdc, 12_300_000n],
  ])("%s", (_name, inAmount, input, output, expected) => {
    const fair = fairOutput(inAmount, input, output);
    expect(fair.num / fair.den).toBe(expected);
  });
});

describe("swapFloor", () => {
  it.each([
    // [what, intent slippage, outAmount, threshold, expected floor]
    ["the quote less the default 50 bps slippage", undefined, "665000000", "661675000", 661_675_000n],
    ["a threshold above the rest raises the floor", undefined, "665000000", "664000000", 664_000_000n],
    ["threshold 0 and 100 % slippage: the fair output less 5 %", 10_000, "665000000", "0", 633_333_333n],
    ["the intent's own slippage (1 %) over the default", 100, "665000000", "0", 658_350_000n],
    [
      "a threshold above the quote itself only raises it",
      undefined,
      "665000000",
      "999999999999",
      999_999_999_999n,
    ],
  ] as const)("%s", (_what, slippageBps, outAmount, threshold, expected) => {
    const floor = swapFloor(
      { ...intent, ...(slippageBps !== undefined ? { slippageBps } : {}) },
      quote(outAmount, threshold),
      { input: usdc, output: sol },
      settings,
    );
    expect(floor.minRaw).toBe(expected);
    expect(floor.fairRaw).toBe(666_666_666n);
    expect(floor.fairLessDeviationRaw).toBe(633_333_333n);
  });

  it("is never below 1, however small the swap", () => {
    const one = { mint: usdcMint, usdPrice: 1.02, decimals: 0 };
    const dollar = { mint: solMint, usdPrice: 1, decimals: 0 };
    const floor = swapFloor(
      { ...intent, amount: "1", slippageBps: 10_000 },
      quote("1", "0", { inAmount: "1" }),
      { input: one, output: dollar },
      settings,
    );
    expect(floor).toMatchObject({
      minRaw: 1n,
      thresholdRaw: 0n,
      quoteLessSlippageRaw: 0n,
      fairLessDeviationRaw: 0n,
    });
  });

  it.each([
    ["5 % below the fair output, exactly", "633333334", true],
    ["just more than 5 % below", "633333333", false],
    ["5 % above, exactly", "700000000", true],
    ["just more than 5 % above", "700000001", false],
    ["a tenth of the fair output", "66666666", false],
  ])("price deviation: %s", (_what, outAmount, passes) => {
    const run = () => swapFloor(intent, quote(outAmount, "1"), { input: usdc, output: sol }, settings);
    if (passes) {
      expect(run().minRaw).toBeGreaterThan(0n);
      return;
    }
    const refused = refusal(run);
    expect(refused.reason).toBe("price_deviation");
    expect(refused.detail).toContain(`gives ${outAmount} of ${solMint} for 100000000 of ${usdcMint}`);
    expect(refused.detail).toContain("that is 666666666");
    expect(refused.detail).toContain("at most 5%");
  });

  it.each([
    ["inputMint", { inputMint: bonkMint }, `inputMint ${bonkMint}, the intent's ${usdcMint}`],
    ["inAmount", { inAmount: "100000001" }, "inAmount 100000001, the intent's 100000000"],
    ["outputMint", { outputMint: bonkMint }, `outputMint ${bonkMint}, the intent's ${solMint}`],
  ] as const)("refuses a quote whose %s is not the intent's", (_field, over, detail) => {
    const refused = refusal(() =>
      swapFloor(intent, quote("665000000", "661675000", over), { input: usdc, output: sol }, settings),
    );
    expect(refused.reason).toBe("swap_quote_mismatch");
    expect(refused.detail).toContain(detail);
  });
});

describe("heldToSwapFloor: the simulation is held to Keeper's floor", () => {
  const options = { payoutMints: [usdcMint], toleranceBps: 50 };
  const floor = { outputMint: solMint, minRaw: 633_333_333n, what: "swap output (Keeper's floor)" };

  it("raises a build's threshold of 0 to the floor, refused below it as swap_below_floor", () => {
    const held = heldToSwapFloor(expectedInflow(intent, { minInflowRaw: "0" }, options), floor);
    expect(held).toEqual({
      what: floor.what,
      mints: [solMint],
      minRaw: 633_333_333n,
      reason: "swap_below_floor",
    });
    const gained = new Map([[solMint, 633_333_332n]]);
    const refused = refusal(() => checkInflow(held, gained));
    expect(refused.reason).toBe("swap_below_floor");
    expect(refused.detail).toContain("brings the wallet 633333332 of mint");
    expect(() => checkInflow(held, new Map([[solMint, 633_333_333n]]))).not.toThrow();
  });

  it("keeps a higher expectation, and never lets a swap pay nothing", () => {
    const higher = expectedInflow(
      intent,
      { minInflowRaw: "700000000" },
      { ...options, settledLater: ["close"] },
    );
    expect(heldToSwapFloor(higher, floor)).toMatchObject({ minRaw: 700_000_000n });
    expect(heldToSwapFloor(higher, floor)).not.toHaveProperty("noneAllowed");
    expect(heldToSwapFloor(undefined, floor).minRaw).toBe(633_333_333n);
  });
});
