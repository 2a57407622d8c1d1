import { describe, expect, it } from "vitest";
import {
  checkInflow,
  closeMinimumMicroUsd,
  expectedInflow,
  type InflowExpectation,
  lessTolerance,
} from "../../../src/chain/inflow-rules.js";
import { NATIVE_MINT } from "../../../src/chain/programs.js";
import { PolicyRefusal } from "../../../src/core/errors.js";
import type { Intent } from "../../../src/core/intent.js";

const wallet = "7YttLkHDoNj9wyDur5pM1ejNaAvT9X4eqaYcHQqtj2G5";
const usdc = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const jupUsd = "JuprjznTrTSp2UFa3ZBUFgwdAmtZCq4MQCwysN55USD";
const other = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin";
const base = { wallet, strategy: "test" };
const options = { payoutMints: [usdc, jupUsd], toleranceBps: 50 };

const claim: Intent = { ...base, key: "claim-p", kind: "claim", positionPubkey: other };
const close: Intent = { ...base, key: "close-p", kind: "close", positionPubkey: other };
const swap: Intent = {
  ...base,
  key: "swap-1",
  kind: "swap",
  inputMint: usdc,
  outputMint: NATIVE_MINT,
  amount: "1000000",
};

function refusal(fn: () => void): PolicyRefusal {
  try {
    fn();
  } catch (error) {
    if (error instanceof PolicyRefusal) return error;
    throw error;
  }
  throw new Error("expected a refusal");
}

describe("expectedInflow", () => {
  it("a claim expects its payout less the tolerance: the larger of the strategy's and the build's figures", () => {
    expect(
      expectedInflow({ ...claim, expectedPayoutMicroUsd: "2500000" }, { amountMicroUsd: "9" }, options),
    ).toEqual({
      what: "claim payout",
      mints: [usdc, jupUsd],
      minRaw: 2_487_500n,
    });
    expect(
      expectedInflow({ ...claim, expectedPayoutMicroUsd: "0" }, { amountMicroUsd: "1500000" }, options)
        ?.minRaw,
    ).toBe(1_492_500n);
    expect(
      expectedInflow(claim, { amountMicroUsd: "1500000" }, { ...options, toleranceBps: 0 })?.minRaw,
    ).toBe(1_500_000n);
  });

  it("a claim with no figure (or a zero one) must still pay something", () => {
    expect(expectedInflow(claim, {}, options)?.minRaw).toBe(1n);
    expect(expectedInflow(claim, { amountMicroUsd: "0" }, options)?.minRaw).toBe(1n);
  });

  it("a swap expects its threshold of the intent's output mint, exactly", () => {
    expect(expectedInflow(swap, { minInflowRaw: "990000" }, options)).toEqual({
      what: "swap output",
      mints: [NATIVE_MINT],
      minRaw: 990_000n,
    });
    expect(expectedInflow(swap, {}, options)?.minRaw).toBe(1n);
  });

  it("says so when a swap's threshold is unknown, and takes none from a figure that is not whole digits", () => {
    for (const minInflowRaw of [undefined, "99.5", "x990000", "990000x", ""]) {
      const built = minInflowRaw === undefined ? {} : { minInflowRaw };
      expect(expectedInflow(swap, built, options)).toMatchObject({
        what: "swap output (no threshold known)",
        minRaw: 1n,
      });
    }
  });

  it("a close expects its minimum less the tolerance", () => {
    expect(expectedInflow(close, { minInflowRaw: "1000000" }, options)).toEqual({
      what: "close proceeds",
      mints: [usdc, jupUsd],
      minRaw: 995_000n,
    });
    expect(expectedInflow(close, {}, options)).toBeUndefined();
  });

  it("only a close settled later may pay nothing at once, never a claim or a swap", () => {
    const later = { ...options, settledLater: ["close"] as const };
    expect(expectedInflow(close, { minInflowRaw: "1000000" }, later)?.noneAllowed).toBe(true);
    expect(expectedInflow(close, { minInflowRaw: "1000000" }, options)).not.toHaveProperty("noneAllowed");
    expect(expectedInflow(swap, { minInflowRaw: "1" }, later)).not.toHaveProperty("noneAllowed");
    expect(expectedInflow(claim, { amountMicroUsd: "1" }, later)).not.toHaveProperty("noneAllowed");
  });

  it("orders and cancels expect nothing", () => {
    const cancel: Intent = { ...base, key: "c", kind: "cancelTrigger", order: other };
    expect(expectedInflow(cancel, { amountMicroUsd: "5", minInflowRaw: "5" }, options)).toBeUndefined();
  });
});

