import { contractsValueMicroUsd, MICRO_PER_CONTRACT } from "../core/contracts.js";
import { PolicyRefusal } from "../core/errors.js";
import type { Intent } from "../core/intent.js";

/**
 * What a transaction must bring into the wallet, checked on the simulation's post-state: outflow rules
 * alone pass a claim whose payout goes to a stranger (no balance of the wallet falls).
 */
export interface InflowExpectation {
  /** What is paid, for the refusal's detail (`claim payout`, `swap output`, `close proceeds`). */
  what: string;
  /** Mints the amount may arrive in, summed (a payout in USDC or JupUSD: both micro-USD). */
  mints: readonly string[];
  /** Raw units the wallet must gain at least, tolerance already taken off. */
  minRaw: bigint;
  /**
   * Whether gaining nothing at all passes: the proceeds come in a later transaction (see
   * InflowOptions.settledLater); a transaction that does pay must pay the minimum.
   */
  noneAllowed?: boolean;
  /** The refusal's reason when short (default `inflow_short`). */
  reason?: string;
}

/** USDC and JupUSD on mainnet: 6 decimals, one raw unit is one micro-USD. */
export const DEFAULT_PAYOUT_MINTS: readonly string[] = [
  "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
  "JuprjznTrTSp2UFa3ZBUFgwdAmtZCq4MQCwysN55USD",
];

export interface InflowOptions {
  /** Mints a claim or close pays in (raw units of micro-USD). */
  payoutMints: readonly string[];
  /** Taken off a claim's payout (rounding) and a close's minimum (its fees are the service's estimate). */
  toleranceBps: number;
  /**
   * Kinds whose proceeds may come in a later transaction, so one paying nothing at once passes: a
   * close on the live service places a sell order that is filled later. A swap is not one of them: it
   * pays its output in its own transaction (live and on the sandbox), so one that pays nothing is
   * refused whatever the config says.
   */
  settledLater?: readonly SettledLaterKind[];
}

export const SETTLED_LATER_KINDS = ["close"] as const;
export type SettledLaterKind = (typeof SETTLED_LATER_KINDS)[number];

/** What the build of an intent said it brings in (the ledger row keeps both). */
export interface BuildFigures {
  /** A claim's payout or a close's expected proceeds, micro-USD. */
  amountMicroUsd?: string;
  /** A swap's `otherAmountThreshold` or a close's minimum proceeds, raw units. */
  minInflowRaw?: string;
}

/**
 * The inflow an intent's transaction must show, or undefined for kinds that bring nothing in at once
 * (orders and their cancels: what comes back is bounded by the outflow rules). A claim's payout is
 * known to the micro-USD (the strategy's figure from the positions list and the build's): less the
 * tolerance, for rounding on the live service. A
 * swap's threshold already has its slippage taken off: exact. A close's minimum is the order's minimum
 * sell price times its contracts less the estimated fees: less the tolerance. A claim with no figure
 * at all must still pay something. A kind in `settledLater` may pay nothing at once.
 */
export function expectedInflow(
  intent: Intent,
  built: BuildFigures,
  options: InflowOptions,
): InflowExpectation | undefined {
  switch (intent.kind) {
    case "claim": {
      // A resolved position's payout is fixed: the larger figure wins where the two disagree.
      // The tolerance is taken off: a live payout that differs from its listed figure by rounding
      // must not leave every claim refused; one redirected elsewhere still brings in nothing.
      let figureRaw = 0n;
      for (const figure of [intent.expectedPayoutMicroUsd, built.amountMicroUsd]) {
        // Stryker disable next-line EqualityOperator: taking an equal figure again changes nothing
        if (isRaw(figure) && BigInt(figure) > figureRaw) figureRaw = BigInt(figure);
      }
      const minRaw = lessTolerance(figureRaw, options.toleranceBps);
      // Stryker disable next-line EqualityOperator: at 1 both branches give 1
      return { what: "claim payout", mints: options.payoutMints, minRaw: minRaw > 1n ? minRaw : 1n };
    }
    case "swap": {
      const known = isRaw(built.minInflowRaw);
      return {
        what: known ? "swap output" : "swap output (no threshold known)",
        mints: [intent.outputMint],
        minRaw: known ? BigInt(built.minInflowRaw as string) : 1n,
      };
    }
    case "close":
      if (!isRaw(built.minInflowRaw)) return undefined;
      return {
        what: "close proceeds",
        mints: options.payoutMints,
        minRaw: lessTolerance(BigInt(built.minInflowRaw), options.toleranceBps),
        ...later("close", options),
      };
    // Stryker disable next-line ConditionalExpression: without this case the switch falls out to the same undefined
    default:
      return undefined;
  }
}

