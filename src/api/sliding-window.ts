import { randomBytes } from "node:crypto";
import type { Redis } from "ioredis";
import { TransientError } from "../core/errors.js";
import { apiKeyFingerprint, type QueuedPlan, type RateGrant } from "./rate-limiter.js";
import { sleep } from "./sleep.js";

export interface SlidingWindowOptions {
  /** Every process with the same key shares one budget; only a hash of it is ever stored. */
  readonly apiKey: string | undefined;
  /** The plan's rate (api-gaps: plans run from 1 to 150 a second). */
  readonly requestsPerSecond: number;
  /** The window the service counts the plan over (60 s live, api-gaps). */
  readonly windowSeconds: number;
  /** The share of the window Keeper may fill (0-1; default WINDOW_SHARE). */
  readonly share?: number;
  /** Shared budget across processes; without it the budget is this process's own. */
  readonly redis?: Redis;
  /** Redis key prefix; tests give each run its own. */
  readonly keyPrefix?: string;
  /** The clock of the in-memory log (tests move it); Redis keeps its own. */
  readonly nowMs?: () => number;
}

/**
 * The share of the service's window Keeper's own window fills by default (`service.rateLimitSharePct`).
 * Paced limiters keep a tenth back for sends made late (PLAN_SHARE); this window needs less: it counts
 * each send from its grant until the service answered it and from the answer on, so it always holds
 * every send of Keeper's that the service's window holds. The twentieth kept back is for what Keeper cannot see: other clients of
 * the organisation's plan (a 60 s window at 10 a second: 30 requests). The rest is a burst's: what
 * routine reads leave of the window is what a burst of claims spends at once.
 */
export const WINDOW_SHARE = 0.95;

/** At most `limit` sends in any `windowMs`: the plan's share of a window, or one send a longer window. */
export function slidingBudget(
  requestsPerSecond: number,
  windowSeconds: number,
  share: number = WINDOW_SHARE,
): { limit: number; windowMs: number } {
  if (!(requestsPerSecond > 0) || !Number.isFinite(requestsPerSecond))
    throw new RangeError("requestsPerSecond must be a positive number");
  if (!(windowSeconds > 0) || !Number.isFinite(windowSeconds))
    throw new RangeError("windowSeconds must be a positive number");
  if (!(share > 0 && share <= 1)) throw new RangeError("share must be above 0 and at most 1");
  const limit = Math.floor(requestsPerSecond * windowSeconds * share);
  if (limit >= 1) return { limit, windowMs: windowSeconds * 1000 };
  // A plan too small for one request a window: one request in the time the plan gives it.
  return { limit: 1, windowMs: Math.ceil(1000 / (requestsPerSecond * share)) };
}

/**
 * Grants a send, or answers how many ms until one may go. Clock: Redis's own (TIME), so processes on
 * machines whose clocks disagree still share one window. A back-off (after a 429) blocks every sender.
 * KEYS: the log (a sorted set of send times, µs), the back-off key. ARGV: window µs, limit, member tag.
 */
const RESERVE_SCRIPT = `
local blocked = redis.call("PTTL", KEYS[2])
if blocked > 0 then return blocked end
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local window = tonumber(ARGV[1])
redis.call("ZREMRANGEBYSCORE", KEYS[1], "-inf", now - window)
local used = redis.call("ZCARD", KEYS[1])
local limit = tonumber(ARGV[2])
if used < limit then
  redis.call("ZADD", KEYS[1], now, ARGV[3])
  redis.call("PEXPIRE", KEYS[1], math.ceil(window / 500))
  return 0
end
local oldest = redis.call("ZRANGE", KEYS[1], used - limit, used - limit, "WITHSCORES")
return math.max(1, math.ceil((tonumber(oldest[2]) + window - now) / 1000))
`;

/**
 * Counts sends from now (their answers) instead of their grants, those still in the log. The log lives
 * two windows past its last change (a window past its newest send would do; the second is margin).
 * KEYS: the log. ARGV: window µs, then the members.
 */
const ANSWERED_SCRIPT = `
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local args = {}
for i = 2, #ARGV do
  args[#args + 1] = now
  args[#args + 1] = ARGV[i]
end
local changed = redis.call("ZADD", KEYS[1], "XX", "CH", unpack(args))
if changed > 0 then redis.call("PEXPIRE", KEYS[1], math.ceil(tonumber(ARGV[1]) / 500)) end
return changed
`;

/**
 * How long answered sends wait for others to be marked with them, at most: a send marked late only
 * stays in Keeper's window longer than in the service's, never shorter. A 200th of the window (50 ms
 * of the live 60 s one) costs the window nothing one can measure and saves a Redis call on most of a
 * burst's or a sweep's answers.
 */
