import { describe, expect, it } from "vitest";
import type { Intent } from "../../../src/core/intent.js";
import { intentAmountText, tokenAmount } from "../../../src/core/intent-amount.js";

const WALLET = "7YttLkHDoNj9wyDur5pM1ejNaAvT9X4eqaYcHQqtj2G5";
const POSITION = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin";
const USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const SOL = "So11111111111111111111111111111111111111112";
const OTHER = "DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263";
const base = { wallet: WALLET, strategy: "s", key: "k" };

describe("an intent's amount in the ledger table", () => {
  it.each<[string, Intent, string | undefined, string]>([
    [
      "a claim's built payout",
      { ...base, kind: "claim", positionPubkey: POSITION },
      "68786802",
      "payout $68.786802",
    ],
    [
      "a claim not built yet: its expected payout",
      { ...base, kind: "claim", positionPubkey: POSITION, expectedPayoutMicroUsd: "2500000" },
      undefined,
      "payout $2.50",
    ],
    ["a claim with no figure", { ...base, kind: "claim", positionPubkey: POSITION }, undefined, ""],
    ["a close's proceeds", { ...base, kind: "close", positionPubkey: POSITION }, "5910000", "proceeds $5.91"],
    [
      "a limit order: what it sells for what",
      {
        ...base,
        kind: "createTrigger",
        inputMint: SOL,
        outputMint: USDC,
        makingAmount: "1500000000",
        takingAmount: "375000000",
      },
      undefined,
      "sell 1.5 SOL for 375 USDC",
    ],
    [
      "a DCA plan's deposit and orders",
      {
        ...base,
        kind: "createRecurring",
        inputMint: USDC,
        outputMint: SOL,
        inAmount: "200000000",
        numberOfOrders: 2,
        intervalSeconds: 60,
      },
      undefined,
      "200 USDC in 2 orders",
    ],
    [
      "a swap of a mint without known decimals",
      { ...base, kind: "swap", inputMint: OTHER, outputMint: USDC, amount: "1234" },
      undefined,
      "1234 raw of DezX…B263",
    ],
    ["a cancel moves nothing of its own", { ...base, kind: "cancelTrigger", order: POSITION }, undefined, ""],
  ])("%s", (_label, intent, amount, text) => {
    expect(intentAmountText(intent, amount)).toBe(text);
  });

  it("keeps every raw unit of a well-known mint", () => {
    expect(tokenAmount("1", SOL)).toBe("0.000000001 SOL");
    expect(tokenAmount("123456789012345678901", USDC)).toBe("123456789012345.678901 USDC");
  });
});

describe("a token amount of a config as written", () => {
  it("reads a well-known symbol as its mint, and shows any other name whole", () => {
    expect(tokenAmount("200000000", "usdc")).toBe("200 USDC");
    expect(tokenAmount("5", "BONK")).toBe("5 raw BONK");
  });
});
