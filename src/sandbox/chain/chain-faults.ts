import type { Congestion } from "./congestion.js";
import { seededRandom } from "./seeded-random.js";

/** Answer some calls of one RPC method with a JSON-RPC error. */
export interface MethodErrorRule {
  /** Probability in [0, 1] that a call fails. */
  readonly rate: number;
  readonly code?: number;
  readonly message?: string;
}

/**
 * The chain's fault knobs, settable at runtime. A seeded RNG draws the method errors, so a test
 * that sets a rate sees the same calls fail on every run.
 */
export class ChainFaults {
  /** Each distinct transaction's first `dropFirstSends` sends are acknowledged but never executed. */
  dropFirstSends = 0;
  /** A send is held this long before it executes (and is dropped if its blockhash expired meanwhile). */
  landDelayMs = 0;
  methodErrors: Record<string, MethodErrorRule> = {};
  /**
   * What getRecentPrioritizationFees answers, oldest slot first, in micro-lamports per unit (the same
   * for whatever accounts are asked about); empty answers one zero fee at the current slot.
   */
  recentPriorityFees: number[] = [];
  /** A congested leader dropping low bids (set with `LocalChain.congest`); none by default. */
  congestion: Congestion | undefined;
  private random: () => number;

  constructor(private readonly seed: number) {
    this.random = seededRandom(seed);
  }

  /** The rule that fails this call, if the draw says so. */
  methodError(method: string): MethodErrorRule | undefined {
    const rule = this.methodErrors[method];
    if (rule === undefined || rule.rate <= 0) return undefined;
    return this.random() < rule.rate ? rule : undefined;
  }

  reset(): void {
    this.dropFirstSends = 0;
    this.landDelayMs = 0;
    this.methodErrors = {};
    this.recentPriorityFees = [];
    this.congestion = undefined;
    this.random = seededRandom(this.seed);
  }
}
