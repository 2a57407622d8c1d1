import { type Connection, PublicKey } from "@solana/web3.js";
import type { Logger } from "pino";
import { rpcCall } from "./rpc.js";

/** The most compute units a transaction may ask for. */
export const MAX_COMPUTE_UNITS = 1_400_000;

/**
 * Kept out of the fee budget for the base fee (5,000 lamports a signature), for up to four signatures:
 * the bid is chosen before the build, when how many signatures it needs is not known yet.
 */
export const BASE_FEE_RESERVE_LAMPORTS = 20_000n;

export interface PriorityFeeSettings {
  /** Percentile (1-100) of the recent non-zero fees paid on the accounts the transaction writes. */
  percentile: number;
  /** Never bid below this many micro-lamports per unit (the bid when every recent fee was zero). */
  minMicroLamports: number;
  /** Factor applied once per build after the first: build n bids base x escalation^(n-1). */
  escalation: number;
  /** The signing policy's ceilings: the bid stays within both, or the policy would refuse it. */
  maxUnitPriceMicroLamports: number;
  maxPriorityFeeLamports: number;
}

/** The settings from the `signer` config section. */
export function priorityFeeSettings(signer: {
  priorityFeePercentile: number;
  minPriorityFeeMicroLamports: number;
  priorityFeeEscalation: number;
  maxComputeUnitPriceMicroLamports: number;
  maxPriorityFeeLamports: number;
}): PriorityFeeSettings {
  return {
    percentile: signer.priorityFeePercentile,
    minMicroLamports: signer.minPriorityFeeMicroLamports,
    escalation: signer.priorityFeeEscalation,
    maxUnitPriceMicroLamports: signer.maxComputeUnitPriceMicroLamports,
    maxPriorityFeeLamports: signer.maxPriorityFeeLamports,
  };
}

/** Nearest-rank percentile of the non-zero values; undefined when there are none. */
export function nonZeroPercentile(values: readonly number[], percentile: number): number | undefined {
  const sorted = values.filter((v) => v > 0).sort((a, b) => a - b);
  // Stryker disable next-line ConditionalExpression: with no values the lookup below reads index -1, also undefined
  if (sorted.length === 0) return undefined;
  const rank = Math.ceil((percentile / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

/**
 * The compute-unit price to ask for on build `build` (1 for the first), in micro-lamports (pure):
 * the percentile of the recent non-zero fees, at least the floor, raised by the escalation factor per
 * rebuild, then held to the per-unit ceiling and to what keeps unitLimit x price within the
 * priority-fee ceiling. When the unit limit is not known before the build (the service sets it), pass
 * none: the cap then assumes 1,400,000 units, the most any transaction can ask for, so the policy never
 * refuses the price whatever limit the service chose.
 */
export function priorityFeePrice(args: {
  samples: readonly number[];
  build: number;
  settings: PriorityFeeSettings;
  unitLimit?: number;
}): number {
  const { samples, build, settings } = args;
  const base = Math.max(nonZeroPercentile(samples, settings.percentile) ?? 0, settings.minMicroLamports);
  const escalated = Math.ceil(base * settings.escalation ** Math.max(0, build - 1));
  const unitLimit = Math.min(MAX_COMPUTE_UNITS, Math.max(1, args.unitLimit ?? MAX_COMPUTE_UNITS));
  // The policy rounds price x limit / 1e6 up and adds the base fee: the largest price whose fee fits
  // is floor((budget - base fee) x 1e6 / limit).
  const room = BigInt(settings.maxPriorityFeeLamports) - BASE_FEE_RESERVE_LAMPORTS;
  // Stryker disable next-line EqualityOperator: at room 0 both branches give 0
  const feeCap = room > 0n ? Number((room * 1_000_000n) / BigInt(unitLimit)) : 0;
  return Math.min(escalated, settings.maxUnitPriceMicroLamports, feeCap);
}

/** Recent prioritization fees (micro-lamports per unit) paid on transactions writing these accounts. */
export type RecentPriorityFees = (writableAccounts: readonly string[]) => Promise<number[]>;

/**
 * getRecentPrioritizationFees on an RPC node. A failure is logged and answers no samples, so the bid
 * falls back to the floor: a missing estimate must never stop a build.
 */
export function recentPriorityFeesOn(connection: Connection, logger: Logger): RecentPriorityFees {
  return async (writableAccounts) => {
    try {
      const fees = await rpcCall(
        "getRecentPrioritizationFees",
        () =>
          connection.getRecentPrioritizationFees({
            lockedWritableAccounts: writableAccounts.map((a) => new PublicKey(a)),
          }),
        { retries: 1 },
      );
      return fees.map((f) => f.prioritizationFee);
    } catch (error) {
      logger.warn(
        // Stryker disable next-line ConditionalExpression: rpcCall throws only classified errors (Error objects)
        { err: error instanceof Error ? error.message : String(error) },
        "recent priority fees unavailable: bidding the floor",
      );
      return [];
    }
  };
}