/**
 * A swap's expectation held to Keeper's floor (the signer's, see src/signer/swap-floor.ts): the output
 * mint only, at least the floor, refused below it as `swap_below_floor`. A swap always pays at once.
 */
export function heldToSwapFloor(
  expectation: InflowExpectation | undefined,
  floor: { outputMint: string; minRaw: bigint; what: string },
): InflowExpectation {
  const minRaw = expectation && expectation.minRaw > floor.minRaw ? expectation.minRaw : floor.minRaw;
  return {
    what: floor.what,
    mints: [floor.outputMint],
    minRaw,
    reason: "swap_below_floor",
  };
}

function later(kind: SettledLaterKind, options: InflowOptions): { noneAllowed?: true } {
  return options.settledLater?.includes(kind) ? { noneAllowed: true } : {};
}

/** `amount` less `bps` basis points, rounded down. */
export function lessTolerance(amount: bigint, bps: number): bigint {
  return (amount * BigInt(10_000 - bps)) / 10_000n;
}

/**
 * Refuses a transaction whose simulation brings in less than expected. `gained` is the wallet's net
 * gain per mint (SOL as the native mint, in lamports), across its kept token accounts.
 */
export function checkInflow(expectation: InflowExpectation, gained: ReadonlyMap<string, bigint>): void {
  let total = 0n;
  for (const mint of new Set(expectation.mints)) {
    const got = gained.get(mint) ?? 0n;
    // Stryker disable next-line EqualityOperator: adding a zero gain changes nothing
    if (got > 0n) total += got;
  }
  if (total >= expectation.minRaw) return;
  if (total === 0n && expectation.noneAllowed) return;
  throw new PolicyRefusal(
    expectation.reason ?? "inflow_short",
    `simulation: the ${expectation.what} brings the wallet ${total} of mint ${expectation.mints.join(" or ")}, expected at least ${expectation.minRaw}`,
  );
}

/** The service fills whole hundredths of a contract (api-live): a sale of 10.555 sells 10.55. */
const FILL_STEP_MICRO = 10_000n;

/**
 * A close's minimum proceeds: contracts x minimum sell price, less the estimated fees (micro-USD). The
 * contracts are the exact count (`contractsMicro`, floored to the fill step) where the order carries
 * it, else the floored whole count.
 */
export function closeMinimumMicroUsd(order: {
  contracts?: string | null;
  contractsMicro?: string | null | undefined;
  minSellPriceUsd?: string | null;
  estimatedTotalFeeUsd?: string | null;
}): string | undefined {
  const { contracts, contractsMicro, minSellPriceUsd, estimatedTotalFeeUsd } = order;
  if (!isRaw(minSellPriceUsd) || !isRaw(estimatedTotalFeeUsd)) return undefined;
  let micro: bigint;
  if (isRaw(contractsMicro)) micro = BigInt(contractsMicro) - (BigInt(contractsMicro) % FILL_STEP_MICRO);
  else if (isRaw(contracts)) micro = BigInt(contracts) * MICRO_PER_CONTRACT;
  else return undefined;
  const net = contractsValueMicroUsd(micro, BigInt(minSellPriceUsd)) - BigInt(estimatedTotalFeeUsd);
  // Stryker disable next-line EqualityOperator: at 0 both branches give 0
  return (net > 0n ? net : 0n).toString();
}

export function isRaw(value: string | null | undefined): value is string {
  return value !== undefined && value !== null && /^\d+$/.test(value);
}
