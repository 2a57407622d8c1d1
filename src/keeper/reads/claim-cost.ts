import type { Logger } from "pino";
import {
  type PriorityFeeSettings,
  priorityFeePrice,
  type RecentPriorityFees,
} from "../../chain/priority-fee.js";
import { NATIVE_MINT } from "../../chain/programs.js";

/** A claim's signatures (the wallet's and the service's co-signature) at 5,000 lamports each. */
export const CLAIM_BASE_FEE_LAMPORTS = 10_000n;
/**
 * Compute units a claim is taken to use: the service sets the limit, which Keeper cannot know before
 * the build; 200,000 is Solana's default per instruction and above what a token payout needs.
 */
export const CLAIM_COMPUTE_UNITS = 200_000;
/**
 * The SOL price used when the service gives none: far above any price SOL has traded at, so an
 * unknown price overstates a claim's cost and a doubtful claim is left to the service's free one.
 */
export const CONSERVATIVE_SOL_PRICE_USD = 1_000;
/** How long an estimate is used again: one fee sample and at most one price search a minute. */
export const CLAIM_COST_TTL_MS = 60_000;

const LAMPORTS_PER_SOL = 1_000_000_000n;

/** The SOL price in dollars; undefined or a throw when it is not known (the conservative price is used). */
export type SolPrice = () => Promise<number | undefined>;

export interface ClaimCostDeps {
  recentFees: RecentPriorityFees;
  settings: PriorityFeeSettings;
  solPrice: SolPrice;
  logger: Logger;
  ttlMs?: number;
  nowMs?: () => number;
}

/** The lamports one claim costs at a compute-unit price (micro-lamports a unit), rounded up. */
export function claimCostLamports(unitPriceMicroLamports: number): bigint {
  const priority =
    (BigInt(Math.ceil(unitPriceMicroLamports)) * BigInt(CLAIM_COMPUTE_UNITS) + 999_999n) / 1_000_000n;
  return CLAIM_BASE_FEE_LAMPORTS + priority;
}

/** Lamports at a SOL price, in micro-USD, rounded up (a cost is never understated by rounding). */
export function lamportsToMicroUsd(lamports: bigint, solPriceUsd: number): bigint {
  const microUsdPerSol = BigInt(Math.ceil(solPriceUsd * 1_000_000));
  return (lamports * microUsdPerSol + LAMPORTS_PER_SOL - 1n) / LAMPORTS_PER_SOL;
}

/**
 * What one claim costs now, in micro-USD, for auto-claim's "is it worth the fee" rule: the base fee
 * and the priority fee Keeper would bid (the recent fees' percentile, its floor and ceilings, as for
 * its own builds) at the service's SOL price. Claims create no account on a wallet that holds the
 * payout token already, so no rent is counted. Kept for a minute, shared by every poll of the
 * process; a failure of either read never stops a poll (the floor, the conservative price).
 */
export class ClaimCostEstimator {
  private cached: { microUsd: string; atMs: number } | undefined;
  private pending: Promise<string> | undefined;

  constructor(private readonly deps: ClaimCostDeps) {}

  async microUsd(): Promise<string> {
    const now = (this.deps.nowMs ?? Date.now)();
    if (this.cached && now - this.cached.atMs < (this.deps.ttlMs ?? CLAIM_COST_TTL_MS))
      return this.cached.microUsd;
    this.pending ??= this.estimate().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  private async estimate(): Promise<string> {
    const [samples, price] = await Promise.all([
      this.deps.recentFees([]),
      this.deps.solPrice().catch((error: unknown) => {
        this.deps.logger.warn(
          { err: (error as Error).message },
          "SOL price unknown: claim cost at a conservative price",
        );
        return undefined;
      }),
    ]);
    const unitPrice = priorityFeePrice({
      samples,
      build: 1,
      settings: this.deps.settings,
      unitLimit: CLAIM_COMPUTE_UNITS,
    });
    const solPrice =
      price !== undefined && Number.isFinite(price) && price > 0 ? price : CONSERVATIVE_SOL_PRICE_USD;
    const microUsd = lamportsToMicroUsd(claimCostLamports(unitPrice), solPrice).toString();
    this.cached = { microUsd, atMs: (this.deps.nowMs ?? Date.now)() };
    return microUsd;
  }
}

/** The SOL price from the service's token search (the signer's `TokenPrices`, kept briefly). */
export function solPriceFrom(prices: {
  priced(mints: readonly string[]): Promise<Array<{ usdPrice: number }>>;
}): SolPrice {
  return async () => (await prices.priced([NATIVE_MINT]))[0]?.usdPrice;
}
