import { z } from "zod";

const pubkey = z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/, "expected a base58 public key");
const rawAmount = z.string().regex(/^\d+$/, "expected an integer string of raw token units");

/**
 * A swap build's quote as the builder records it on the ledger row, for the signer's own floor. The
 * signer reads it from Redis, so it trusts none of it: it must match the intent, and its figures can
 * only raise the floor (see src/signer/swap-floor.ts).
 */
export const swapQuoteSchema = z.strictObject({
  inputMint: pubkey,
  inAmount: rawAmount,
  outputMint: pubkey,
  outAmount: rawAmount,
  otherAmountThreshold: rawAmount,
});

export type SwapQuote = z.infer<typeof swapQuoteSchema>;
