/** When a wallet was last polled successfully, and since when Keeper has been expecting polls of it. */
export interface PollTime {
  wallet: string;
  /** Epoch milliseconds of the last successful poll; undefined until the first one. */
  lastSuccessMs: number | undefined;
  /** Epoch milliseconds since which the wallet is tracked: a wallet never polled is stale from here. */
  sinceMs: number;
}

/** Where per-wallet poll times come from: this in-memory tracker, or a shared store (Redis). */
export interface PollTimesSource {
  pollTimes(): readonly PollTime[] | Promise<readonly PollTime[]>;
}

export interface PollSummary {
  wallets: number;
  /** The oldest of the wallets' last successful polls (or tracking start, if never polled). */
  oldestMs: number | undefined;
  /** Wallets whose last poll is older than the stale threshold, oldest first. */
  stale: PollTime[];
}

/** Per-wallet times are for readiness and `keeper status`; metrics only see the summary. */
export function summarizePolls(times: readonly PollTime[], nowMs: number, staleMs: number): PollSummary {
  let oldestMs: number | undefined;
  const stale: PollTime[] = [];
  for (const time of times) {
    const reference = time.lastSuccessMs ?? time.sinceMs;
    if (oldestMs === undefined || reference < oldestMs) oldestMs = reference;
    if (nowMs - reference > staleMs) stale.push(time);
  }
  stale.sort((a, b) => (a.lastSuccessMs ?? a.sinceMs) - (b.lastSuccessMs ?? b.sinceMs));
  return { wallets: times.length, oldestMs, stale };
}

/** Readiness verdict: every tracked wallet polled within `staleMs`. */
export function pollFreshness(
  times: readonly PollTime[],
  nowMs: number,
  staleMs: number,
): { ok: boolean; detail: string } {
  const summary = summarizePolls(times, nowMs, staleMs);
  if (summary.stale.length === 0)
    return { ok: true, detail: `${summary.wallets} wallets polled within ${staleMs} ms` };
  // Name a few wallets only: the body of /readyz is for a person, not a full list.
  const named = summary.stale
    .slice(0, 3)
    .map((time) => time.wallet)
    .join(", ");
  return { ok: false, detail: `${summary.stale.length} of ${summary.wallets} wallets stale (${named})` };
}

/** The in-memory source: the poll worker records each success here. */
export class PollTracker implements PollTimesSource {
  readonly #times = new Map<string, PollTime>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** Starts tracking wallets not yet known, so one that never gets polled becomes stale. */
  expect(wallets: Iterable<string>): void {
    const nowMs = this.#now();
    for (const wallet of wallets)
      if (!this.#times.has(wallet))
        this.#times.set(wallet, { wallet, lastSuccessMs: undefined, sinceMs: nowMs });
  }

  recordSuccess(wallet: string, atMs: number = this.#now()): void {
    const known = this.#times.get(wallet);
    // The refresh from Redis repeats every wallet's time every few seconds: an unchanged one allocates nothing.
    if (known && known.lastSuccessMs !== undefined && known.lastSuccessMs >= atMs) return;
    this.#times.set(wallet, { wallet, lastSuccessMs: atMs, sinceMs: known?.sinceMs ?? atMs });
  }

  forget(wallet: string): void {
    this.#times.delete(wallet);
  }

  lastSuccess(wallet: string): number | undefined {
    return this.#times.get(wallet)?.lastSuccessMs;
  }

  pollTimes(): PollTime[] {
    return [...this.#times.values()].map((time) => ({ ...time }));
  }

  freshness(staleMs: number): { ok: boolean; detail: string } {
    return pollFreshness(this.pollTimes(), this.#now(), staleMs);
  }
}
