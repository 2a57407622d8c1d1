import {
  AddressLookupTableAccount,
  ComputeBudgetInstruction,
  ComputeBudgetProgram,
  Keypair,
  PublicKey,
  VersionedTransaction,
} from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import { readComputeBudget } from "../../../../src/chain/compute-budget.js";
import { viewTransaction } from "../../../../src/chain/decode.js";
import type { Intent } from "../../../../src/core/intent.js";
import type { ApiInstruction } from "../../../../src/core/schemas/common.js";
import type { SwapBuildResponse } from "../../../../src/core/schemas/swap.js";
import { assembleSwap, MAX_COMPUTE_UNITS } from "../../../../src/keeper/pipeline/assemble-swap.js";
import { type BuildApi, buildTransaction } from "../../../../src/keeper/pipeline/build-transaction.js";

const taker = Keypair.generate().publicKey.toBase58();
const program = Keypair.generate().publicKey.toBase58();
const looked = Keypair.generate().publicKey.toBase58();
const table = Keypair.generate().publicKey.toBase58();

function ix(tag: number, extraAccount?: string): ApiInstruction {
  return {
    programId: program,
    accounts: [
      { pubkey: taker, isSigner: true, isWritable: true },
      ...(extraAccount ? [{ pubkey: extraAccount, isSigner: false, isWritable: false }] : []),
    ],
    data: Buffer.from([tag]).toString("base64"),
  };
}

function build(extra: Partial<SwapBuildResponse> = {}): SwapBuildResponse {
  const price = ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 1_000 });
  const theirLimit = ComputeBudgetProgram.setComputeUnitLimit({ units: 99 });
  const fromWeb3 = (i: typeof price): ApiInstruction => ({
    programId: i.programId.toBase58(),
    accounts: [],
    data: Buffer.from(i.data).toString("base64"),
  });
  return {
    inputMint: taker,
    outputMint: taker,
    inAmount: "1",
    outAmount: "1",
    otherAmountThreshold: "1",
    swapMode: "ExactIn",
    slippageBps: 50,
    routePlan: [],
    computeBudgetInstructions: [fromWeb3(price), fromWeb3(theirLimit)],
    setupInstructions: [ix(1)],
    swapInstruction: ix(2, looked),
    cleanupInstruction: ix(3),
    otherInstructions: [ix(4)],
    addressesByLookupTableAddress: { [table]: [looked] },
    blockhashWithMetadata: {
      blockhash: Array.from({ length: 32 }, (_, i) => i + 1),
      lastValidBlockHeight: 777,
    },
    ...extra,
  } as SwapBuildResponse;
}

describe("assembling a swap build", () => {
  it.each<[string, number, number]>([
    ["1.2 x what the simulation consumed", 100_000, 120_000],
    ["rounded up", 100_001, 120_002],
    ["capped at 1,400,000", 1_300_000, MAX_COMPUTE_UNITS],
  ])("compute-unit limit: %s", async (_label, consumed, limit) => {
    const assembled = await assembleSwap(build(), { taker, simulateUnits: async () => consumed });
    expect(assembled.computeUnitLimit).toBe(limit);
    const tx = VersionedTransaction.deserialize(Buffer.from(assembled.transaction, "base64"));
    const keys = tx.message.staticAccountKeys.map((k) => k.toBase58());
    const first = tx.message.compiledInstructions[0];
    expect(keys[first?.programIdIndex ?? -1]).toBe(ComputeBudgetProgram.programId.toBase58());
    expect(Buffer.from(first?.data ?? [])[0]).toBe(2);
    expect(Buffer.from(first?.data ?? []).readUInt32LE(1)).toBe(limit);
  });

  it("orders the instructions as api-gaps says, pays with the taker, uses the build's lookup table and blockhash", async () => {
    const simulated: VersionedTransaction[] = [];
    const assembled = await assembleSwap(build(), {
      taker,
      simulateUnits: async (tx) => {
        simulated.push(tx);
        return 50_000;
      },
    });
    expect(simulated).toHaveLength(1);
    expect(assembled.lastValidBlockHeight).toBe(777);
    const tx = VersionedTransaction.deserialize(Buffer.from(assembled.transaction, "base64"));
    expect(tx.version).toBe(0);
    const keys = tx.message.staticAccountKeys.map((k) => k.toBase58());
    expect(keys[0]).toBe(taker);
    expect(tx.message.addressTableLookups.map((l) => l.accountKey.toBase58())).toEqual([table]);
    expect(tx.message.recentBlockhash).toBe("4wBqpZM9xaSheZzJSMawUKKwhdpChKbZ5eu5ky4Vigw");
    const sequence = tx.message.compiledInstructions.map((c) => {
      const id = keys[c.programIdIndex];
      if (id === ComputeBudgetProgram.programId.toBase58())
        return `budget-${ComputeBudgetInstruction.decodeInstructionType({ programId: ComputeBudgetProgram.programId, keys: [], data: Buffer.from(c.data) })}`;
      return `ix-${Buffer.from(c.data)[0]}`;
    });
    // Our limit first; the build's own limit dropped; its price kept.
    expect(sequence).toEqual([
      "budget-SetComputeUnitLimit",
      "budget-SetComputeUnitPrice",
      "ix-1",
      "ix-2",
      "ix-3",
      "ix-4",
    ]);
  });

  it("with Keeper's price: replaces the build's price with one priced for the simulated limit", async () => {
    const asked: number[] = [];
    const simulated: VersionedTransaction[] = [];
    const assembled = await assembleSwap(build(), {
      taker,
      simulateUnits: async (tx) => {
        simulated.push(tx);
        return 100_000;
      },
      unitPrice: (unitLimit) => {
        asked.push(unitLimit);
        return 42_000;
      },
    });
    expect(asked).toEqual([120_000]);
    expect(assembled.computeUnitPrice).toBe(42_000);
    const budgetOf = (tx: VersionedTransaction) => {
      const view = viewTransaction(tx, [
        new AddressLookupTableAccount({
          key: new PublicKey(table),
          state: {
            deactivationSlot: 0n,
            lastExtendedSlot: 0,
            lastExtendedSlotStartIndex: 0,
            addresses: [new PublicKey(looked)],
          },
        }),
      ]);
      return readComputeBudget(view.instructions);
    };
    // One price instruction (the build's 1,000 gone), ours; the simulation counted the same instructions.
    expect(
      budgetOf(VersionedTransaction.deserialize(Buffer.from(assembled.transaction, "base64"))),
    ).toMatchObject({
      unitPriceMicroLamports: 42_000n,
      unitLimit: 120_000n,
      priceInstructions: 1,
      limitInstructions: 1,
    });
    expect(simulated[0]?.message.compiledInstructions).toHaveLength(
      VersionedTransaction.deserialize(Buffer.from(assembled.transaction, "base64")).message
        .compiledInstructions.length,
    );
  });

  it("leaves out a missing cleanup instruction", async () => {
    const assembled = await assembleSwap(build({ cleanupInstruction: null }), {
      taker,
      simulateUnits: async () => 1,
    });
    const tx = VersionedTransaction.deserialize(Buffer.from(assembled.transaction, "base64"));
    expect(tx.message.compiledInstructions).toHaveLength(5);
  });
});

