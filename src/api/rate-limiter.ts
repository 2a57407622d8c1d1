import { createHash } from "node:crypto";
import type { Redis } from "ioredis";
import {
  type RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
} from "rate-limiter-flexible";
import { TransientError } from "../core/errors.js";
import { sleep } from "./sleep.js";

/**
 * A turn granted by a limiter that counts sends from when the service answered them: the service
 * stamps a request when it arrives, which may be well after it was granted (a burst of a hundred
 * requests reaches it over a few hundred ms), so a send counted from its grant would leave Keeper's
 * window before it leaves the service's.
 */
export interface RateGrant {
  /** The service answered (or the send failed): count the send from now. */
  answered(): void;
}

/** What the transport needs of a rate limiter: wait for a turn; hold back after the service said 429. */
export interface RequestRateLimiter {
  /** Resolves when one more request may be sent; waits (never fails) while the budget is spent. */
  // biome-ignore lint/suspicious/noConfusingVoidType: a limiter that only paces grants nothing to answer.
  acquire(signal?: AbortSignal): Promise<RateGrant | void>;
  /** The service answered 429: every sender of this key holds back for at least `ms`. */
  backOff(ms: number): Promise<void>;
}

export interface RateLimiterOptions {
  /** Every process with the same key shares one budget; only a hash of it is ever stored. */
  readonly apiKey: string | undefined;
  /** The plan's rate (api-gaps: plans run from 1 to 150 a second). Fractions below 1 are allowed. */
  readonly requestsPerSecond: number;
  /** Shared budget across processes; without it the budget is this process's own. */
  readonly redis?: Redis;
  /** Redis key prefix; tests give each run its own. */
  readonly keyPrefix?: string;
}

export const DEFAULT_RATE_LIMIT_PREFIX = "keeper:api-rate";

/**
 * The share of the plan Keeper aims at. The service counts a sliding window (60 s live); a send that a
 * busy event loop or a slow machine makes late lands in the next window beside the sends that were on
 * time there. Aiming at 90 % leaves a tenth of every window for such lateness: at 60 s, six seconds of
 * delay before the service sees one request too many.
 */
export const PLAN_SHARE = 0.9;

/**
 * The store counts fixed windows of this length. Ten seconds lets a plan of a few requests a second
 * keep its 10 % margin in whole points (1 a second would otherwise round to 0 or to the whole plan).
 */
const STORE_WINDOW_SECONDS = 10;

/** A stable, non-reversible name for an API key: the limiter's Redis key, safe to see in Redis. */
export function apiKeyFingerprint(apiKey: string): string {
  return createHash("sha256").update(apiKey).digest("hex").slice(0, 32);
}

/** `requestsPerSecond` as whole points per fixed window of whole seconds (the Redis store counts in seconds). */
export function windowOf(requestsPerSecond: number): { points: number; duration: number } {
  if (!(requestsPerSecond > 0) || !Number.isFinite(requestsPerSecond))
    throw new RangeError("requestsPerSecond must be a positive number");
  const points = Math.floor(requestsPerSecond * PLAN_SHARE * STORE_WINDOW_SECONDS);
  if (points >= 1) return { points, duration: STORE_WINDOW_SECONDS };
  return { points: 1, duration: Math.ceil(1 / requestsPerSecond) };
}

/**
 * A request budget per API key, over rate-limiter-flexible: `RateLimiterRedis` when a Redis client is
 * given (one budget for the whole fleet), else `RateLimiterMemory`.
 */
export class ApiRateLimiter implements RequestRateLimiter {
  readonly #limiter: RateLimiterAbstract;
  readonly #key: string;
  readonly #points: number;
  readonly #durationMs: number;
  /** The least time between two sends of this process (the budget's pace), and when the next may go. */
  readonly #minGapMs: number;
  #nextSendAt = 0;
  /** Counters for tests and metrics: how often and how long senders waited for a turn. */
  readonly stats = { acquired: 0, waits: 0, waitedMs: 0 };

  constructor(options: RateLimiterOptions) {
    const { points, duration } = windowOf(options.requestsPerSecond);
    const keyPrefix = options.keyPrefix ?? DEFAULT_RATE_LIMIT_PREFIX;
    this.#points = points;
    this.#durationMs = duration * 1000;
    this.#minGapMs = this.#durationMs / points;
    // Keyless senders share the keyless budget (the service counts them by address).
    this.#key = options.apiKey === undefined ? "keyless" : apiKeyFingerprint(options.apiKey);
    this.#limiter =
      options.redis === undefined
        ? new RateLimiterMemory({ points, duration, keyPrefix })
        : new RateLimiterRedis({
            storeClient: options.redis,
            points,
            duration,
            keyPrefix,
            // When Redis is away, each process keeps to the plan on its own rather than stopping.
            rejectIfRedisNotReady: true,
            insuranceLimiter: new RateLimiterMemory({ points, duration, keyPrefix }),
          });
  }

