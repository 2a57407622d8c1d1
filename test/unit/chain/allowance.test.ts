import { ACCOUNT_SIZE } from "@solana/spl-token";
import { describe, expect, it } from "vitest";
import { allowanceFor, DEFAULT_RENT_LAMPORTS } from "../../../src/chain/allowance.js";
import { NATIVE_MINT } from "../../../src/chain/programs.js";
import { describeTransactionError } from "../../../src/chain/tx-error.js";
import type { Intent } from "../../../src/core/intent.js";

const wallet = "7YttLkHDoNj9wyDur5pM1ejNaAvT9X4eqaYcHQqtj2G5";
const usdc = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const out = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin";
const base = { wallet, strategy: "test" };

describe("allowanceFor", () => {
  it.each<[string, Intent, bigint, [string, bigint][]]>([
    // Rent for the wallet's own token accounts is not an outflow; nothing else may be funded.
    ["claim", { ...base, key: "claim-p", kind: "claim", positionPubkey: out }, 0n, []],
    ["close", { ...base, key: "close-p", kind: "close", positionPubkey: out }, 0n, []],
    ["closeAll", { ...base, key: "close-all", kind: "closeAll" }, 0n, []],
    ["cancelTrigger", { ...base, key: "cancel", kind: "cancelTrigger", order: out }, 0n, []],
    ["cancelRecurring", { ...base, key: "stop", kind: "cancelRecurring", order: out }, 0n, []],
    [
      "createTrigger",
      {
        ...base,
        key: "t",
        kind: "createTrigger",
        inputMint: usdc,
        outputMint: out,
        makingAmount: "5000000",
        takingAmount: "1",
      },
      DEFAULT_RENT_LAMPORTS,
      [[usdc, 5_000_000n]],
    ],
    [
      "createRecurring",
      {
        ...base,
        key: "r",
        kind: "createRecurring",
        inputMint: usdc,
        outputMint: out,
        inAmount: "100000000",
        numberOfOrders: 2,
        intervalSeconds: 60,
      },
      DEFAULT_RENT_LAMPORTS,
      [[usdc, 100_000_000n]],
    ],
    [
      "swap",
      { ...base, key: "s", kind: "swap", inputMint: usdc, outputMint: out, amount: "42" },
      0n,
      [[usdc, 42n]],
    ],
    [
      // One native budget: SOL and wrapped SOL together, the amount once.
      "swap of native SOL: the amount once, as lamports",
      { ...base, key: "s2", kind: "swap", inputMint: NATIVE_MINT, outputMint: usdc, amount: "1000" },
      1000n,
      [[NATIVE_MINT, 1000n]],
    ],
    [
      "trigger order of native SOL: the amount once, plus the order's rent",
      {
        ...base,
        key: "t2",
        kind: "createTrigger",
        inputMint: NATIVE_MINT,
        outputMint: usdc,
        makingAmount: "1000",
        takingAmount: "1",
      },
      DEFAULT_RENT_LAMPORTS + 1000n,
      [[NATIVE_MINT, 1000n]],
    ],
  ])("%s", (_name, intent, lamports, tokens) => {
    const allowance = allowanceFor(intent);
    expect(allowance.maxLamports).toBe(lamports);
    expect([...allowance.tokens]).toEqual(tokens);
  });

  it("lets an order leave by default the rent of two token accounts (its own and the escrow's)", () => {
    // Rent exemption on Solana: (data + 128 bytes of account overhead) x 3,480 lamports a byte-year x 2 years.
    const tokenAccountRent = BigInt((ACCOUNT_SIZE + 128) * 3_480 * 2);
    const order: Intent = {
      ...base,
      key: "t",
      kind: "createTrigger",
      inputMint: usdc,
      outputMint: out,
      makingAmount: "1",
      takingAmount: "1",
    };
    expect(allowanceFor(order).maxLamports).toBe(2n * tokenAccountRent);
  });

  it("takes an order's rent allowance from options, and gives claims none whatever the options", () => {
    const order: Intent = {
      ...base,
      key: "r",
      kind: "createRecurring",
      inputMint: usdc,
      outputMint: out,
      inAmount: "1",
      numberOfOrders: 2,
      intervalSeconds: 60,
    };
    expect(allowanceFor(order, { rentLamports: 0n }).maxLamports).toBe(0n);
    expect(allowanceFor(order, { rentLamports: 7n }).maxLamports).toBe(7n);
    const claim: Intent = { ...base, key: "claim-p", kind: "claim", positionPubkey: out };
    expect(allowanceFor(claim, { rentLamports: 7n }).maxLamports).toBe(0n);
  });
});

describe("describeTransactionError", () => {
  it.each([
    ["BlockhashNotFound", "BlockhashNotFound"],
    [{ InstructionError: [1, { Custom: 1 }] }, "instruction 1: custom program error 0x1"],
    [{ InstructionError: [0, "InvalidAccountData"] }, "instruction 0: InvalidAccountData"],
    [{ InsufficientFundsForRent: { account_index: 2 } }, '{"InsufficientFundsForRent":{"account_index":2}}'],
  ])("%j", (err, text) => {
    expect(describeTransactionError(err)).toBe(text);
  });
});
