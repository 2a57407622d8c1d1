import { WINDOW_SHARE } from "../src/api/sliding-window.js";
import { DEFAULT_SWEEP_SHARE_PCT } from "../src/config/schema.js";
import { REQUEST_KIND, type RequestEvent } from "./protocol.js";

/** Nearest-rank percentile of `values` (p in 0..100); NaN when there are none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] ?? Number.NaN;
}

export interface Sweep {
  /** 1-based. */
  readonly index: number;
  /** First and last positions request of the sweep (epoch ms, when sent). */
  readonly startMs: number;
  readonly endMs: number;
  /** Every request sent from the sweep's first to its last positions request, 429s included. */
  readonly requests: number;
  readonly positionPages: number;
  readonly claims: number;
  readonly other: number;
  readonly rateLimited: number;
}

/**
 * Sweeps as the service saw them: sweep k spans every wallet's k-th answered positions request, from
 * the earliest to the latest. Only complete sweeps (every wallet polled k times) are returned.
 */
export function sweepsOf(events: readonly RequestEvent[], walletCount: number): Sweep[] {
  const sorted = [...events].sort((a, b) => a[0] - b[0]);
  const polls = new Uint32Array(walletCount);
  const bounds: Array<{ start: number; end: number; wallets: number }> = [];
  for (const [t, kind, wallet, status] of sorted) {
    if (kind !== REQUEST_KIND.positions || status !== 200 || wallet < 0 || wallet >= walletCount) continue;
    const k = polls[wallet] ?? 0;
    polls[wallet] = k + 1;
    const bound = bounds[k] ?? { start: t, end: t, wallets: 0 };
    bound.start = Math.min(bound.start, t);
    bound.end = Math.max(bound.end, t);
    bound.wallets += 1;
    bounds[k] = bound;
  }
  const sweeps: Sweep[] = [];
  bounds.forEach((bound, k) => {
    if (bound.wallets < walletCount) return;
    let positionPages = 0;
    let claims = 0;
    let other = 0;
    let rateLimited = 0;
    for (const [t, kind, , status] of sorted) {
      if (t < bound.start || t > bound.end) continue;
      if (status === 429) rateLimited += 1;
      if (kind === REQUEST_KIND.positions) positionPages += 1;
      else if (kind === REQUEST_KIND.claim) claims += 1;
      else other += 1;
    }
    sweeps.push({
      index: k + 1,
      startMs: bound.start,
      endMs: bound.end,
      requests: positionPages + claims + other,
      positionPages,
      claims,
      other,
      rateLimited,
    });
  });
  return sweeps;
}

/** Live progress of sweeps, fed with request events as they arrive. */
export class SweepProgress {
  readonly #polls: Uint32Array;
  /** complete[k - 1]: wallets polled at least k times. */
  readonly #complete: number[] = [];
  requests = 0;
  rateLimited = 0;
  /** When the first and the last positions read of a sweep were answered (epoch ms). */
  readonly #firstAtMs: number[] = [];
  readonly #lastAtMs: number[] = [];

  constructor(readonly walletCount: number) {
    this.#polls = new Uint32Array(walletCount);
  }