  async acquire(signal?: AbortSignal): Promise<void> {
    for (;;) {
      try {
        const granted = await this.#limiter.consume(this.#key, 1);
        this.stats.acquired += 1;
        await this.#paceWithinWindow(granted, signal);
        await this.#spaceFromLastSend(signal);
        return;
      } catch (rejection) {
        if (!(rejection instanceof RateLimiterRes)) {
          throw new TransientError(`rate limiter unavailable: ${(rejection as Error).message}`, {
            cause: rejection,
          });
        }
        // Waiters wake a little after the window turns (one slot, at most 50 ms: a request sent right at
        // the turn could arrive within a second of the previous window's first request if that one was
        // slow on the wire), and a little apart, so they do not all race for the first point.
        const marginMs = Math.min(50, this.#durationMs / this.#points);
        const waitMs = rejection.msBeforeNext + Math.ceil(marginMs + Math.random() * 10);
        this.stats.waits += 1;
        this.stats.waitedMs += waitMs;
        await sleep(waitMs, signal);
      }
    }
  }

  /**
   * The store counts whole-second windows, and a window's budget granted all at once would reach the
   * service as a burst at the window's start; next to the previous window's tail, a sliding window (how
   * the service counts) would see up to twice the plan. So the k-th grant of a window is sent at the
   * window's start plus (k - 1) slots of `duration / points`: evenly spaced across processes, computed
   * from the store's relative TTL so no clocks need to agree.
   */
  async #paceWithinWindow(granted: RateLimiterRes, signal?: AbortSignal): Promise<void> {
    const windowMs = this.#durationMs;
    const slotMs = windowMs / this.#points;
    const elapsedInWindowMs = windowMs - granted.msBeforeNext;
    const waitMs = Math.ceil((granted.consumedPoints - 1) * slotMs - elapsedInWindowMs);
    if (waitMs <= 0) return;
    this.stats.waits += 1;
    this.stats.waitedMs += waitMs;
    await sleep(waitMs, signal);
  }

  /**
   * The window's pacing lets grants that came late go at once, which bunches them at a window's end,
   * next to the following window's first; spacing this process's sends evenly keeps them apart. The
   * slot is reserved before the wait, so concurrent callers queue up in order.
   */
  async #spaceFromLastSend(signal?: AbortSignal): Promise<void> {
    const now = performance.now();
    const at = Math.max(now, this.#nextSendAt);
    this.#nextSendAt = at + this.#minGapMs;
    const waitMs = Math.ceil(at - now);
    if (waitMs <= 0) return;
    this.stats.waits += 1;
    this.stats.waitedMs += waitMs;
    await sleep(waitMs, signal);
  }

  async backOff(ms: number): Promise<void> {
    if (!(ms > 0)) return;
    const current = await this.#limiter.get(this.#key);
    const alreadyBlockedMs =
      current !== null && current.consumedPoints > this.#points ? current.msBeforeNext : 0;
    if (alreadyBlockedMs >= ms) return;
    // The store blocks in whole seconds; rounding up keeps us on the safe side of the server's reset.
    await this.#limiter.block(this.#key, Math.ceil(ms / 1000));
  }

  /** Counts `points` turns as taken without waiting for them: what another limiter's callers spent. */
  async charge(points: number): Promise<void> {
    await this.#limiter.penalty(this.#key, points);
  }
}

export function createRateLimiter(options: RateLimiterOptions): ApiRateLimiter {
  return new ApiRateLimiter(options);
}

/**
 * A limiter that takes a turn of `share` (a budget of its own, smaller than the plan) before a turn of
 * `plan`: requests through it never use more than the share, and what the plan has left over stays
 * free for everything else. A 429 backs the whole plan off.
 */
export function withinShare(plan: RequestRateLimiter, share: RequestRateLimiter): RequestRateLimiter {
  return {
    async acquire(signal?: AbortSignal) {
      await share.acquire(signal);
      return plan.acquire(signal);
    },
    backOff: (ms: number) => plan.backOff(ms),
  };
}

/**
 * A limiter whose every turn is also charged to `share`, without waiting for it: the market watcher's
 * reads come out of the sweep's share of the plan, so the watcher adds nothing to the load of a keeper
 * whose sweep runs at its share (the sweep takes one turn fewer for each read), and never waits for
 * the sweep's pace. A failed charge only leaves the sweep that turn.
 */
