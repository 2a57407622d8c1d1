import { z } from "zod";

const MINT_RULE = "expected a base58 mint address of 32 to 44 characters";
/** A mint address: base58, 32 to 44 characters. Shared by strategies' configs and token resolution. */
export const mintAddress = z
  .string({ error: MINT_RULE })
  .min(32, MINT_RULE)
  .max(44, MINT_RULE)
  .regex(/^[1-9A-HJ-NP-Za-km-z]+$/, MINT_RULE);

export function isMintAddress(value: string): boolean {
  return mintAddress.safeParse(value).success;
}
