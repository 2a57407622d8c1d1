import { z } from "zod";
import { pubkey, queryInt, rawAmount } from "./common.js";

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

/** The live service may leave `order` out (api-live): the order account is then learnt from its list. */
export const triggerCreateResponseSchema = z.looseObject({
  requestId: z.string().min(1),
  transaction: z.string().min(1),
  order: pubkey.optional(),
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

/** The live service may answer `{ signature, status }` without `code` (api-live). */
export const triggerExecuteResponseSchema = z.looseObject({
  signature: z.string(),
  status: z.enum(["Success", "Failed"]),
  code: z.number().optional(),
  error: z.string().nullable().optional(),
});

/**
 * POST /trigger/v1/cancelOrders (live, beyond the spec): several orders of one maker at once; without
 * `orders`, every open order of the maker. The service answers one requestId and one transaction per
 * batch of orders; each goes to POST /trigger/v1/execute with that requestId.
 */
export const TRIGGER_CANCEL_MANY_MAX = 100;
export const triggerCancelManyBody = z.strictObject({
  maker: pubkey,
  orders: z
    .array(pubkey)
    .min(1, "must name at least one order (leave it out to cancel every open order)")
    .max(TRIGGER_CANCEL_MANY_MAX, `must name at most ${TRIGGER_CANCEL_MANY_MAX} orders`)
    .optional(),
  computeUnitPrice: computeUnitPrice.optional(),
});

export const triggerCancelManyResponseSchema = z.looseObject({
  requestId: z.string().min(1),
  transactions: z.array(z.string().min(1)),
});

/**
 * GET /trigger/v1/getTriggerOrders (live, beyond the spec): a maker's orders, `active` (open) or
 * `history` (filled, cancelled, expired), by page from 1.
 */
export const triggerOrdersParams = z.strictObject({
  user: pubkey,
  orderStatus: z.enum(["active", "history"], {
    error: (issue) => (issue.input === undefined ? "is required" : 'expected "active" or "history"'),
  }),
  page: queryInt.pipe(z.number().min(1, "must be >= 1")).optional(),
  inputMint: pubkey.optional(),
  outputMint: pubkey.optional(),
});

/**
 * One listed trigger order. The reference documents the list but not every member: the ones Keeper
 * reads are required; the rest are optional because their presence or type is not certain.
 * `status` is kept as a string (values seen: open/active, completed/filled, cancelled, expired); read
 * it through `listedOrderState` (src/core/service-orders.ts), never as a closed set.
 */
export const triggerOrderSchema = z.looseObject({
  orderKey: pubkey,
  userPubkey: pubkey,
  inputMint: pubkey,
  outputMint: pubkey,
  /** Amounts as the service shows them (possibly in whole tokens, with decimals). */
  makingAmount: z.string(),
  takingAmount: z.string(),
  /** Raw token units, where given (not certain on every item). */
  rawMakingAmount: rawAmount.optional(),
  rawTakingAmount: rawAmount.optional(),
  remainingMakingAmount: z.string().nullable().optional(),
  status: z.string().min(1),
  /** ISO 8601 in the reference; a number of Unix seconds is accepted too. */
  createdAt: z.union([z.string(), z.number()]),
  updatedAt: z.union([z.string(), z.number()]).nullable().optional(),
  expiredAt: z.union([z.string(), z.number()]).nullable().optional(),
  openTx: z.string().nullable().optional(),
  closeTx: z.string().nullable().optional(),
});

export const triggerOrdersResponseSchema = z.looseObject({
  user: pubkey.optional(),
  orderStatus: z.string().optional(),
  orders: z.array(triggerOrderSchema),
  page: z.number().int().optional(),
  totalPages: z.number().int().optional(),
});

export type TriggerCreateBody = z.input<typeof triggerCreateBody>;
export type TriggerCreateResponse = z.infer<typeof triggerCreateResponseSchema>;
export type TriggerCancelBody = z.input<typeof triggerCancelBody>;
export type TriggerCancelResponse = z.infer<typeof triggerCancelResponseSchema>;
export type ExecuteBody = z.input<typeof executeBody>;
export type TriggerExecuteResponse = z.infer<typeof triggerExecuteResponseSchema>;
export type TriggerCancelManyBody = z.input<typeof triggerCancelManyBody>;
export type TriggerCancelManyResponse = z.infer<typeof triggerCancelManyResponseSchema>;
export type TriggerOrdersParams = z.input<typeof triggerOrdersParams>;
export type TriggerOrder = z.infer<typeof triggerOrderSchema>;
export type TriggerOrdersResponse = z.infer<typeof triggerOrdersResponseSchema>;
