import type { LeaderboardEntry, LeaderboardResponse } from "../../core/schemas/prediction.js";
import { contractsTimes } from "./contract-units.js";
import { ONE_USD_MICRO } from "./markets.js";
import { derivePubkey, intBetween, streamFor } from "./rng.js";
import type { World } from "./world.js";

export type Period = "all_time" | "weekly" | "monthly";
export type Metric = "pnl" | "volume" | "win_rate";

const DAY = 86_400;
const PERIOD_DAYS: Record<Period, number | null> = { all_time: null, weekly: 7, monthly: 30 };
/** Traders that are not sandbox wallets, so the sandbox wallets rank among others. */
const OTHER_TRADERS = 40;

interface Tally {
  /** Sort key for ties; the public key of a wallet is derived only if it makes the page. */
  tieKey: number;
  ownerPubkey: () => string;
  pnlMicro: number;
  volumeMicro: number;
  predictions: number;
  correct: number;
  wrong: number;
}

const iso = (seconds: number): string => new Date(seconds * 1000).toISOString();

function periodStart(world: World, period: Period): number {
  const days = PERIOD_DAYS[period];
  // All time starts a year before genesis: nothing in the world is older.
  return days === null ? world.genesisSeconds - 365 * DAY : world.now() - days * DAY;
}

function walletTallies(world: World, since: number): Tally[] {
  const byOwner = new Map<number, Tally>();
  for (const p of world.positions) {
    if (p.openedAt < since) continue;
    let tally = byOwner.get(p.ownerIndex);
    if (tally === undefined) {
      const index = p.ownerIndex;
      tally = {
        tieKey: index,
        ownerPubkey: () => world.walletPubkey(index),
        pnlMicro: 0,
        volumeMicro: 0,
        predictions: 0,
        correct: 0,
        wrong: 0,
      };
      byOwner.set(p.ownerIndex, tally);
    }
    const totalCost = contractsTimes(p.contracts, p.avgPriceMicro) + p.feesMicro;
    tally.predictions += 1;
    tally.volumeMicro += totalCost;
    if (p.closedProceedsMicro !== undefined) tally.pnlMicro += p.closedProceedsMicro - totalCost;
    else if (world.marketState(world.marketOf(p)).result !== null) {
      const won = world.isWinning(p);
      if (won) tally.correct += 1;
      else tally.wrong += 1;
      tally.pnlMicro += (won ? contractsTimes(p.contracts, ONE_USD_MICRO) : 0) - totalCost;
    }
  }
  return [...byOwner.values()];
}

function otherTallies(world: World, period: Period): Tally[] {
  const random = streamFor(world.seed, `leaderboard:${period}`);
  const scale = period === "weekly" ? 1 : period === "monthly" ? 4 : 20;
  return Array.from({ length: OTHER_TRADERS }, (_, i) => {
    const predictions = intBetween(random, 1, 12 * scale);
    const correct = intBetween(random, 0, predictions);
    const wrong = intBetween(random, 0, predictions - correct);
    return {
      tieKey: world.walletCount + i,
      ownerPubkey: () => derivePubkey(`trader:${i}`, world.seed).toBase58(),
      pnlMicro: intBetween(random, -300, 600) * scale * 1_000_000,
      volumeMicro: intBetween(random, 10, 3_000) * scale * 1_000_000,
      predictions,
      correct,
      wrong,
    };
  });
}

const winRate = (t: Tally): number =>
  t.correct + t.wrong === 0 ? 0 : (t.correct * 100) / (t.correct + t.wrong);

const COMPARE: Record<Metric, (a: Tally, b: Tally) => number> = {
  pnl: (a, b) => b.pnlMicro - a.pnlMicro,
  volume: (a, b) => b.volumeMicro - a.volumeMicro,
  win_rate: (a, b) => winRate(b) - winRate(a) || b.correct - a.correct,
};

function tallies(world: World, period: Period): Tally[] {
  return [...walletTallies(world, periodStart(world, period)), ...otherTallies(world, period)];
}

export function leaderboard(
  world: World,
  period: Period,
  metric: Metric,
  limit: number,
): LeaderboardResponse {
  const start = periodStart(world, period);
  const end = world.now();
  const ranked = tallies(world, period).sort((a, b) => COMPARE[metric](a, b) || a.tieKey - b.tieKey);
  const data: LeaderboardEntry[] = ranked.slice(0, limit).map((t) => ({
    ownerPubkey: t.ownerPubkey(),
    realizedPnlUsd: String(t.pnlMicro),
    totalVolumeUsd: String(t.volumeMicro),
    predictionsCount: t.predictions,
    correctPredictions: t.correct,
    wrongPredictions: t.wrong,
    winRatePct: winRate(t).toFixed(2),
    period,
    // All time has no bounds: null, as the live service sends it.
    periodStart: period === "all_time" ? null : iso(start),
    periodEnd: period === "all_time" ? null : iso(end),
  }));
  const summaryOf = (p: Period) => {
    const all = tallies(world, p);
    return {
      totalVolumeUsd: String(all.reduce((sum, t) => sum + t.volumeMicro, 0)),
      predictionsCount: all.reduce((sum, t) => sum + t.predictions, 0),
    };
  };
  return {
    data,
    summary: { all_time: summaryOf("all_time"), weekly: summaryOf("weekly"), monthly: summaryOf("monthly") },
  };
}
