import { z } from "zod";
import { pubkey } from "./common.js";

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

export const recurringExecuteResponseSchema = z.looseObject({
  signature: z.string(),
  status: z.enum(["Success", "Failed"]),
  order: z.string().nullable().optional(),
  error: z.string().optional(),
});

export type RecurringCreateBody = z.input<typeof recurringCreateBody>;
export type RecurringCreateResponse = z.infer<typeof recurringCreateResponseSchema>;
export type RecurringExecuteResponse = z.infer<typeof recurringExecuteResponseSchema>;