describe("building a swap intent", () => {
  const output = Keypair.generate().publicKey.toBase58();
  const intent: Intent = {
    key: "swap-1",
    kind: "swap",
    wallet: taker,
    strategy: "test",
    inputMint: taker,
    outputMint: output,
    amount: "1",
  };
  const api = (answer: SwapBuildResponse): BuildApi =>
    ({ buildSwap: async () => answer, simulateUnits: async () => 1 }) as unknown as BuildApi;

  it("hands the build's otherAmountThreshold on as the least the transaction may bring in", async () => {
    const built = await buildTransaction(
      api(build({ outputMint: output, otherAmountThreshold: "4242" })),
      intent,
    );
    expect(built.minInflowRaw).toBe("4242");
  });

  it("fails a build of another output mint than the intent's (its threshold would check nothing)", async () => {
    await expect(buildTransaction(api(build({ outputMint: looked })), intent)).rejects.toThrow(
      `swap build: outputMint ${looked} is not the intent's outputMint ${output}`,
    );
  });

  it.each([
    [
      "inputMint",
      { inputMint: looked },
      `swap build: inputMint ${looked} is not the intent's inputMint ${taker}`,
    ],
    ["inAmount", { inAmount: "2" }, "swap build: inAmount 2 is not the intent's inAmount 1"],
  ] as const)(
    "fails a build whose %s is not the intent's (the signer's floor is taken from it)",
    async (_f, over, message) => {
      await expect(buildTransaction(api(build({ outputMint: output, ...over })), intent)).rejects.toThrow(
        message,
      );
    },
  );

  it("records the quote's figures for the signer's floor", async () => {
    const built = await buildTransaction(
      api(build({ outputMint: output, outAmount: "5000", otherAmountThreshold: "4975" })),
      intent,
    );
    expect(built.swapQuote).toEqual({
      inputMint: taker,
      inAmount: "1",
      outputMint: output,
      outAmount: "5000",
      otherAmountThreshold: "4975",
    });
  });

  it("bids on every build and raises the bid on each rebuild after an expiry", async () => {
    const askedAbout: string[][] = [];
    const priorityFees = {
      recent: async (accounts: readonly string[]) => {
        askedAbout.push([...accounts]);
        return [8_000, 4_000];
      },
      settings: {
        percentile: 75,
        minMicroLamports: 1_000,
        escalation: 1.5,
        maxUnitPriceMicroLamports: 2_000_000,
        maxPriorityFeeLamports: 1_000_000,
      },
    };
    const swap = api(build({ outputMint: output }));
    const prices = [];
    for (const n of [1, 2, 3])
      prices.push((await buildTransaction(swap, intent, { build: n, priorityFees })).computeUnitPrice);
    expect(prices).toEqual([8_000, 12_000, 18_000]);
    expect(askedAbout).toEqual([[taker], [taker], [taker]]);
  });
});
