import { PolicyRefusal } from "../core/errors.js";
import type { Intent } from "../core/intent.js";
import { swapQuoteSchema } from "../core/swap-quote.js";
import type { SignerLimits } from "./limits.js";
import { checkQuoteMatches, type SwapFloor, type SwapFloorSettings, swapFloor } from "./swap-floor.js";
import type { TokenPrices } from "./token-prices.js";

/**
 * The signer's own checks of an intent, before the policy: its limits, and a swap's floor. Everything
 * it trusts comes from the signer's config file and its own reads of the service; the intent and the
 * swap's quote come from Redis and can only be refused or held to more.
 */
export interface IntentGuard {
  /** Refuses (PolicyRefusal) an intent beyond the limits; answers a swap's floor. */
  check(intent: Intent, swapQuote: unknown): Promise<{ swapFloor?: SwapFloor }>;
  /** Counts an intent that passed the policy against the day's caps, just before it is signed. */
  count(intent: Intent): Promise<void>;
}

export class SignerGuard implements IntentGuard {
  constructor(
    private readonly limits: SignerLimits,
    private readonly prices: TokenPrices,
    private readonly floorSettings: SwapFloorSettings,
  ) {}

  async check(intent: Intent, swapQuote: unknown): Promise<{ swapFloor?: SwapFloor }> {
    await this.limits.check(intent);
    if (intent.kind !== "swap") return {};
    const quote = swapQuoteSchema.safeParse(swapQuote);
    if (!quote.success)
      throw new PolicyRefusal(
        "swap_quote_missing",
        "the swap's ledger row carries no readable quote of its build (inputMint, inAmount, outputMint, outAmount, otherAmountThreshold): its floor cannot be set",
      );
    // A quote of another swap is refused before anything is read.
    checkQuoteMatches(intent, quote.data);
    const [input, output] = await this.prices.priced([intent.inputMint, intent.outputMint]);
    if (!input || !output) throw new Error("token prices answered fewer mints than asked");
    return { swapFloor: swapFloor(intent, quote.data, { input, output }, this.floorSettings) };
  }

  async count(intent: Intent): Promise<void> {
    await this.limits.count(intent);
  }
}
