import type { Intent, OutflowAllowance } from "../core/intent.js";
import { NATIVE_MINT } from "./programs.js";

export interface AllowanceOptions {
  /**
   * Lamports any transaction may spend beyond fees: rent for the token accounts it creates for the
   * wallet (an associated token account holds 2,039,280 lamports). Default: room for two.
   */
  rentLamports?: bigint;
}

export const DEFAULT_RENT_LAMPORTS = 2n * 2_039_280n;

/**
 * What a transaction built for an intent may take out of the wallet, beyond network fees. Claims,
 * closes and cancels only bring money in; an order may spend its input amount of its input mint.
 * Spending native SOL through wrapped SOL moves lamports too, so a native input also allows them.
 */
export function allowanceFor(intent: Intent, options: AllowanceOptions = {}): OutflowAllowance {
  const rent = options.rentLamports ?? DEFAULT_RENT_LAMPORTS;
  const spend = (mint: string, amount: string): OutflowAllowance => ({
    maxLamports: mint === NATIVE_MINT ? rent + BigInt(amount) : rent,
    tokens: new Map([[mint, BigInt(amount)]]),
  });
  switch (intent.kind) {
    case "claim":
    case "close":
    case "closeAll":
    case "cancelTrigger":
      return { maxLamports: rent, tokens: new Map() };
    case "createTrigger":
      return spend(intent.inputMint, intent.makingAmount);
    case "createRecurring":
      return spend(intent.inputMint, intent.inAmount);
    case "swap":
      return spend(intent.inputMint, intent.amount);
  }
}