const ANSWERED_GATHER_MAX_MS = 50;
const ANSWERED_MARKS_A_CALL = 1_000;

/** Sets the back-off unless a longer one is already set. KEYS: the back-off key. ARGV: ms. */
const BLOCK_SCRIPT = `
if redis.call("PTTL", KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call("SET", KEYS[1], "1", "PX", ARGV[1])
return 1
`;

/** What the Redis client needs: the two scripts, defined once per client. */
interface WindowScripts {
  keeperWindowReserve(
    log: string,
    block: string,
    windowUs: number,
    limit: number,
    member: string,
  ): Promise<number>;
  keeperWindowAnswered(log: string, windowUs: number, ...members: string[]): Promise<number>;
  keeperWindowBlock(block: string, ms: number): Promise<number>;
}

function withScripts(redis: Redis): Redis & WindowScripts {
  const client = redis as Redis & Partial<WindowScripts>;
  if (client.keeperWindowReserve === undefined) {
    redis.defineCommand("keeperWindowReserve", { numberOfKeys: 2, lua: RESERVE_SCRIPT });
    redis.defineCommand("keeperWindowAnswered", { numberOfKeys: 1, lua: ANSWERED_SCRIPT });
    redis.defineCommand("keeperWindowBlock", { numberOfKeys: 1, lua: BLOCK_SCRIPT });
  }
  return client as Redis & WindowScripts;
}

/**
 * The plan as the service counts it: a sliding window (60 s live), of which Keeper uses `WINDOW_SHARE`.
 * A request may go as soon as the last window holds fewer sends than that, with no pacing, so a burst
 * of claims after a market resolved spends at once what the routine traffic (the sweep, paced on its
 * own share) left of the window, instead of waiting for evenly spaced turns. Once the window is
 * full, a send waits for the oldest one in it to leave. A send is counted from its grant until the
 * service answers it, and from the answer on: the service stamped it in between, so Keeper's window
 * always holds at least what the service's holds, however late a burst's requests arrive.
 *
 * Written here rather than taken from a library: the sliding-window packages for ioredis found need
 * ioredis 5 (Keeper's is 6) and have no back-off shared by every process, which a 429 needs.
 */
export class SlidingWindowLimiter implements QueuedPlan {
  readonly #limit: number;
  readonly #windowMs: number;
  readonly #redis: (Redis & WindowScripts) | undefined;
  readonly #logKey: string;
  readonly #blockKey: string;
  readonly #tag = randomBytes(6).toString("hex");
  #sequence = 0;
  /** This process's own log and back-off: the budget without Redis, or while Redis cannot answer. */
  readonly #local: { at: number }[] = [];
  #localBlockedUntil = 0;
  readonly #nowMs: () => number;
  /** The last waiter of this process in line for a full window (resolved once it went or gave up). */
  #line: Promise<void> = Promise.resolve();
  /** Waiters of this process in line now. */
  #waiting = 0;
  /** Sends answered and not yet marked so in Redis (see ANSWERED_GATHER_MAX_MS). */
  #answered: string[] = [];
  readonly #answeredGatherMs: number;
  /** Counters for tests and metrics: grants, and how often and how long senders waited. */
  readonly stats = { acquired: 0, waits: 0, waitedMs: 0, redisFailures: 0, answeredMarks: 0 };

  constructor(options: SlidingWindowOptions) {
    const { limit, windowMs } = slidingBudget(
      options.requestsPerSecond,
      options.windowSeconds,
      options.share,
    );
    this.#limit = limit;
    this.#windowMs = windowMs;
    this.#redis = options.redis === undefined ? undefined : withScripts(options.redis);
    const key = options.apiKey === undefined ? "keyless" : apiKeyFingerprint(options.apiKey);
    const prefix = options.keyPrefix ?? "keeper:api-window";
    this.#logKey = `${prefix}:${key}:log`;
    this.#blockKey = `${prefix}:${key}:blocked`;
    this.#nowMs = options.nowMs ?? (() => performance.now());
    this.#answeredGatherMs = Math.min(ANSWERED_GATHER_MAX_MS, Math.floor(windowMs / 200));
  }