  add(events: readonly RequestEvent[]): void {
    for (const [atMs, kind, wallet, status] of events) {
      this.requests += 1;
      if (status === 429) this.rateLimited += 1;
      if (kind !== REQUEST_KIND.positions || status !== 200 || wallet < 0 || wallet >= this.walletCount)
        continue;
      const n = (this.#polls[wallet] ?? 0) + 1;
      this.#polls[wallet] = n;
      this.#complete[n - 1] = (this.#complete[n - 1] ?? 0) + 1;
      this.#firstAtMs[n - 1] ??= atMs;
      this.#lastAtMs[n - 1] = atMs;
    }
  }

  /** How long sweep `k` has taken so far, from its first positions read to its latest. */
  sweepMs(k: number): number {
    return (this.#lastAtMs[k - 1] ?? 0) - (this.#firstAtMs[k - 1] ?? 0);
  }

  /** Wallets polled at least `k` times. */
  polled(k: number): number {
    return this.#complete[k - 1] ?? 0;
  }
}

/** Time the rate limit needs for `requests` (the bound), over the time taken: 1 = at the limit. */
export function boundEfficiency(sweep: Sweep, requestsPerSecond: number): number {
  const takenMs = sweep.endMs - sweep.startMs;
  // n requests evenly spread at the limit span (n - 1) / R.
  const boundMs = ((sweep.requests - 1) / requestsPerSecond) * 1000;
  return takenMs <= 0 ? 1 : boundMs / takenMs;
}

export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return "—";
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

export function formatRatio(keeper: number, baseline: number): string {
  if (!Number.isFinite(keeper) || !Number.isFinite(baseline)) return "—";
  if (baseline === 0) return keeper === 0 ? "= (both 0)" : "∞";
  return `${(keeper / baseline).toFixed(2)}×`;
}

export interface ClaimTimings {
  /** From the markets resolving to each claim confirmed. */
  readonly latenciesMs: number[];
  /** From the owner's first poll after the resolution to the claim confirmed (build, sign, send, confirm). */
  readonly afterPollMs: number[];
}

/** Latencies of the claims that confirmed; `owners` maps each position to its wallet index. */
export function claimTimings(
  resolvedAtMs: number,
  confirmedAt: ReadonlyMap<string, number>,
  owners: ReadonlyArray<{
    readonly pubkey: string;
    readonly ownerIndex: number;
    readonly resolvedAtMs?: number;
  }>,
  events: readonly RequestEvent[],
): ClaimTimings {
  const reads = events.filter((e) => e[1] === REQUEST_KIND.positions && e[3] === 200);
  const latenciesMs: number[] = [];
  const afterPollMs: number[] = [];
  for (const { pubkey, ownerIndex, resolvedAtMs: own } of owners) {
    const confirmed = confirmedAt.get(pubkey);
    if (confirmed === undefined) continue;
    const from = own ?? resolvedAtMs;
    latenciesMs.push(confirmed - from);
    let polled: number | undefined;
    // A read after the confirmation (the next sweep) did not lead to the claim.
    for (const [t, , wallet] of reads)
      if (wallet === ownerIndex && t >= from && t <= confirmed && (polled === undefined || t < polled))
        polled = t;
    if (polled !== undefined) afterPollMs.push(confirmed - polled);
  }
  return { latenciesMs, afterPollMs };
}

/** Where a claim's time went, per confirmed claim, from the request events the keeper sent. */
export interface ClaimStages {
  /** From the resolution to its owner's first answered positions read: noticing, then the poll's turn. */
  readonly toPollMs: number[];
  /** From that read to the claim build request: strategies, ledger, build queue, the build's turn. */
  readonly toBuildMs: number[];
  /** From the claim build request to confirmed: the build's answer, sign queue, sign, send, confirm. */
  readonly toConfirmedMs: number[];
  /** Latencies (resolution to confirmed) of owners polled before the change, so indexed by then... */
  readonly indexedMs: number[];
  /** ...and of owners the first sweep had not reached yet: no watcher knows them, the sweep finds them. */
  readonly unindexedMs: number[];
  /** From the resolution to the claim build request, whether a positions read came first or not. */
  readonly changeToBuildMs: number[];
  /**
   * Requests for the confirmed claims, from each one's resolution to its confirmation: the owner's
   * answered positions reads (a sweep's falling in that time included) and the claim builds.
   */
  readonly requests: { reads: number; builds: number; winners: number };
}

export function claimStages(
  owners: ReadonlyArray<{
    readonly ownerIndex: number;
    readonly pubkey: string;
    readonly resolvedAtMs?: number;
  }>,
  resolvedAtMs: number,
  confirmedAt: ReadonlyMap<string, number>,
  events: readonly RequestEvent[],
): ClaimStages {
  const sorted = [...events].sort((a, b) => a[0] - b[0]);
  const stages: ClaimStages = {
    toPollMs: [],
    toBuildMs: [],
    toConfirmedMs: [],
    indexedMs: [],
    unindexedMs: [],
    changeToBuildMs: [],
    requests: { reads: 0, builds: 0, winners: 0 },
  };
  const counted = new Set<number>();
  for (const { ownerIndex, pubkey, resolvedAtMs: own } of owners) {
    const confirmed = confirmedAt.get(pubkey);
    if (confirmed === undefined) continue;
    stages.requests.winners += 1;
    const from = own ?? resolvedAtMs;
    const ofOwner = sorted.filter((e) => e[2] === ownerIndex);
    const isRead = (e: RequestEvent) => e[1] === REQUEST_KIND.positions && e[3] === 200;
    const indexed = ofOwner.some((e) => isRead(e) && e[0] < from);
    (indexed ? stages.indexedMs : stages.unindexedMs).push(confirmed - from);
    const poll = ofOwner.find((e) => isRead(e) && e[0] >= from && e[0] <= confirmed);
    const build = ofOwner.find((e) => e[1] === REQUEST_KIND.claim && e[0] >= (poll?.[0] ?? from));
    if (poll) stages.toPollMs.push(poll[0] - from);
    if (poll && build) stages.toBuildMs.push(build[0] - poll[0]);
    if (build) stages.toConfirmedMs.push(confirmed - build[0]);
    const firstBuild = ofOwner.find((e) => e[1] === REQUEST_KIND.claim && e[0] >= from);
    if (firstBuild) stages.changeToBuildMs.push(firstBuild[0] - from);
    // An owner of several sample winners: its reads counted once; builds are counted per claim below.
    const during = ofOwner.filter((e) => e[0] >= from && e[0] <= confirmed);
    if (!counted.has(ownerIndex)) stages.requests.reads += during.filter(isRead).length;
    counted.add(ownerIndex);
  }
  // Builds: every claim request of the sample's owners from the resolution to the last confirmation.
  const last = Math.max(0, ...confirmedAt.values());
  const owning = new Set(owners.map((o) => o.ownerIndex));
  stages.requests.builds = sorted.filter(
    (e) => e[1] === REQUEST_KIND.claim && owning.has(e[2]) && e[0] >= resolvedAtMs && e[0] <= last,
  ).length;
  return stages;
}

/**
 * The least time the rate limit allows for a burst of claims: each claim's build request, and each
 * owner's positions read when the claims wait for a poll (`withReads`: the sweep finds them; the market
 * watcher claims from the holdings index without one), at the plan's rate, and at the share Keeper
 * aims at (it keeps a tenth free). Markets resolved apart (`resolvedAtMs` set) are bursts of their
 * own: the floor is the largest one's.
 */
export function burstFloorMs(
  owners: ReadonlyArray<{ readonly ownerIndex: number; readonly resolvedAtMs?: number }>,
  requestsPerSecond: number,
  withReads = true,
): { requests: number; planMs: number; keeperMs: number } {
  const bursts = new Map<number | undefined, Set<number>>();
  const claims = new Map<number | undefined, number>();
  for (const o of owners) {
    bursts.set(o.resolvedAtMs, (bursts.get(o.resolvedAtMs) ?? new Set()).add(o.ownerIndex));
    claims.set(o.resolvedAtMs, (claims.get(o.resolvedAtMs) ?? 0) + 1);
  }
  let requests = 0;
  for (const [at, wallets] of bursts)
    requests = Math.max(requests, (withReads ? wallets.size : 0) + (claims.get(at) ?? 0));
  return {
    requests,
    planMs: (requests / requestsPerSecond) * 1000,
    keeperMs: (requests / (requestsPerSecond * KEEPER_PLAN_SHARE)) * 1000,
  };
}

/**
 * The share of the plan the keeper's sweep is paced to: `watcher.sweepSharePct` with the market
 * watcher on (markets mode), the whole plan with it off (wallets mode).
 */
export function sweepShareOfPlan(mode: "wallets" | "markets", sweepSharePct: number | undefined): number {
  return mode === "markets" ? (sweepSharePct ?? DEFAULT_SWEEP_SHARE_PCT) / 100 : 1;
}

/** The share of the plan's window Keeper's rate limiter fills (src/api/sliding-window.ts WINDOW_SHARE). */
export const KEEPER_PLAN_SHARE = WINDOW_SHARE;

/**
 * Each sweep's poll times (a wallet's k-th positions read answered is sweep k's), and every positions
 * read answered, in the events' order.
 */
export function pollTimesOf(
  events: readonly RequestEvent[],
  walletCount: number,
): { bySweep: number[][]; all: number[] } {
  const polls = new Uint32Array(walletCount);
  const bySweep: number[][] = [];
  const all: number[] = [];
  for (const [t, kind, wallet, status] of [...events].sort((a, b) => a[0] - b[0])) {
    if (kind !== REQUEST_KIND.positions || status !== 200 || wallet < 0 || wallet >= walletCount) continue;
    const k = polls[wallet] ?? 0;
    polls[wallet] = k + 1;
    const sweep = bySweep[k] ?? [];
    sweep.push(t);
    bySweep[k] = sweep;
    all.push(t);
  }
  return { bySweep, all };
}
