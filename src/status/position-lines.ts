import { contractsMicroOf, contractsText, contractsValueMicroUsd } from "../core/contracts.js";
import { heldValueMicroUsd, type PositionState, positionState } from "../core/position-value.js";
import type { Position } from "../core/schemas/prediction.js";
import type { PositionOutlook } from "../core/strategy-hooks.js";

/**
 * One position as the page shows it: the service's figures, and what it is worth now. Amounts are
 * micro-USD; null where nothing can be said (no bid on an open market, a closed market not resolved).
 */
export interface PositionLine {
  pubkey: string;
  marketId: string;
  title: string;
  side: "YES" | "NO";
  /** Exact contracts, e.g. "171.5". */
  contracts: string;
  state: PositionState;
  entryMicroUsd: bigint;
  markMicroUsd: bigint | null;
  bidMicroUsd: bigint | null;
  /** At the mark while open; the payout of a winner; 0 once lost. */
  valueMicroUsd: bigint | null;
  /** What selling (or claiming) would bring in now. */
  realizableMicroUsd: bigint | null;
  /** The realizable figure is a strategy's, the sell fee taken out; otherwise the bid before fees. */
  isNetOfFees: boolean;
  costMicroUsd: bigint;
  realizablePnlMicroUsd: bigint | null;
  realizablePnlPct: number | null;
  feesPaidMicroUsd: bigint;
  /** The rule nearest to firing, in one unit, and its figures in full. */
  nearestRule?: string;
  nearestDetail?: string;
  isAlert: boolean;
}

const micro = (value: string | null | undefined): bigint | null =>
  value !== null && value !== undefined && /^-?\d+$/.test(value) ? BigInt(value) : null;

/** `part` over `whole` in percent, 2 decimals; null over nothing. */
export function pctOf(part: bigint, whole: bigint): number | null {
  return whole > 0n ? Number((part * 10_000n) / whole) / 100 : null;
}

/**
 * A position's line. `outlooks` are what the wallet's strategies said of it (their `statusView`
 * `positions`), first one first: the first realizable figure is used (it has the sell fee out); a
 * position no strategy values is valued at the bid before fees.
 */
export function positionLine(p: Position, outlooks: readonly PositionOutlook[]): PositionLine {
  const state = positionState(p);
  const bid = micro(p.sellPriceUsd);
  const payout = micro(p.payoutUsd) ?? 0n;
  const fromStrategy = outlooks.find((o) => o.realizableMicroUsd !== undefined)?.realizableMicroUsd;
  const grossAtBid = bid === null ? null : contractsValueMicroUsd(contractsMicroOf(p), bid);
  let realizable: bigint | null;
  if (state === "claimable" || state === "won, settling") realizable = payout;
  else if (state === "lost") realizable = 0n;
  else if (state === "open") realizable = fromStrategy === undefined ? grossAtBid : BigInt(fromStrategy);
  else realizable = null;
  const value = heldValueMicroUsd(p);
  const cost = micro(p.totalCostUsd) ?? 0n;
  const pnl = realizable === null ? null : realizable - cost;
  const nearest = outlooks.find((o) => o.nearestRule !== undefined || o.nearestDetail !== undefined);
  return {
    pubkey: p.pubkey,
    marketId: p.marketId,
    title: p.marketMetadata.title ?? p.marketId,
    side: p.isYes ? "YES" : "NO",
    contracts: contractsText(p),
    state,
    entryMicroUsd: micro(p.avgPriceUsd) ?? 0n,
    markMicroUsd: micro(p.markPriceUsd),
    bidMicroUsd: bid,
    valueMicroUsd: value,
    realizableMicroUsd: realizable,
    isNetOfFees: state !== "open" || fromStrategy !== undefined,
    costMicroUsd: cost,
    realizablePnlMicroUsd: pnl,
    realizablePnlPct: pnl === null ? null : pctOf(pnl, cost),
    feesPaidMicroUsd: micro(p.feesPaidUsd) ?? 0n,
    ...(nearest?.nearestRule === undefined ? {} : { nearestRule: nearest.nearestRule }),
    ...(nearest?.nearestDetail === undefined ? {} : { nearestDetail: nearest.nearestDetail }),
    isAlert: outlooks.some((o) => o.isAlert === true),
  };
}