export function chargedTo(
  limiter: RequestRateLimiter,
  share: { charge(points: number): Promise<void> },
): RequestRateLimiter {
  return {
    async acquire(signal?: AbortSignal) {
      const grant = await limiter.acquire(signal);
      share.charge(1).catch(() => undefined);
      return grant;
    },
    backOff: (ms: number) => limiter.backOff(ms),
  };
}

/**
 * A limiter that, while `isBusy()` holds, also takes a turn of `whileBusy` (a smaller budget) before
 * a turn of `limiter`: the sweep slows down while this process works on claims, closes and orders,
 * which then get the CPU and the plan (on a busy keeper, the sweep's polls were a third of its work
 * during a burst of claims). A 429 backs `limiter` off.
 */
export function slowerWhile(
  isBusy: () => boolean,
  whileBusy: RequestRateLimiter,
  limiter: RequestRateLimiter,
): RequestRateLimiter {
  return {
    async acquire(signal?: AbortSignal) {
      if (isBusy()) await whileBusy.acquire(signal);
      return limiter.acquire(signal);
    },
    backOff: (ms: number) => limiter.backOff(ms),
  };
}

/** A plan that tells how many of this process's senders wait now for its window to free a turn. */
export interface QueuedPlan extends RequestRateLimiter {
  /** Senders in line for a full window (0 while the window has room). */
  readonly queued: number;
}

/**
 * How long a sweep request stands aside while targeted requests wait for a full window. Long enough
 * that a burst of claims gets nearly every turn the window frees; short enough that the sweep's polls,
 * which hold poll-worker slots a targeted poll (an exit) may need, still move a request every few
 * seconds.
 */
export const SWEEP_YIELD_MS = 2_000;

/**
 * Two lanes over one plan, in this process: `first` (targeted polls, builds, the watcher's reads) and
 * `after` (the sweep). The after lane enters the plan one request at a time while the first lane's
 * requests enter side by side; and while first-lane requests are in line for a full window, the after
 * lane's next request stands aside (at most `yieldMs`) instead of taking its place in that line, so a
 * burst of claims at a plan already spent by routine reads gets the turns the window frees. The sweep
 * is not stopped outright: its polls hold poll-worker slots, and a targeted poll needs one of those.
 * Across processes the plan's Redis budget is shared as before; the order is per process.
 */
export class PriorityLanes {
  #firstWaiting = 0;
  #afterEntered = false;
  readonly #wakers = new Set<() => void>();
  readonly first: RequestRateLimiter;
  readonly after: RequestRateLimiter;

  constructor(plan: RequestRateLimiter | QueuedPlan, yieldMs = SWEEP_YIELD_MS) {
    const backOff = (ms: number) => plan.backOff(ms);
    const queued = () => ("queued" in plan ? plan.queued : 0);
    this.first = {
      acquire: async (signal?: AbortSignal) => {
        this.#firstWaiting += 1;
        try {
          return await plan.acquire(signal);
        } finally {
          this.#firstWaiting -= 1;
          this.#wake();
        }
      },
      backOff,
    };
    this.after = {
      acquire: async (signal?: AbortSignal) => {
        const standAsideUntil = performance.now() + yieldMs;
        for (;;) {
          if (this.#afterEntered) await this.#change(signal);
          else if (queued() > 0 && performance.now() < standAsideUntil)
            await this.#change(signal, standAsideUntil - performance.now());
          else break;
        }
        this.#afterEntered = true;
        try {
          return await plan.acquire(signal);
        } finally {
          this.#afterEntered = false;
          this.#wake();
        }
      },
      backOff,
    };
  }

  /** Requests of the first lane waiting for a turn now (for tests and metrics). */
  get firstWaiting(): number {
    return this.#firstWaiting;
  }

  #wake(): void {
    const wakers = [...this.#wakers];
    this.#wakers.clear();
    for (const wake of wakers) wake();
  }

  /** Resolves at the next turn taken or given up in either lane, or after `timeoutMs`; rejects when `signal` aborts. */
  #change(signal?: AbortSignal, timeoutMs?: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      let timer: NodeJS.Timeout | undefined;
      const done = (settle: () => void) => {
        this.#wakers.delete(wake);
        signal?.removeEventListener("abort", onAbort);
        clearTimeout(timer);
        settle();
      };
      const onAbort = () => done(() => reject(signal?.reason));
      const wake = () => done(resolve);
      this.#wakers.add(wake);
      signal?.addEventListener("abort", onAbort, { once: true });
      if (timeoutMs !== undefined) timer = setTimeout(wake, Math.max(1, Math.ceil(timeoutMs)));
    });
  }
}
