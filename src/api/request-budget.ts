import type { Redis } from "ioredis";
import {
  chargedTo,
  createRateLimiter,
  PriorityLanes,
  type QueuedPlan,
  type RequestRateLimiter,
  slowerWhile,
  withinShare,
} from "./rate-limiter.js";
import { SlidingWindowLimiter } from "./sliding-window.js";
import { WorkInProgress } from "./work-in-progress.js";

/** The parts of Keeper's configuration the budget reads (a `KeeperConfig` is one). */
export interface RequestBudgetConfig {
  readonly service: {
    readonly requestsPerSecond: number;
    readonly rateLimitWindowSeconds: number;
    readonly rateLimitSharePct: number;
  };
  readonly watcher: {
    readonly enabled: boolean;
    readonly sweepSharePct: number;
    readonly sweepShareWhileActingPct: number;
  };
  readonly redis: { readonly prefix: string; readonly cluster?: readonly string[] | undefined };
}

export interface RequestBudgetOptions {
  readonly config: RequestBudgetConfig;
  /** Every process with the same key shares one budget; only a hash of it is ever stored. */
  readonly apiKey: string | undefined;
  /** Shares the budget with every process of the plan; without it (the CLI) it is this process's own. */
  readonly redis?: Redis;
}

/** A paced budget whose turns other callers can also be charged for (the sweep's share). */
export type ChargeableLimiter = RequestRateLimiter & { charge(points: number): Promise<void> };

/** The limiters a budget is made of: real ones over Redis by default; tests pass recording ones. */
export interface RequestBudgetParts {
  /** The plan's window as the service counts it. */
  planWindow(): RequestRateLimiter | QueuedPlan;
  /** An even pace of `requestsPerSecond`, under its own `name`. */
  pace(requestsPerSecond: number, name: string): ChargeableLimiter;
}

/**
 * How one plan's requests are shared in a process: targeted work (the market watcher's polls, every
 * build, the signer's reads) first and unpaced, the sweep paced at its share behind it and slower
 * still while money moves, and the watcher's own reads charged to the sweep's share.
 */
export interface RequestBudget {
  /** Targeted work: takes the window's turns ahead of the sweep, unpaced, so a burst of claims after a market resolved does not wait behind routine reads. */
  readonly targeted: RequestRateLimiter;
  /** The sweep: paced evenly at its share of the plan, then the window's turn behind targeted work. */
  readonly sweep: RequestRateLimiter;
  /** The market watcher's reads: targeted turns, charged to the sweep's share. */
  readonly watcher: RequestRateLimiter;
  /** Whether work that moves money runs in this process now (the sweep keeps to a smaller share). */
  readonly isActing: boolean;
  /** Runs `work` as work that moves money (targeted polls, builds, signings) until it settles. */
  acting<T>(work: () => Promise<T>): Promise<T>;
}

/** The real limiters: the plan's sliding window and paced shares, over Redis when one is given. */
export function requestBudgetParts(options: RequestBudgetOptions): RequestBudgetParts {
  const { config, apiKey, redis } = options;
  // On a Redis Cluster each limiter's keys share a hash tag: the window's script reads its log and its
  // back-off together, which must sit in one slot.
  const isCluster = (config.redis.cluster?.length ?? 0) > 0;
  const keyPrefix = (name: string) =>
    isCluster ? `{${config.redis.prefix}:${name}}` : `${config.redis.prefix}:${name}`;
  return {
    planWindow: () =>
      new SlidingWindowLimiter({
        apiKey,
        requestsPerSecond: config.service.requestsPerSecond,
        windowSeconds: config.service.rateLimitWindowSeconds,
        share: config.service.rateLimitSharePct / 100,
        ...(redis ? { redis } : {}),
        keyPrefix: keyPrefix("api-window"),
      }),
    pace: (requestsPerSecond, name) =>
      createRateLimiter({
        apiKey,
        requestsPerSecond,
        ...(redis ? { redis } : {}),
        keyPrefix: keyPrefix(name),
      }),
  };
}

export function createRequestBudget(
  options: RequestBudgetOptions,
  parts: RequestBudgetParts = requestBudgetParts(options),
): RequestBudget {
  const { service, watcher } = options.config;
  const lanes = new PriorityLanes(parts.planWindow());
  // The sweep's share of the plan: the rest stays free for targeted work and builds up in the window
  // for a burst. With the market watcher off, nothing is targeted and the sweep paces at the whole plan.
  const sweepPace = (pct: number, name: string) => parts.pace((service.requestsPerSecond * pct) / 100, name);
  const sweepShare = sweepPace(watcher.enabled ? watcher.sweepSharePct : 100, "api-rate-sweep");
  const acting = new WorkInProgress();
  const sweep = watcher.enabled
    ? slowerWhile(
        () => acting.isBusy,
        sweepPace(Math.min(watcher.sweepSharePct, watcher.sweepShareWhileActingPct), "api-rate-sweep-acting"),
        withinShare(lanes.after, sweepShare),
      )
    : withinShare(lanes.after, sweepShare);
  return {
    targeted: lanes.first,
    sweep,
    // A keeper at rest sends no more with the watcher on than its sweep alone would.
    watcher: chargedTo(lanes.first, sweepShare),
    get isActing() {
      return acting.isBusy;
    },
    acting: (work) => acting.run(work),
  };
}