describe("checkInflow", () => {
  const payout: InflowExpectation = { what: "claim payout", mints: [usdc, jupUsd], minRaw: 2_000_000n };

  it("passes a payout of at least the minimum, in any of the mints together", () => {
    checkInflow(payout, new Map([[usdc, 2_000_000n]]));
    checkInflow(
      payout,
      new Map([
        [usdc, 1_500_000n],
        [jupUsd, 500_000n],
      ]),
    );
  });

  it("refuses a payout that does not reach the wallet, naming the mint, the expected and the got", () => {
    const error = refusal(() => checkInflow(payout, new Map()));
    expect(error.reason).toBe("inflow_short");
    expect(error.detail).toContain(
      `brings the wallet 0 of mint ${usdc} or ${jupUsd}, expected at least 2000000`,
    );
  });

  it("refuses one micro-unit short, and counts neither another mint nor a loss", () => {
    expect(refusal(() => checkInflow(payout, new Map([[usdc, 1_999_999n]]))).reason).toBe("inflow_short");
    const elsewhere = new Map([
      [other, 5_000_000n],
      [jupUsd, -1_000_000n],
      [usdc, 1_000_000n],
    ]);
    expect(refusal(() => checkInflow(payout, elsewhere)).detail).toContain("brings the wallet 1000000");
  });

  it("a close that pays nothing passes, one that pays too little does not", () => {
    const proceeds = { ...payout, what: "close proceeds", noneAllowed: true };
    checkInflow(proceeds, new Map());
    expect(refusal(() => checkInflow(proceeds, new Map([[usdc, 1n]]))).reason).toBe("inflow_short");
  });
});

describe("close minimum and tolerance", () => {
  it("is contracts x minimum sell price less the estimated fees, never below zero", () => {
    expect(
      closeMinimumMicroUsd({ contracts: "10", minSellPriceUsd: "600000", estimatedTotalFeeUsd: "120000" }),
    ).toBe("5880000");
    expect(closeMinimumMicroUsd({ contracts: "1", minSellPriceUsd: "1", estimatedTotalFeeUsd: "5" })).toBe(
      "0",
    );
    expect(
      closeMinimumMicroUsd({ contracts: "10", minSellPriceUsd: null, estimatedTotalFeeUsd: "0" }),
    ).toBeUndefined();
  });

  it("counts the exact contractsMicro when the order carries it, not the floored contracts", () => {
    const sale = { contracts: "2", minSellPriceUsd: "600000", estimatedTotalFeeUsd: "100000" };
    expect(closeMinimumMicroUsd({ ...sale, contractsMicro: "2500000" })).toBe("1400000");
    expect(closeMinimumMicroUsd({ ...sale, contracts: "0", contractsMicro: "400000" })).toBe("140000");
    // Without it the floored count is all there is.
    expect(closeMinimumMicroUsd(sale)).toBe("1100000");
  });

  it("counts the exact contracts (contractsMicro) where the order carries them, not the floored ones", () => {
    const order = { contracts: "10", minSellPriceUsd: "600000", estimatedTotalFeeUsd: "120000" };
    // 10.5 contracts at $0.60 less $0.12: $6.18, where the floored count says $5.88.
    expect(closeMinimumMicroUsd({ ...order, contractsMicro: "10500000" })).toBe("6180000");
    expect(closeMinimumMicroUsd({ ...order, contractsMicro: undefined })).toBe("5880000");
    // Fills are whole hundredths of a contract: 10.5099 sells 10.50.
    expect(closeMinimumMicroUsd({ ...order, contractsMicro: "10509900" })).toBe("6180000");
  });

  it("is unknown when any figure is missing or not whole digits", () => {
    const whole = { contracts: "10", minSellPriceUsd: "600000", estimatedTotalFeeUsd: "0" };
    for (const field of ["contracts", "minSellPriceUsd", "estimatedTotalFeeUsd"] as const) {
      for (const value of [null, undefined, "1.5", "1x", "x1"]) {
        expect(closeMinimumMicroUsd({ ...whole, [field]: value })).toBeUndefined();
      }
    }
  });

  it("takes basis points off, rounding down", () => {
    expect(lessTolerance(1_000_001n, 50)).toBe(995_000n);
    expect(lessTolerance(7n, 0)).toBe(7n);
  });
});
