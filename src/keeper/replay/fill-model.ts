import { contractsMicroOf, contractsValueMicroUsd } from "../../core/contracts.js";
import type { Position } from "../../core/schemas/prediction.js";

/**
 * How a replay fills what a strategy asks for, from recorded figures only:
 * - a sell fills at the recorded bid (`sellPriceUsd`: what buyers pay, not the mark), the exact
 *   contracts x the bid floored to the micro-dollar, less the service's sell fees: 0.5 % protocol and
 *   1 % venue, each floored, as the sandbox charges them (the 150 bps exit-rules estimates with
 *   `estimatedSellFeeBps`);
 * - no bid, or gross proceeds under the service's $5 smallest order: no fill, the position is kept;
 * - a claim pays $1 a winning contract (no fee: the claim transaction's network fee is left out).
 */
export const SELL_FEE_BPS = { protocol: 50n, venue: 100n } as const;
export const MIN_ORDER_MICRO_USD = 5_000_000n;

export type SellFill =
  | {
      readonly filled: true;
      readonly bid: bigint;
      readonly gross: bigint;
      readonly fees: bigint;
      readonly net: bigint;
    }
  | { readonly filled: false; readonly why: string };

export function sellFill(position: Position): SellFill {
  if (position.sellPriceUsd === null) return { filled: false, why: "no bid" };
  const bid = BigInt(position.sellPriceUsd);
  const gross = contractsValueMicroUsd(contractsMicroOf(position), bid);
  if (gross < MIN_ORDER_MICRO_USD) return { filled: false, why: "under the $5 smallest order" };
  const fees = sellFees(gross);
  return { filled: true, bid, gross, fees, net: gross - fees };
}

/** The service's two sell fees on gross proceeds, each floored as the sandbox floors them. */
export function sellFees(gross: bigint): bigint {
  return (gross * SELL_FEE_BPS.protocol) / 10_000n + (gross * SELL_FEE_BPS.venue) / 10_000n;
}

/** Which side won, once the recording shows it: the market's result, or undefined while unknown. */
export function resultOf(position: Position): "won" | "lost" | "cancelled" | undefined {
  const market = position.marketMetadata;
  if (market.status === "cancelled") return "cancelled";
  if (market.result === "yes" || market.result === "no")
    return (market.result === "yes") === position.isYes ? "won" : "lost";
  return undefined;
}

/** A claim's payout: $1 a contract of a winning position, nothing otherwise. */
export function claimPayout(position: Position): bigint {
  return resultOf(position) === "won" ? contractsMicroOf(position) : 0n;
}

export interface HeldValue {
  readonly value: bigint;
  /** How it was valued: "resolved won", "resolved lost", "cancelled (refund at cost)", "last bid, unresolved". */
  readonly basis: string;
}

/**
 * What a position held to the end of the recording is worth: $1 a contract if it won, nothing if it
 * lost, its cost if its market was cancelled (refunded), else what selling it at its last recorded
 * bid would bring (the same fill as a sell, without the minimum: an estimate, marked unresolved).
 */
export function heldValue(last: Position): HeldValue {
  const result = resultOf(last);
  if (result === "won") return { value: contractsMicroOf(last), basis: "resolved won" };
  if (result === "lost") return { value: 0n, basis: "resolved lost" };
  if (result === "cancelled")
    return { value: BigInt(last.totalCostUsd), basis: "cancelled (refund at cost)" };
  if (last.sellPriceUsd === null) return { value: 0n, basis: "unresolved, no bid at the end" };
  const gross = contractsValueMicroUsd(contractsMicroOf(last), BigInt(last.sellPriceUsd));
  return { value: gross - sellFees(gross), basis: "unresolved, last bid" };
}
