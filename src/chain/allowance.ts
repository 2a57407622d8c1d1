import type { Intent, OutflowAllowance } from "../core/intent.js";
import { NATIVE_MINT } from "./programs.js";

export interface AllowanceOptions {
  /**
   * Lamports an order (trigger or recurring) may leave in new accounts that are not the wallet's:
   * the order's own account, the escrow's token account for its input. Default: two token accounts'
   * rent (2 × 2,039,280). Claims, closes, cancels and swaps get none: rent for the wallet's own token
   * accounts is never an outflow (it stays the wallet's), and nothing else may be funded.
   */
  rentLamports?: bigint;
}

export const DEFAULT_RENT_LAMPORTS = 2n * 2_039_280n;

/**
 * What a transaction built for an intent may take out of the wallet, beyond network fees. Claims,
 * closes and cancels only bring money in; an order may spend its input amount of its input mint.
 *
 * Native SOL has one budget, `maxLamports`: SOL and wrapped SOL leaving the wallet and its token
 * accounts together (a SOL input is wrapped and then spent as wrapped SOL, so the same lamports show
 * up twice on the way). Its wrapped SOL entry in `tokens` only bounds the single instructions that
 * wrap and spend it.
 */
export function allowanceFor(intent: Intent, options: AllowanceOptions = {}): OutflowAllowance {
  const orderRent = options.rentLamports ?? DEFAULT_RENT_LAMPORTS;
  const spend = (mint: string, amount: string, rent: bigint): OutflowAllowance => ({
    maxLamports: mint === NATIVE_MINT ? rent + BigInt(amount) : rent,
    tokens: new Map([[mint, BigInt(amount)]]),
  });
  switch (intent.kind) {
    case "claim":
    case "close":
    case "closeAll":
    case "cancelTrigger":
    case "cancelRecurring":
      return { maxLamports: 0n, tokens: new Map() };
    case "createTrigger":
      return spend(intent.inputMint, intent.makingAmount, orderRent);
    case "createRecurring":
      return spend(intent.inputMint, intent.inAmount, orderRent);
    case "swap":
      return spend(intent.inputMint, intent.amount, 0n);
  }
}
