import type { Position } from "./schemas/prediction.js";

/**
 * What a position is worth as the last poll saw it, in one place: the status page's "value now" and
 * the fleet value series the poll worker keeps read the same figure, so the chart's last point and
 * the totals agree.
 */

/** Where a position stands, in the words the status page shows. */
export type PositionState = "open" | "claimable" | "won, settling" | "lost" | "closed, awaiting result";

const micro = (value: string | null | undefined): bigint | null =>
  value !== null && value !== undefined && /^-?\d+$/.test(value) ? BigInt(value) : null;

export function positionState(p: Position): PositionState {
  if (p.claimable) return "claimable";
  if (p.marketMetadata.status === "open") return "open";
  // A winner has a claim time once its market resolved; a resolved market without one was lost.
  if (p.claimableAt !== null && p.claimableAt > 0) return "won, settling";
  const result = p.marketMetadata.result;
  return result !== null && result !== undefined && result !== "" ? "lost" : "closed, awaiting result";
}

/**
 * Micro-USD: at the mark while the market is open (null when the service gives no valuation), the
 * payout of a winner, 0 once lost; null for a closed market not yet resolved.
 */
export function heldValueMicroUsd(p: Position): bigint | null {
  switch (positionState(p)) {
    case "open":
      return micro(p.valueUsd);
    case "claimable":
    case "won, settling":
      return micro(p.payoutUsd) ?? 0n;
    case "lost":
      return 0n;
    default:
      return null;
  }
}

/** A wallet's value now: the sum of what its positions not yet claimed are worth (unknown ones as 0). */
export function walletValueMicroUsd(positions: readonly Position[]): bigint {
  return positions.reduce((sum, p) => sum + (p.claimed ? 0n : (heldValueMicroUsd(p) ?? 0n)), 0n);
}
