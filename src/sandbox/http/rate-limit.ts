/**
 * A per-key sliding-window rate limiter with the live service's header semantics (api-gaps): a plan
 * allows `requestsPerSecond × windowSeconds` requests in any window of `windowSeconds`; every answered
 * request carries `x-ratelimit-*`, and a refused one may carry `Retry-After`.
 *
 * Written small rather than taken from a library: the in-memory limiters at hand count fixed windows, and
 * the headers need the exact moment the oldest request leaves the window, which a log of timestamps gives.
 */
export interface RateLimitPlan {
  /** Average rate the plan allows; the live plans run from 1 to 150. */
  readonly requestsPerSecond: number;
  /** Length of the sliding window; 60 on the live service. */
  readonly windowSeconds?: number;
  /** Whether a 429 carries `Retry-After` (the live service does not always send it). */
  readonly retryAfter?: boolean;
}

export const DEFAULT_WINDOW_SECONDS = 60;

export interface RateDecision {
  readonly allowed: boolean;
  /** Requests the window allows. */
  readonly limit: number;
  /** Requests counted in the window, this one included when allowed. */
  readonly current: number;
  readonly remaining: number;
  /** Unix seconds when the oldest counted request leaves the window, freeing a slot. */
  readonly resetUnixSeconds: number;
  /** Whole seconds to wait before a retry can succeed; set only on a refusal with `retryAfter`. */
  readonly retryAfterSeconds: number | undefined;
}

/** Requests a plan allows in one window (at least one, or the key could never call). */
export function windowLimit(plan: RateLimitPlan): number {
  return Math.max(1, Math.round(plan.requestsPerSecond * (plan.windowSeconds ?? DEFAULT_WINDOW_SECONDS)));
}

/** One key's window: a ring buffer of the times of the requests it let through. */
class SlidingWindow {
  private readonly times: Float64Array;
  private head = 0;
  private count = 0;
  readonly limit: number;
  private readonly windowMs: number;
  private readonly sendsRetryAfter: boolean;
  /** What this window counted since it was made: for tests and the admin route. */
  readonly counts = { allowed: 0, refused: 0, peakInWindow: 0 };

  constructor(plan: RateLimitPlan) {
    const windowSeconds = plan.windowSeconds ?? DEFAULT_WINDOW_SECONDS;
    this.limit = windowLimit(plan);
    this.windowMs = windowSeconds * 1000;
    this.sendsRetryAfter = plan.retryAfter ?? true;
    this.times = new Float64Array(this.limit);
  }

  take(nowMs: number): RateDecision {
    this.evict(nowMs);
    const allowed = this.count < this.limit;
    if (allowed) {
      this.times[(this.head + this.count) % this.limit] = nowMs;
      this.count += 1;
      this.counts.allowed += 1;
      this.counts.peakInWindow = Math.max(this.counts.peakInWindow, this.count);
    } else {
      this.counts.refused += 1;
    }
    const freesAtMs = (this.times[this.head] ?? nowMs) + this.windowMs;
    return {
      allowed,
      limit: this.limit,
      current: this.count,
      remaining: this.limit - this.count,
      resetUnixSeconds: Math.ceil(freesAtMs / 1000),
      retryAfterSeconds:
        !allowed && this.sendsRetryAfter ? Math.max(1, Math.ceil((freesAtMs - nowMs) / 1000)) : undefined,
    };
  }

  private evict(nowMs: number): void {
    const cutoff = nowMs - this.windowMs;
    while (this.count > 0 && (this.times[this.head] ?? 0) <= cutoff) {
      this.head = (this.head + 1) % this.limit;
      this.count -= 1;
    }
  }
}

/** Windows for every key that has a plan; keys without one are never limited. */
export class RateLimiter {
  private readonly windows = new Map<string, SlidingWindow>();
  private readonly plans: ReadonlyMap<string, RateLimitPlan>;
  private readonly nowMs: () => number;

  constructor(plans: ReadonlyMap<string, RateLimitPlan>, nowMs: () => number = Date.now) {
    this.plans = plans;
    this.nowMs = nowMs;
  }

  /** Counts one request for the key; `undefined` when the key has no plan. */
  take(key: string): RateDecision | undefined {
    let window = this.windows.get(key);
    if (window === undefined) {
      const plan = this.plans.get(key);
      if (plan === undefined) return undefined;
      window = new SlidingWindow(plan);
      this.windows.set(key, window);
    }
    return window.take(this.nowMs());
  }

  /** The number of requests the key's window allows; `undefined` when the key has no plan. */
  limitOf(key: string): number | undefined {
    const plan = this.plans.get(key);
    return plan === undefined ? undefined : windowLimit(plan);
  }

  /**
   * What the key's window counted: requests let through and refused (429) since the last reset, and
   * the most it ever held at once. Undefined before the key's first request or without a plan.
   */
  countsOf(key: string): Readonly<SlidingWindow["counts"]> | undefined {
    const counts = this.windows.get(key)?.counts;
    return counts === undefined ? undefined : { ...counts };
  }

  /** Forgets every counted request (tests and the admin route start from a clean window). */
  reset(): void {
    this.windows.clear();
  }
}

/** The headers a rate decision puts on a response. */
export function rateLimitHeaders(decision: RateDecision): Record<string, string> {
  const headers: Record<string, string> = {
    "x-ratelimit-limit": String(decision.limit),
    "x-ratelimit-remaining": String(decision.remaining),
    "x-ratelimit-current": String(decision.current),
    "x-ratelimit-reset": String(decision.resetUnixSeconds),
  };
  if (decision.retryAfterSeconds !== undefined) headers["retry-after"] = String(decision.retryAfterSeconds);
  return headers;
}
