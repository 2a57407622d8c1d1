import { z } from "zod";
import { contractsMicroOf } from "../src/core/contracts.js";
import { type Intent, intentKeys } from "../src/core/intent.js";
import { formatUsd } from "../src/core/money.js";
import type { Market } from "../src/core/schemas/prediction.js";
import type { Snapshot } from "../src/core/snapshot.js";
import { defineStrategy } from "../src/core/strategy.js";
import type { IndexClaim, IndexedWinner } from "../src/core/strategy-hooks.js";

/**
 * What a claim is taken to cost when the snapshot carries no estimate (a harness without the chain):
 * $0.01, several times what a claim's network fee is at any SOL price seen so far, so a payout that
 * clears it at the default multiple is worth its fee whatever the real cost.
 */
export const DEFAULT_CLAIM_COST_MICRO_USD = 10_000n;

const configSchema = z.strictObject({
  /** Skip payouts below this many dollars. */
  minPayoutUsd: z.number().min(0, "expected dollars >= 0").default(0),
  /**
   * Claim at once only when the payout is worth more than this many times the claim's cost; a
   * smaller one is left to the service's own free claim. 0 claims every payout at once. The default,
   * 500, waits a day for the free claim on payouts under about $1 while a claim costs about $0.002:
   * a day sooner is not worth a fee that size on them.
   */
  minPayoutToCostRatio: z.number().min(0, "expected a ratio >= 0").max(1_000_000).default(500),
});

export type AutoClaimConfig = z.infer<typeof configSchema>;

type Position = Snapshot["positions"][number];

/**
 * A winning position not yet claimed: the service says `claimable`, or its market's result is the
 * side held (the service's own client reads only that). Either is a candidate: a claim asked for
 * before the market is settled is answered "not yet" (market_not_settled) and asked again later.
 */
export function isClaimCandidate(position: Position): boolean {
  if (position.claimed) return false;
  if (position.claimable) return true;
  const result = position.marketMetadata.result;
  return result != null && result === (position.isYes ? "yes" : "no");
}

/**
 * A Forecast position (provider `bisonfi`): it has no claim step, the service settles it by itself.
 * Known by its provider where the position, its market or its event names one, or by the fields only
 * Forecast markets carry (`outcomeMint`, `lifecycleStatus`).
 */
export function isForecastPosition(position: Position, snapshot?: Pick<Snapshot, "events">): boolean {
  const record = position as Record<string, unknown>;
  const event = position.eventMetadata as Record<string, unknown>;
  const providers = [record.provider, event.provider, snapshot?.events?.[position.eventId]?.provider];
  if (providers.some(isForecastProvider)) return true;
  return isForecastMarket(position.marketMetadata);
}

function isForecastProvider(provider: unknown): boolean {
  return typeof provider === "string" && provider.toLowerCase() === "bisonfi";
}

/** A Forecast market: its provider says so, or it carries the fields only Forecast markets have. */
export function isForecastMarket(market: Market | Position["marketMetadata"]): boolean {
  const fields = market as Record<string, unknown>;
  if (isForecastProvider(fields.provider)) return true;
  return typeof fields.outcomeMint === "string" || typeof fields.lifecycleStatus === "string";
}

/**
 * The payout in micro-USD: a winning contract pays $1, so the exact count (`contractsMicro`) where the
 * service sends it, else `payoutUsd` (never the floored `contracts`).
 */
export function payoutMicroUsdOf(position: Position): bigint {
  return position.contractsMicro !== undefined ? contractsMicroOf(position) : BigInt(position.payoutUsd);
}

/** Worth claiming now: the payout is worth more than `ratio` times the cost (bigint-exact). */
export function isWorthClaiming(payoutMicroUsd: bigint, costMicroUsd: bigint, ratio: number): boolean {
  // Ratios are compared in millionths so that a fractional ratio (2.5) stays exact.
  const ratioMicro = BigInt(Math.round(ratio * 1_000_000));
  return payoutMicroUsd * 1_000_000n > costMicroUsd * ratioMicro;
}

/** The price of one claim: the estimate, or the default when there is none. */
function claimCostOf(estimate: string | undefined): bigint {
  return estimate === undefined ? DEFAULT_CLAIM_COST_MICRO_USD : BigInt(estimate);
}

