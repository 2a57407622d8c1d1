import { z } from "zod";
import { contractsMicroOf, contractsValueMicroUsd } from "../../src/core/contracts.js";
import { type Intent, intentKeys } from "../../src/core/intent.js";
import type { Snapshot } from "../../src/core/snapshot.js";
import { defineStrategy } from "../../src/core/strategy.js";

/**
 * An example of a user strategy (see "Writing your own strategy" in ../README.md): close a
 * prediction position once its value reached a multiple of what it cost, e.g. take the money when
 * it doubled. Pure: everything it knows comes from the snapshot; it keeps no state.
 */

const MULTIPLE_RULE = "expected a multiple above 1 and at most 100, such as 2";
const FEE_RULE = "expected a whole number of basis points from 0 to 10000";
const configSchema = z.strictObject({
  /** Close when the value >= multiple x totalCostUsd. */
  multiple: z.number({ error: MULTIPLE_RULE }).gt(1, MULTIPLE_RULE).max(100, MULTIPLE_RULE).default(2),
  /** Leave positions that cost less than this many dollars alone. */
  minCostUsd: z.number({ error: "expected dollars >= 0" }).min(0, "expected dollars >= 0").default(0),
  /**
   * `realizable`: the value is what a sell would bring in (contracts x the bid, `sellPriceUsd`, less
   * `estimatedSellFeeBps`); no bid, no close. `mark`: the service's `valueUsd` (contracts x the mark).
   */
  priceBasis: z
    .enum(["realizable", "mark"], { error: 'expected "realizable" or "mark"' })
    .default("realizable"),
  estimatedSellFeeBps: z
    .number({ error: FEE_RULE })
    .int(FEE_RULE)
    .min(0, FEE_RULE)
    .max(10_000, FEE_RULE)
    .default(150),
});

export type CloseAtMultipleConfig = z.infer<typeof configSchema>;

const NAME = "close-at-multiple";
const SCALE = 1_000_000n; // the multiple, kept exact to 6 decimals
/** A contract pays at most $1: a threshold above it can never be reached. */
const MAX_PRICE_MICRO_USD = 1_000_000n;

type Position = Snapshot["positions"][number];

function isOpen(position: Position): boolean {
  return position.marketMetadata.status === "open" && !position.claimable && !position.claimed;
}

/** What the position is worth on the configured basis, micro-USD; null when nothing can be said. */
function worthOf(position: Position, config: CloseAtMultipleConfig): bigint | null {
  if (config.priceBasis === "mark") return position.valueUsd === null ? null : BigInt(position.valueUsd);
  if (position.sellPriceUsd === null) return null;
  const gross = contractsValueMicroUsd(contractsMicroOf(position), BigInt(position.sellPriceUsd));
  return gross - (gross * BigInt(config.estimatedSellFeeBps) + 9_999n) / 10_000n;
}

export const closeAtMultiple = defineStrategy<CloseAtMultipleConfig>({
  name: NAME,
  contractVersion: 1,
  description: "Close a position once its value reached a multiple of its cost",
  configSchema,
  evaluate({ snapshot, state, config }) {
    const multiple = BigInt(Math.round(config.multiple * 1_000_000));
    const minCost = BigInt(Math.round(config.minCostUsd * 1_000_000));
    // Another strategy (or a close-all) may already be closing a position: leave it to that one.
    const busy = new Set(snapshot.inFlight.map((intent) => intent.positionPubkey ?? intent.key));
    const closeAllInFlight = snapshot.inFlight.some((intent) => intent.kind === "closeAll");
    const intents: Intent[] = [];
    for (const position of snapshot.positions) {
      if (!isOpen(position) || position.openOrders > 0 || closeAllInFlight || busy.has(position.pubkey))
        continue;
      const cost = BigInt(position.totalCostUsd);
      const value = worthOf(position, config);
      // No valuation (null: no bid, a closed market) is no reason to close.
      if (value === null) continue;
      if (cost <= 0n || cost < minCost || value * SCALE < cost * multiple) continue;
      intents.push({
        kind: "close",
        // The same key as exit-rules uses: two strategies asking to close one position close it once.
        key: intentKeys.close(position.pubkey),
        wallet: snapshot.wallet,
        strategy: NAME,
        positionPubkey: position.pubkey,
        costBasisMicroUsd: position.totalCostUsd,
        reason: `${NAME}: value ${value} >= ${config.multiple} x cost ${cost} (micro-USD)`,
      });
    }
    return { intents, state };
  },
  /**
   * A hook of the contract: the mark price at which this position would be closed, so the market
   * watcher polls the wallet as soon as the market gets there instead of at the next sweep. The
   * value is about contracts x mark (the bid is at or below it) and the cost contracts x the average
   * price paid, so the value reaches the multiple at mark = multiple x average price at the earliest
   * (fees and the spread make it higher; `evaluate` decides on the real figures).
   */
  priceThresholds(config, position) {
    if (!isOpen(position) || position.openOrders > 0) return undefined;
    const cost = BigInt(position.totalCostUsd);
    if (cost <= 0n || cost < BigInt(Math.round(config.minCostUsd * 1_000_000))) return undefined;
    const above = (BigInt(position.avgPriceUsd) * BigInt(Math.round(config.multiple * 1_000_000))) / SCALE;
    return above > 0n && above <= MAX_PRICE_MICRO_USD ? { above: above.toString() } : undefined;
  },
});

export default closeAtMultiple;
