import type { Intent } from "./intent.js";
import { formatUsd } from "./money.js";

/**
 * What an intent moves, in one short phrase for a person reading the ledger: a claim's payout, a
 * close's proceeds (both micro-USD, from the build when there was one), an order's or a swap's input.
 * Token amounts are raw units; the few mints everyone knows are shown in whole tokens, any other as
 * raw units of its mint, since the ledger does not keep a token's decimals.
 */
export function intentAmountText(intent: Intent, amountMicroUsd?: string): string {
  const usd = (micro: string | undefined) =>
    micro !== undefined && /^\d+$/.test(micro) ? `$${formatUsd(BigInt(micro))}` : "";
  switch (intent.kind) {
    case "claim": {
      const payout = usd(amountMicroUsd ?? intent.expectedPayoutMicroUsd);
      return payout === "" ? "" : `payout ${payout}`;
    }
    case "close": {
      const proceeds = usd(amountMicroUsd);
      return proceeds === "" ? "" : `proceeds ${proceeds}`;
    }
    case "createTrigger":
      return `sell ${tokenAmount(intent.makingAmount, intent.inputMint)} for ${tokenAmount(intent.takingAmount, intent.outputMint)}`;
    case "createRecurring":
      return `${tokenAmount(intent.inAmount, intent.inputMint)} in ${intent.numberOfOrders} orders`;
    case "swap":
      return tokenAmount(intent.amount, intent.inputMint);
    default:
      return "";
  }
}

/** Mints whose decimals never change, by symbol: enough to read the usual orders without a lookup. */
const WELL_KNOWN_MINTS: Readonly<Record<string, { symbol: string; decimals: number }>> = {
  EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v: { symbol: "USDC", decimals: 6 },
  Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB: { symbol: "USDT", decimals: 6 },
  So11111111111111111111111111111111111111112: { symbol: "SOL", decimals: 9 },
};

/** "1.5 SOL" for a well-known mint; "1500 raw of Abcd…wxyz" for any other. */
export function tokenAmount(raw: string, mint: string): string {
  // A config as written may name the token by its symbol instead of its mint.
  const known =
    WELL_KNOWN_MINTS[mint] ?? Object.values(WELL_KNOWN_MINTS).find((k) => k.symbol === mint.toUpperCase());
  if (known === undefined || !/^\d+$/.test(raw))
    // Another name is shown whole; a mint is shortened.
    return mint.length < 32 ? `${raw} raw ${mint}` : `${raw} raw of ${mint.slice(0, 4)}…${mint.slice(-4)}`;
  const scale = 10n ** BigInt(known.decimals);
  const amount = BigInt(raw);
  const fraction = (amount % scale).toString().padStart(known.decimals, "0").replace(/0+$/, "");
  return `${amount / scale}${fraction === "" ? "" : `.${fraction}`} ${known.symbol}`;
}