/**
 * The one rule, for a poll's position and an index entry alike: nothing below `minPayoutUsd`; a claim
 * when the payout is worth the fee; else the record that it is left to the service's free claim.
 */
function claimOf(
  winner: { wallet: string; position: string; payout: bigint; reason: string },
  config: AutoClaimConfig,
  cost: bigint,
): Intent | undefined {
  if (winner.payout < BigInt(Math.round(config.minPayoutUsd * 1_000_000))) return undefined;
  const base = {
    kind: "claim" as const,
    wallet: winner.wallet,
    strategy: "auto-claim",
    positionPubkey: winner.position,
    expectedPayoutMicroUsd: winner.payout.toString(),
  };
  if (isWorthClaiming(winner.payout, cost, config.minPayoutToCostRatio))
    return { ...base, key: intentKeys.claim(winner.position), reason: winner.reason };
  return {
    ...base,
    key: intentKeys.leftToService(winner.position),
    leaveToService: true,
    reason: `left to the service's free claim: payout $${formatUsd(winner.payout)} is not worth more than ${config.minPayoutToCostRatio}x the claim's cost ($${formatUsd(cost)})`,
  };
}

/**
 * The same rule on an index entry, when the watcher sees its market resolve on the side held: the
 * payout is the exact count at $1 a contract, so an entry without `contractsMicro` is left to a poll
 * (undefined); a Forecast market's winner is settled by the service, never claimed.
 */
export function claimFromIndex(input: {
  config: AutoClaimConfig;
  entry: IndexedWinner;
  market: Market;
  claimCostMicroUsd?: string;
}): IndexClaim | undefined {
  const { config, entry, market } = input;
  if (isForecastMarket(market)) return { reason: "a Forecast position settles without a claim" };
  if (market.result !== entry.side) return { reason: "not the winning side" };
  if (entry.contractsMicro === undefined) return undefined;
  const intent = claimOf(
    {
      wallet: entry.wallet,
      position: entry.position,
      payout: BigInt(entry.contractsMicro),
      reason: `market resolved ${market.result}, the side held (from the holdings index)`,
    },
    config,
    claimCostOf(input.claimCostMicroUsd),
  );
  return intent ? { intent } : { reason: "payout below minPayoutUsd" };
}

interface LeftState {
  /** Positions whose claim was left to the service: asked for once, not on every poll. */
  left?: string[];
}

/**
 * Claims each winning position once, when its payout is worth the fee: a claim candidate, not a
 * Forecast position, no claim of it in flight, a payout above `minPayoutUsd` and worth more than
 * `minPayoutToCostRatio` times the claim's cost (`snapshot.claimCostMicroUsd`). A smaller payout is
 * left to the service, which claims every winner itself, free, a day after settlement: that is
 * recorded once (`left_to_service`) under a key of its own (`claim-<position>-left`), so the claim's
 * key stays free. The intent key (`claim-<position>`) makes a second claim of the
 * same position impossible even when two polls see it claimable before the first claim lands.
 */
export const autoClaim = defineStrategy<AutoClaimConfig>({
  name: "auto-claim",
  contractVersion: 1,
  description: "Claim the payout of every winning position worth its fee; leave the rest to the service",
  configSchema,
  needs: () => ({ claimCost: true }),
  claimFromIndex,
  evaluate({ snapshot, state, config }) {
    const cost = claimCostOf(snapshot.claimCostMicroUsd);
    const inFlight = new Set(snapshot.inFlight.map((i) => i.key));
    const wasLeft = new Set((state as LeftState).left ?? []);
    const left: string[] = [];
    const intents: Intent[] = [];
    for (const position of snapshot.positions) {
      if (!isClaimCandidate(position) || isForecastPosition(position, snapshot)) continue;
      const key = intentKeys.claim(position.pubkey);
      if (inFlight.has(key)) continue;
      const intent = claimOf(
        {
          wallet: snapshot.wallet,
          position: position.pubkey,
          payout: payoutMicroUsdOf(position),
          reason: position.claimable ? "position is claimable" : "market resolved on the side held",
        },
        config,
        cost,
      );
      if (!intent) continue;
      if (intent.kind === "claim" && intent.leaveToService) {
        left.push(position.pubkey);
        if (wasLeft.has(position.pubkey)) continue;
      }
      intents.push(intent);
    }
    return { intents, state: { ...state, left } };
  },
});
