import { PublicKey } from "@solana/web3.js";
import { z } from "zod";

/**
 * The rules of the sandbox's drive routes (`/__sandbox/markets/...`, `/__sandbox/clock/advance`,
 * `/__sandbox/fund`), shared by the routes and by `keeper sandbox resolve|price|advance|fund`, so a bad
 * argument is refused before anything is sent, with the same words the sandbox would use.
 */

/** The longest jump `advance` takes: a year, far beyond any market's life in the sandbox. */
export const MAX_ADVANCE_SECONDS = 31_536_000;
/** The most `fund` gives at once, in whole tokens (or SOL). */
export const MAX_FUND_WHOLE = 1_000_000_000;

export const MARKET_RESULTS = ["yes", "no", "cancelled"] as const;
export type DriveResult = (typeof MARKET_RESULTS)[number];

export const marketIdRule = z
  .string()
  .min(1, "must not be empty")
  .max(128, "must be at most 128 characters")
  .regex(/^[\w.:-]+$/, "must be a market id (letters, digits, - _ . :)");

export const resultRule = z.enum(MARKET_RESULTS, { error: "must be one of yes, no, cancelled" });

/** A yes price in dollars: strictly between 0 and 1, at most 6 decimals ("0.72"). */
export const yesPriceRule = z
  .string()
  .regex(/^0?\.\d{1,6}$/, "must be a price strictly between 0 and 1 with at most 6 decimals (e.g. 0.72)")
  .refine(
    (v) => Number(v) > 0,
    "must be a price strictly between 0 and 1 with at most 6 decimals (e.g. 0.72)",
  );

/**
 * Half the gap between a market's buy and sell prices, in dollars ("0.2": the bid $0.20 below the
 * mid, the mark). From 0 to below 0.5, at most 6 decimals; the sandbox refuses one that would put a
 * side's bid at or below nothing at the price set.
 */
export const halfSpreadRule = z
  .string()
  .regex(/^0?\.\d{1,6}$|^0$/, "must be dollars from 0 to below 0.5 with at most 6 decimals (e.g. 0.2)")
  .refine((v) => Number(v) < 0.5, "must be dollars from 0 to below 0.5 with at most 6 decimals (e.g. 0.2)");

export const secondsRule = z
  .number({ error: "must be a whole number of seconds" })
  .int("must be a whole number of seconds")
  .min(1, `must be from 1 to ${MAX_ADVANCE_SECONDS} seconds`)
  .max(MAX_ADVANCE_SECONDS, `must be from 1 to ${MAX_ADVANCE_SECONDS} seconds`);

export const walletRule = z.string().refine((value) => {
  try {
    return new PublicKey(value).toBase58() === value;
  } catch {
    return false;
  }
}, "must be a base58 public key");

/** Whole tokens as a decimal string ("250", "0.5"); the token's own decimals are checked by the sandbox. */
export const amountRule = z
  .string()
  .regex(/^\d+(\.\d+)?$/, "must be a positive decimal number of whole tokens (e.g. 250 or 0.5)")
  .refine((v) => Number(v) > 0, "must be a positive decimal number of whole tokens (e.g. 250 or 0.5)")
  .refine((v) => Number(v) <= MAX_FUND_WHOLE, `must be at most ${MAX_FUND_WHOLE} whole tokens`);

/** A mint address, a symbol of the sandbox's catalogue (USDC, USDT, KEEP, ...) or SOL (native SOL). */
export const mintRule = z
  .string()
  .min(1, "must not be empty")
  .max(64, "must be a mint address or a token symbol");

export const resolveBody = z.strictObject({
  result: resultRule,
  /** false: the market pays its winners without a claim (the service's automatic claim pays them). */
  needsClaim: z.boolean().optional(),
});
export const priceBody = z.strictObject({ yesPrice: yesPriceRule, halfSpread: halfSpreadRule.optional() });
export const advanceBody = z.strictObject({ seconds: secondsRule });
export const fundBody = z.strictObject({ wallet: walletRule, amount: amountRule, mint: mintRule.optional() });

/** The first rule a value breaks, in words, or undefined when it passes. */
export function ruleBroken(schema: z.ZodType, value: unknown): string | undefined {
  const result = schema.safeParse(value);
  return result.success ? undefined : (result.error.issues[0]?.message ?? "is invalid");
}
