import { z } from "zod";

/** Base58 public key, 32 to 44 characters (api-gaps). */
export const pubkey = z
  .string()
  .min(32, "expected a base58 public key of 32 to 44 characters")
  .max(44, "expected a base58 public key of 32 to 44 characters")
  .regex(/^[1-9A-HJ-NP-Za-km-z]+$/, "expected a base58 public key");

/** USD amounts are integer strings of micro-USD ("1500000" is $1.50). */
export const microUsd = z.string().regex(/^-?\d+$/, "expected an integer string of micro-USD");
/** Legacy contract counts: strings of whole contracts, floored by the service (api-live). */
export const contractCount = z.string().regex(/^\d+$/, "expected an integer string of contracts");
/** Exact contract counts: 1,000,000 is one contract; may exceed 2^53, so read as bigint (api-live). */
export const contractsMicro = z.string().regex(/^\d+$/, "expected an integer string of micro-contracts");
/** The same count as a decimal string ("2.5"); sent beside `contractsMicro`, never used for sums. */
export const contractsDecimal = z.string().regex(/^\d+(\.\d+)?$/, "expected a decimal string of contracts");
/** The exact fields the service sends beside each legacy `contracts`; older answers lack them. */
export const exactContracts = {
  contractsMicro: contractsMicro.optional(),
  contractsDecimal: contractsDecimal.optional(),
};
/** Raw token amounts: integer strings, exact beyond 2^53. */
export const rawAmount = z.string().regex(/^\d+$/, "expected an integer string of raw token units");

/**
 * Query values arrive as strings at the server and as numbers or booleans from the client; one schema
 * serves both so the client and the sandbox apply the same rules.
 */
export const queryInt = z
  .union(
    [
      z.number(),
      z
        .string()
        .regex(/^-?\d+$/, "expected an integer")
        .transform(Number),
    ],
    // Without it a wrong type reads only "Invalid input", which names no rule.
    { error: "expected an integer" },
  )
  .pipe(z.number().int("expected an integer"));
export const queryBool = z.union([z.boolean(), z.enum(["true", "false"]).transform((v) => v === "true")], {
  error: "expected a boolean",
});

export const rangeBound = queryInt.pipe(z.number().min(0, "must be >= 0"));

export const paginationSchema = z.looseObject({
  start: z.number().int(),
  end: z.number().int(),
  total: z.number().int(),
  hasNext: z.boolean(),
});
export type Pagination = z.infer<typeof paginationSchema>;

/** Range parameters shared by every paginated endpoint. */
export const rangeParams = { start: rangeBound.optional(), end: rangeBound.optional() };

/** Solana instruction as the swap build returns it (data base64). */
export const instructionSchema = z.looseObject({
  programId: pubkey,
  accounts: z.array(z.looseObject({ pubkey: pubkey, isWritable: z.boolean(), isSigner: z.boolean() })),
  data: z.string(),
});
export type ApiInstruction = z.infer<typeof instructionSchema>;

/** Error bodies differ by area (api-gaps); the client reads every shape. */
export const errorBodies = {
  prediction: z.looseObject({
    type: z.string(),
    message: z.string(),
    code: z
      .string()
      .optional()
      .describe(
        "What went wrong, e.g. for a claim: market_not_settled (not yet: ask again later), already_claimed, not_claimable (the market resolved against the position), no_claim_required (the market pays its winners without a claim: nothing to do)",
      ),
    param: z.string().optional(),
    request_id: z.string(),
  }),
  trigger: z.looseObject({
    error: z.string(),
    code: z.union([z.number(), z.string()]),
    cause: z.string().optional(),
  }),
  recurring: z.looseObject({
    code: z.union([z.number(), z.string()]),
    error: z.string(),
    status: z.string(),
  }),
  plain: z.looseObject({ error: z.string() }),
} as const;

export type Area = "prediction" | "ultra" | "swap" | "trigger" | "recurring" | "send";
