import { PolicyRefusal } from "../core/errors.js";
import type { Intent } from "../core/intent.js";
import type { SwapQuote } from "../core/swap-quote.js";

export type SwapIntent = Extract<Intent, { kind: "swap" }>;

/** A token as the service's token search gives it: its USD price and decimals. */
export interface PricedToken {
  mint: string;
  usdPrice: number;
  decimals: number;
}

export interface SwapFloorSettings {
  /** How far (basis points) a quote's implied price may stray from the service's token prices. */
  maxPriceDeviationBps: number;
  /** The slippage a swap intent without its own is held to (the swap build's default). */
  defaultSlippageBps: number;
}

/** The swap build's default slippage (it applies when the intent names none). */
export const DEFAULT_SWAP_SLIPPAGE_BPS = 50;

/** Keeper's floor of one swap, raw units of the output mint, and the figures it was taken from. */
export interface SwapFloor {
  minRaw: bigint;
  thresholdRaw: bigint;
  /** The quote's outAmount less the intent's slippage. */
  quoteLessSlippageRaw: bigint;
  /** inAmount at the service's prices, rounded down. */
  fairRaw: bigint;
  /** fairRaw less the allowed deviation. */
  fairLessDeviationRaw: bigint;
}

/** A ratio of two bigints: a price, or an amount before rounding. */
interface Ratio {
  num: bigint;
  den: bigint;
}

/**
 * A JavaScript number as an exact ratio of its shortest decimal form ("0.42" is 42/100, "1.5e-7" is
 * 15/10^8): the price the service sent, with no float arithmetic after it.
 */
export function decimalRatio(value: number): Ratio {
  const match = /^(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(value));
  if (!match || !Number.isFinite(value)) throw new RangeError(`not a non-negative decimal: ${value}`);
  const [, whole = "", fraction = "", exponent = "0"] = match;
  const shift = Number(exponent) - fraction.length;
  const digits = BigInt(whole + fraction);
  return shift >= 0
    ? { num: digits * 10n ** BigInt(shift), den: 1n }
    : { num: digits, den: 10n ** BigInt(-shift) };
}

/** What `inAmountRaw` of the input token is worth in raw units of the output token, at the given prices. */
export function fairOutput(inAmountRaw: bigint, input: PricedToken, output: PricedToken): Ratio {
  const priceIn = decimalRatio(input.usdPrice);
  const priceOut = decimalRatio(output.usdPrice);
  return {
    num: inAmountRaw * priceIn.num * priceOut.den * 10n ** BigInt(output.decimals),
    den: priceIn.den * priceOut.num * 10n ** BigInt(input.decimals),
  };
}

/** `amount` less `bps` basis points, rounded down. */
function lessBps(amount: Ratio, bps: number): bigint {
  return (amount.num * BigInt(10_000 - bps)) / (amount.den * 10_000n);
}

/** Refuses a quote that is not for the intent's input mint, amount and output mint. */
export function checkQuoteMatches(intent: SwapIntent, quote: SwapQuote): void {
  const mismatched = (
    [
      ["inputMint", quote.inputMint, intent.inputMint],
      ["inAmount", quote.inAmount, intent.amount],
      ["outputMint", quote.outputMint, intent.outputMint],
    ] as const
  ).filter(([, quoted, asked]) => quoted !== asked);
  if (mismatched.length > 0)
    throw new PolicyRefusal(
      "swap_quote_mismatch",
      `the swap build's quote is not the intent's: ${mismatched
        .map(([field, quoted, asked]) => `${field} ${quoted}, the intent's ${asked}`)
        .join("; ")}`,
    );
}

/**
 * Keeper's floor of a swap: the largest of the build's threshold, the quote's outAmount less the
 * intent's slippage, and the fair output (inAmount at the service's token prices) less the allowed
 * deviation; never below 1. The quote and threshold come from Redis and can only raise it; the fair
 * bound comes from the signer's own price reads and config. A quote whose implied price strays more
 * than the allowed deviation from the fair one, either way, is refused.
 */
export function swapFloor(
  intent: SwapIntent,
  quote: SwapQuote,
  prices: { input: PricedToken; output: PricedToken },
  settings: SwapFloorSettings,
): SwapFloor {
  checkQuoteMatches(intent, quote);
  const fair = fairOutput(BigInt(quote.inAmount), prices.input, prices.output);
  const outAmount = BigInt(quote.outAmount);
  const bps = BigInt(settings.maxPriceDeviationBps);
  // out/fair within [1 - d, 1 + d], cross-multiplied: exact, whatever the decimals.
  const low = outAmount * fair.den * 10_000n < fair.num * (10_000n - bps);
  const high = outAmount * fair.den * 10_000n > fair.num * (10_000n + bps);
  const fairRaw = fair.num / fair.den;
  if (low || high)
    throw new PolicyRefusal(
      "price_deviation",
      `the swap's quote gives ${outAmount} of ${quote.outputMint} for ${quote.inAmount} of ${quote.inputMint}; at the service's prices ($${prices.input.usdPrice} and $${prices.output.usdPrice}) that is ${fairRaw}, and the quote may differ by at most ${settings.maxPriceDeviationBps / 100}% (signer.maxPriceDeviationPct)`,
    );
  const slippageBps = intent.slippageBps ?? settings.defaultSlippageBps;
  const thresholdRaw = BigInt(quote.otherAmountThreshold);
  const quoteLessSlippageRaw = lessBps({ num: outAmount, den: 1n }, slippageBps);
  const fairLessDeviationRaw = lessBps(fair, settings.maxPriceDeviationBps);
  let minRaw = 1n;
  for (const bound of [thresholdRaw, quoteLessSlippageRaw, fairLessDeviationRaw])
    if (bound > minRaw) minRaw = bound;
  return { minRaw, thresholdRaw, quoteLessSlippageRaw, fairRaw, fairLessDeviationRaw };
}

/** The floor's figures, for a refusal's detail. */
export function describeFloor(floor: SwapFloor): string {
  return `Keeper's floor ${floor.minRaw}: the largest of the build's threshold ${floor.thresholdRaw}, the quote less slippage ${floor.quoteLessSlippageRaw}, the fair output ${floor.fairRaw} less signer.maxPriceDeviationPct ${floor.fairLessDeviationRaw}`;
}
