import { z } from "zod";
import { pubkey, rawAmount } from "./common.js";

/** `auto` (95th percentile of priority fees) or an integer of microlamports. */
export const computeUnitPrice = z.union([
  z.literal("auto"),
  z.string().regex(/^\d+$/, "expected 'auto' or microlamports"),
]);
const intString = (rule: string) => z.string().regex(/^\d+$/, rule);
// zod runs a refinement even when the regex before it failed: test the shape again before BigInt(),
// which throws on "1e6" and would turn a refusal into a crash.
const positiveRawAmount = rawAmount.refine((v) => !/^\d+$/.test(v) || BigInt(v) > 0n, "must be positive");

export const triggerCreateBody = z
  .strictObject({
    inputMint: pubkey,
    outputMint: pubkey,
    maker: pubkey,
    payer: pubkey,
    params: z.strictObject({
      makingAmount: positiveRawAmount,
      takingAmount: positiveRawAmount,
      expiredAt: intString("expected Unix seconds").optional(),
      slippageBps: intString("expected basis points")
        .refine((v) => Number(v) <= 10_000, "must be 0 to 10000")
        .optional(),
      feeBps: intString("expected basis points")
        .refine((v) => Number(v) <= 10_000, "must be 0 to 10000")
        .optional(),
    }),
    computeUnitPrice: computeUnitPrice.optional(),
    feeAccount: pubkey.optional(),
    wrapAndUnwrapSol: z.boolean().optional(),
  })
  .superRefine((b, ctx) => {
    if (b.inputMint === b.outputMint)
      ctx.addIssue({ code: "custom", path: ["outputMint"], message: "must differ from inputMint" });
    if (b.params.feeBps !== undefined && Number(b.params.feeBps) > 0 && b.feeAccount === undefined)
      ctx.addIssue({
        code: "custom",
        path: ["feeAccount"],
        message: "required when params.feeBps is positive",
      });
  });

export const triggerCreateResponseSchema = z.looseObject({
  requestId: z.string().min(1),
  transaction: z.string().min(1),
  order: pubkey,
});

export const triggerCancelBody = z.strictObject({
  maker: pubkey,
  order: pubkey,
  computeUnitPrice: computeUnitPrice.optional(),
});

export const triggerCancelResponseSchema = z.looseObject({
  requestId: z.string().min(1),
  transaction: z.string().min(1),
});

export const executeBody = z.strictObject({
  requestId: z.string().min(1, "is required"),
  signedTransaction: z.string().min(1, "is required"),
});

export const triggerExecuteResponseSchema = z.looseObject({
  signature: z.string(),
  status: z.enum(["Success", "Failed"]),
  code: z.number(),
  error: z.string().optional(),
});

export type TriggerCreateBody = z.input<typeof triggerCreateBody>;
export type TriggerCreateResponse = z.infer<typeof triggerCreateResponseSchema>;
export type TriggerCancelBody = z.input<typeof triggerCancelBody>;
export type TriggerCancelResponse = z.infer<typeof triggerCancelResponseSchema>;
export type ExecuteBody = z.input<typeof executeBody>;
export type TriggerExecuteResponse = z.infer<typeof triggerExecuteResponseSchema>;
