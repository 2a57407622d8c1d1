import type { ClaimCpu } from "./cpu-per-claim.js";
import type { MemoryAtPeak, RequestEvent } from "./protocol.js";
import type { ClaimStages, Sweep } from "./stats.js";
import type { ClaimSample } from "./world-sample.js";

/** What one contender's phase of the benchmark measured: the run writes it, the report reads it. */
export interface PhaseResult {
  readonly name: string;
  readonly sweeps: readonly Sweep[];
  readonly requests: number;
  /** 429s the contender received (its own count) and the service refused (the service's count). */
  readonly rateLimited: number;
  readonly serviceRefused: number;
  readonly sample: ClaimSample;
  /** Per sample position: ms from resolution to confirmed; missing ones never confirmed. */
  readonly latenciesMs: readonly number[];
  /** Per confirmed sample claim: ms from its owner's first poll after the resolution to confirmed. */
  readonly afterPollMs: readonly number[];
  /** Keeper only: where the claims' time went, from its request events. */
  readonly stages?: ClaimStages;
  readonly unconfirmed: number;
  readonly durationMs: number;
  readonly timedOut: boolean;
  readonly maxRssBytes?: number;
  readonly peakSampledRssBytes?: number;
  readonly memoryAtPeak?: MemoryAtPeak;
  readonly notes: readonly string[];
  readonly events: readonly RequestEvent[];
  readonly confirmedAt: ReadonlyMap<string, number>;
  /** Keeper only: positions pushed past the take-profit, and ms from the move to each close confirmed. */
  readonly closeSample?: ClaimSample;
  readonly closeLatenciesMs?: readonly number[];
  /** Keeper only: requests a minute over the quiet time at the end of the phase. */
  readonly idleRequestsPerMinute?: number;
  /** Keeper only: its process's CPU time over the claim burst and at rest (see cpu-per-claim.ts). */
  readonly cpu?: ClaimCpu;
}
