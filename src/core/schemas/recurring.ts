import { z } from "zod";
import { pubkey, queryBool, queryInt, rawAmount } from "./common.js";

/** Service minimums (api-gaps): at least 2 orders; USD minimums are checked where a price is known. */
export const RECURRING_MIN_ORDERS = 2;
export const RECURRING_MIN_TOTAL_USD = 100;
export const RECURRING_MIN_PER_ORDER_USD = 50;

const positive = (rule = "must be a positive number") => z.number().positive(rule);

export const recurringTimeParams = z.strictObject({
  inAmount: z.number().int("must be an integer of raw units").positive("must be positive"),
  numberOfOrders: z
    .number()
    .int("must be an integer")
    .min(RECURRING_MIN_ORDERS, `must be at least ${RECURRING_MIN_ORDERS}`),
  interval: z.number().int("must be an integer of seconds").positive("must be positive"),
  minPrice: positive().nullable().optional(),
  maxPrice: positive().nullable().optional(),
  startAt: z.number().int().nullable().optional(),
});

export const recurringPriceParams = z.strictObject({
  depositAmount: z.number().int("must be an integer of raw units").positive("must be positive"),
  incrementUsdcValue: positive(),
  interval: z.number().int("must be an integer of seconds").positive("must be positive"),
  startAt: z.number().int().nullable().optional(),
});

export const recurringCreateBody = z
  .strictObject({
    user: pubkey,
    inputMint: pubkey,
    outputMint: pubkey,
    params: z.strictObject({ time: recurringTimeParams.optional(), price: recurringPriceParams.optional() }),
  })
  .superRefine((b, ctx) => {
    const count = Number(b.params.time !== undefined) + Number(b.params.price !== undefined);
    if (count !== 1)
      ctx.addIssue({ code: "custom", path: ["params"], message: "must hold exactly one of time or price" });
    const t = b.params.time;
    if (t?.minPrice != null && t.maxPrice != null && t.minPrice > t.maxPrice)
      ctx.addIssue({
        code: "custom",
        path: ["params", "time", "minPrice"],
        message: "must not exceed maxPrice",
      });
    if (b.inputMint === b.outputMint)
      ctx.addIssue({ code: "custom", path: ["outputMint"], message: "must differ from inputMint" });
  });

export const recurringCreateResponseSchema = z.looseObject({
  requestId: z.string().min(1),
  transaction: z.string().min(1),
});

/** The live service may answer `error: null` on success (api-live). */
export const recurringExecuteResponseSchema = z.looseObject({
  signature: z.string(),
  status: z.enum(["Success", "Failed"]),
  order: z.string().nullable().optional(),
  error: z.string().nullable().optional(),
});

/**
 * POST /recurring/v1/cancelOrder (live, beyond the spec): closes a recurring order and returns what is
 * left of its deposit. `recurringType` says which kind of order it is (default time).
 */
export const recurringCancelBody = z.strictObject({
  order: pubkey,
  user: pubkey,
  recurringType: z
    .enum(["time", "price"], {
      error: (issue) => (issue.input === undefined ? "is required" : 'expected "time" or "price"'),
    })
    .optional(),
});

export const recurringCancelResponseSchema = z.looseObject({
  requestId: z.string().min(1),
  transaction: z.string().min(1),
});

/**
 * GET /recurring/v1/getRecurringOrders (live, beyond the spec): a user's recurring orders, `active`
 * or `history` (completed or closed by the user), of one type or `all`, by page from 1.
 */
export const recurringOrdersParams = z.strictObject({
  user: pubkey,
  orderStatus: z.enum(["active", "history"], {
    error: (issue) => (issue.input === undefined ? "is required" : 'expected "active" or "history"'),
  }),
  recurringType: z.enum(["time", "price", "all"], {
    error: (issue) => (issue.input === undefined ? "is required" : 'expected "time", "price" or "all"'),
  }),
  page: queryInt.pipe(z.number().min(1, "must be >= 1")).optional(),
  includeFailedTx: queryBool.optional(),
});

/**
 * One listed recurring order. The members Keeper reads are required; the others are optional
 * because the reference does not settle their presence or type. `status` may be missing: an order
 * is then open when listed `active`, and completed (or cancelled, when `userClosed`) in `history`.
 */
export const recurringOrderSchema = z.looseObject({
  orderKey: pubkey,
  userPubkey: pubkey,
  inputMint: pubkey,
  outputMint: pubkey,
  /** Raw units of the input deposited, where given. */
  rawInDeposited: rawAmount.optional(),
  inDeposited: z.string().optional(),
  inUsed: z.string().nullable().optional(),
  outReceived: z.string().nullable().optional(),
  /** Seconds between orders. */
  cycleFrequency: z.union([z.number(), z.string()]).optional(),
  numberOfOrders: z.number().int().optional(),
  status: z.string().min(1).optional(),
  userClosed: z.boolean().optional(),
  /** ISO 8601 in the reference; a number of Unix seconds is accepted too. */
  createdAt: z.union([z.string(), z.number()]),
  updatedAt: z.union([z.string(), z.number()]).nullable().optional(),
  openTx: z.string().nullable().optional(),
  closeTx: z.string().nullable().optional(),
});

/** The orders come under the key of the asked `recurringType` (`time`, `price` or `all`). */
export const recurringOrdersResponseSchema = z.looseObject({
  user: pubkey.optional(),
  orderStatus: z.string().optional(),
  time: z.array(recurringOrderSchema).optional(),
  price: z.array(recurringOrderSchema).optional(),
  all: z.array(recurringOrderSchema).optional(),
  page: z.number().int().optional(),
  totalPages: z.number().int().optional(),
});

export type RecurringCreateBody = z.input<typeof recurringCreateBody>;
export type RecurringCreateResponse = z.infer<typeof recurringCreateResponseSchema>;
export type RecurringExecuteResponse = z.infer<typeof recurringExecuteResponseSchema>;
export type RecurringCancelBody = z.input<typeof recurringCancelBody>;
export type RecurringCancelResponse = z.infer<typeof recurringCancelResponseSchema>;
export type RecurringOrdersParams = z.input<typeof recurringOrdersParams>;
export type RecurringOrder = z.infer<typeof recurringOrderSchema>;
export type RecurringOrdersResponse = z.infer<typeof recurringOrdersResponseSchema>;
