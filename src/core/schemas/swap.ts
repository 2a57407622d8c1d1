import { z } from "zod";
import { instructionSchema, pubkey, queryBool, queryInt, rawAmount } from "./common.js";

const bps = (max: number) =>
  queryInt.pipe(z.number().min(0, `must be 0 to ${max}`).max(max, `must be 0 to ${max}`));

export const swapBuildParams = z
  .strictObject({
    inputMint: pubkey,
    outputMint: pubkey,
    amount: z
      .union([rawAmount, z.bigint().transform(String)], {
        // A missing amount is "is required", as for every other required parameter.
        error: (issue) =>
          issue.input === undefined ? "is required" : "expected an integer string of raw token units",
      })
      .pipe(rawAmount),
    taker: pubkey,
    slippageBps: bps(10_000).optional(),
    mode: z.enum(["fast"]).optional(),
    dexes: z.string().min(1).optional(),
    excludeDexes: z.string().min(1).optional(),
    platformFeeBps: bps(10_000).optional(),
    feeAccount: pubkey.optional(),
    maxAccounts: queryInt.pipe(z.number().min(1, "must be 1 to 64").max(64, "must be 1 to 64")).optional(),
    payer: pubkey.optional(),
    wrapAndUnwrapSol: queryBool.optional(),
    destinationTokenAccount: pubkey.optional(),
    nativeDestinationAccount: pubkey.optional(),
    blockhashSlotsToExpiry: queryInt
      .pipe(z.number().min(1, "must be 1 to 300").max(300, "must be 1 to 300"))
      .optional(),
  })
  .superRefine((p, ctx) => {
    if (p.dexes !== undefined && p.excludeDexes !== undefined)
      ctx.addIssue({ code: "custom", path: ["excludeDexes"], message: "mutually exclusive with dexes" });
    if (p.destinationTokenAccount !== undefined && p.nativeDestinationAccount !== undefined)
      ctx.addIssue({
        code: "custom",
        path: ["nativeDestinationAccount"],
        message: "mutually exclusive with destinationTokenAccount",
      });
    if ((p.platformFeeBps ?? 0) > 0 && p.feeAccount === undefined)
      ctx.addIssue({
        code: "custom",
        path: ["feeAccount"],
        message: "required when platformFeeBps is positive",
      });
  });

export const swapBuildResponseSchema = z.looseObject({
  inputMint: z.string(),
  outputMint: z.string(),
  inAmount: rawAmount,
  outAmount: rawAmount,
  otherAmountThreshold: rawAmount,
  swapMode: z.string(),
  slippageBps: z.number(),
  routePlan: z.array(
    z.looseObject({
      swapInfo: z.looseObject({
        ammKey: z.string(),
        label: z.string(),
        inputMint: z.string(),
        outputMint: z.string(),
        inAmount: rawAmount,
        outAmount: rawAmount,
      }),
      percent: z.number(),
      bps: z.number(),
      usdValue: z.number().optional(),
    }),
  ),
  computeBudgetInstructions: z.array(instructionSchema),
  setupInstructions: z.array(instructionSchema),
  swapInstruction: instructionSchema,
  cleanupInstruction: instructionSchema.nullable().optional(),
  otherInstructions: z.array(instructionSchema),
  /** Null means no lookup tables (api-live): read it as empty. */
  addressesByLookupTableAddress: z.record(z.string(), z.array(pubkey)).nullable(),
  blockhashWithMetadata: z.looseObject({
    blockhash: z.array(z.number().int().min(0).max(255)).length(32, "expected 32 blockhash bytes"),
    lastValidBlockHeight: z.number().int(),
  }),
});

export type SwapBuildParams = z.input<typeof swapBuildParams>;
export type SwapBuildResponse = z.infer<typeof swapBuildResponseSchema>;
