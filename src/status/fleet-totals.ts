import type { LedgerRow } from "../keeper/state/ledger.js";
import type { PositionLine } from "./position-lines.js";

/**
 * The totals the page shows first, per wallet and for the fleet: what the money is worth now, what
 * came in, what it cost. Micro-USD as bigint; pure, from the poll records and the ledger.
 */
export interface Totals {
  /** Positions held: open, or waiting for their result or a claim. */
  positions: number;
  /** At the mark (winners at their payout, losers at 0). */
  valueMicroUsd: bigint;
  /** What selling every open position and claiming every winner would bring in now. */
  realizableMicroUsd: bigint;
  /** Open positions no one bids on: in neither figure above but the mark. */
  noBid: number;
  claimedTodayMicroUsd: bigint;
  claimed7dMicroUsd: bigint;
  /** Exits (closes) confirmed in the last 7 days, and their realized pnl (proceeds less cost). */
  exits7d: number;
  exitsPnl7dMicroUsd: bigint;
  /** The fees the service says the positions held have paid (buys and sells). */
  feesPaidMicroUsd: bigint;
  /** The sell fees of the exits of the last 7 days (the service's estimate at their build). */
  exitFees7dMicroUsd: bigint;
  /** Winners not claimed yet: claimable now, or won and settling. */
  awaitingClaim: number;
  awaitingClaimMicroUsd: bigint;
}

export const DAY_SECONDS = 86_400;

/** Unix seconds of the UTC midnight that starts the day of `seconds`. */
export const dayStart = (seconds: number) =>
  seconds - (((seconds % DAY_SECONDS) + DAY_SECONDS) % DAY_SECONDS);

/** When a confirmed row's effect landed (older records have no confirmedAt: their last update). */
const landedAt = (row: LedgerRow) => row.confirmedAt ?? row.updatedAt;

/** A ledger amount (micro-USD string), 0 where there is none. */
const micro = (value: string | undefined) =>
  value !== undefined && /^\d+$/.test(value) ? BigInt(value) : 0n;
const amountOf = (row: LedgerRow) => micro(row.amountMicroUsd);

/** A confirmed close's realized pnl: proceeds less what the position cost; 0 when either is unknown. */
export function exitPnlMicroUsd(row: LedgerRow): bigint {
  const cost = row.intent.kind === "close" ? row.intent.costBasisMicroUsd : undefined;
  if (cost === undefined || row.amountMicroUsd === undefined) return 0n;
  return amountOf(row) - BigInt(cost);
}

export function emptyTotals(): Totals {
  return {
    positions: 0,
    valueMicroUsd: 0n,
    realizableMicroUsd: 0n,
    noBid: 0,
    claimedTodayMicroUsd: 0n,
    claimed7dMicroUsd: 0n,
    exits7d: 0,
    exitsPnl7dMicroUsd: 0n,
    feesPaidMicroUsd: 0n,
    exitFees7dMicroUsd: 0n,
    awaitingClaim: 0,
    awaitingClaimMicroUsd: 0n,
  };
}

/** One wallet's totals: its position lines, and its ledger rows (newest first, any wallet's are skipped). */
export function walletTotals(
  wallet: string,
  lines: readonly PositionLine[],
  rows: readonly LedgerRow[],
  nowSeconds: number,
): Totals {
  const totals = emptyTotals();
  for (const line of lines) {
    totals.positions += 1;
    totals.valueMicroUsd += line.valueMicroUsd ?? 0n;
    totals.realizableMicroUsd += line.realizableMicroUsd ?? 0n;
    totals.feesPaidMicroUsd += line.feesPaidMicroUsd;
    if (line.state === "open" && line.realizableMicroUsd === null) totals.noBid += 1;
    if (line.state === "claimable" || line.state === "won, settling") {
      totals.awaitingClaim += 1;
      totals.awaitingClaimMicroUsd += line.realizableMicroUsd ?? 0n;
    }
  }
  const today = dayStart(nowSeconds);
  const weekAgo = nowSeconds - 7 * DAY_SECONDS;
  for (const row of rows) {
    if (row.wallet !== wallet || row.status !== "confirmed" || landedAt(row) < weekAgo) continue;
    if (row.kind === "claim") {
      totals.claimed7dMicroUsd += amountOf(row);
      if (landedAt(row) >= today) totals.claimedTodayMicroUsd += amountOf(row);
    } else if (row.kind === "close") {
      totals.exits7d += 1;
      totals.exitsPnl7dMicroUsd += exitPnlMicroUsd(row);
      totals.exitFees7dMicroUsd += micro(row.feeMicroUsd);
    }
  }
  return totals;
}

/** The fleet's totals: every wallet's, added. */
export function sumTotals(all: readonly Totals[]): Totals {
  return all.reduce<Totals>(
    (a, t) => ({
      positions: a.positions + t.positions,
      valueMicroUsd: a.valueMicroUsd + t.valueMicroUsd,
      realizableMicroUsd: a.realizableMicroUsd + t.realizableMicroUsd,
      noBid: a.noBid + t.noBid,
      claimedTodayMicroUsd: a.claimedTodayMicroUsd + t.claimedTodayMicroUsd,
      claimed7dMicroUsd: a.claimed7dMicroUsd + t.claimed7dMicroUsd,
      exits7d: a.exits7d + t.exits7d,
      exitsPnl7dMicroUsd: a.exitsPnl7dMicroUsd + t.exitsPnl7dMicroUsd,
      feesPaidMicroUsd: a.feesPaidMicroUsd + t.feesPaidMicroUsd,
      exitFees7dMicroUsd: a.exitFees7dMicroUsd + t.exitFees7dMicroUsd,
      awaitingClaim: a.awaitingClaim + t.awaitingClaim,
      awaitingClaimMicroUsd: a.awaitingClaimMicroUsd + t.awaitingClaimMicroUsd,
    }),
    emptyTotals(),
  );
}

/** One UTC day of claims and exits that landed. */
export interface DayActivity {
  /** Unix seconds of the day's UTC midnight. */
  day: number;
  claims: number;
  claimedMicroUsd: bigint;
  exits: number;
  /** What the exits brought in (proceeds). */
  exitedMicroUsd: bigint;
}

/** Claims and exits confirmed each UTC day, the last `days` days up to today, oldest first (empty days too). */
export function dailyActivity(rows: readonly LedgerRow[], nowSeconds: number, days = 14): DayActivity[] {
  const today = dayStart(nowSeconds);
  const first = today - (days - 1) * DAY_SECONDS;
  const out: DayActivity[] = Array.from({ length: days }, (_, i) => ({
    day: first + i * DAY_SECONDS,
    claims: 0,
    claimedMicroUsd: 0n,
    exits: 0,
    exitedMicroUsd: 0n,
  }));
  for (const row of rows) {
    if (row.status !== "confirmed" || (row.kind !== "claim" && row.kind !== "close")) continue;
    const at = landedAt(row);
    if (at < first || at >= today + DAY_SECONDS) continue;
    const bucket = out[Math.floor((at - first) / DAY_SECONDS)];
    if (bucket === undefined) continue;
    if (row.kind === "claim") {
      bucket.claims += 1;
      bucket.claimedMicroUsd += amountOf(row);
    } else {
      bucket.exits += 1;
      bucket.exitedMicroUsd += amountOf(row);
    }
  }
  return out;
}