  async acquire(signal?: AbortSignal): Promise<RateGrant> {
    signal?.throwIfAborted();
    const first = await this.#reserve();
    if (typeof first !== "number") return this.#granted(first);
    // The window is full: wait in line, so that one waiter of this process asks Redis again when a
    // send leaves the window, not every waiter at once.
    const ahead = this.#line;
    const isFirstInLine = this.#waiting === 0;
    let leave = () => {};
    this.#line = new Promise<void>((resolve) => {
      leave = resolve;
    });
    this.#waiting += 1;
    try {
      let grant: RateGrant | number = first;
      if (!isFirstInLine) {
        await untilResolvedOrAborted(ahead, signal);
        // Whoever was ahead waited for the window already: ask again before sleeping.
        grant = await this.#reserve();
      }
      while (typeof grant === "number") {
        // A little apart, so that processes woken by the same send leaving do not all race for it.
        const sleepMs = grant + Math.ceil(Math.random() * 10);
        this.stats.waits += 1;
        this.stats.waitedMs += sleepMs;
        await sleep(sleepMs, signal);
        grant = await this.#reserve();
      }
      return this.#granted(grant);
    } finally {
      this.#waiting -= 1;
      // The one behind goes once everyone ahead went, even when this waiter gave up early.
      void ahead.then(leave);
    }
  }

  /** Senders of this process in line for a full window now (0 while it has room). */
  get queued(): number {
    return this.#waiting;
  }

  #granted(grant: RateGrant): RateGrant {
    this.stats.acquired += 1;
    return grant;
  }

  async backOff(ms: number): Promise<void> {
    if (!(ms > 0)) return;
    this.#localBlockedUntil = Math.max(this.#localBlockedUntil, this.#nowMs() + ms);
    if (this.#redis === undefined) return;
    try {
      await this.#redis.keeperWindowBlock(this.#blockKey, Math.ceil(ms));
    } catch {
      // This process holds back on its own (above); the others will meet the 429 themselves.
      this.stats.redisFailures += 1;
    }
  }

  /** A grant, or the ms until one may be. */
  async #reserve(): Promise<RateGrant | number> {
    const redis = this.#redis;
    if (redis !== undefined && redis.status === "ready") {
      try {
        this.#sequence += 1;
        const member = `${this.#tag}-${this.#sequence}`;
        const windowUs = this.#windowMs * 1000;
        const waitMs = Number(
          await redis.keeperWindowReserve(this.#logKey, this.#blockKey, windowUs, this.#limit, member),
        );
        if (waitMs > 0) return waitMs;
        return { answered: () => this.#markAnswered(redis, member) };
      } catch (error) {
        if (redis.status === "ready") {
          throw new TransientError(`rate limiter unavailable: ${(error as Error).message}`, { cause: error });
        }
        this.stats.redisFailures += 1;
      }
    }
    return this.#reserveLocally();
  }

  /**
   * Marks a send answered together with the others answered within the gather time, in one call. Not
   * awaited: the send is counted from its grant meanwhile, which only ends it sooner.
   */
  #markAnswered(redis: Redis & WindowScripts, member: string): void {
    this.#answered.push(member);
    if (this.#answered.length > 1) return;
    const flush = () => {
      const members = this.#answered;
      this.#answered = [];
      // In parts a script's arguments can hold, however large a burst the window allows.
      for (let i = 0; i < members.length; i += ANSWERED_MARKS_A_CALL) {
        this.stats.answeredMarks += 1;
        const part = members.slice(i, i + ANSWERED_MARKS_A_CALL);
        redis.keeperWindowAnswered(this.#logKey, this.#windowMs * 1000, ...part).catch(() => {
          this.stats.redisFailures += 1;
        });
      }
    };
    // Unref'd: a mark still waiting never holds a stopping process (the send counts from its grant).
    if (this.#answeredGatherMs > 0) setTimeout(flush, this.#answeredGatherMs).unref();
    else flush();
  }

  #reserveLocally(): RateGrant | number {
    const now = this.#nowMs();
    if (now < this.#localBlockedUntil) return Math.ceil(this.#localBlockedUntil - now);
    const log = this.#local;
    while (log.length > 0 && (log[0]?.at as number) <= now - this.#windowMs) log.shift();
    if (log.length >= this.#limit) {
      return Math.max(1, Math.ceil((log[log.length - this.#limit]?.at as number) + this.#windowMs - now));
    }
    const entry = { at: now };
    log.push(entry);
    return {
      answered: () => {
        const i = log.indexOf(entry);
        if (i < 0) return;
        // The log stays in time order: every entry's time is at most now.
        log.splice(i, 1);
        entry.at = this.#nowMs();
        log.push(entry);
      },
    };
  }
}

/** Resolves when `promise` does; rejects with the signal's reason as soon as it aborts. */
function untilResolvedOrAborted(promise: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (signal === undefined) return promise;
  signal.throwIfAborted();
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    void promise.then(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    });
  });
}
