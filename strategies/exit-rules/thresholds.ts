import type { EventDetails } from "../../src/core/event-details.js";
import { usdToMicro } from "../../src/core/money.js";
import type { Snapshot } from "../../src/core/snapshot.js";
import type { ExitRulesConfig } from "./config.js";
import { dollarsToMicro, isOpen, scaleByPct } from "./rules.js";
import { rulesFor } from "./selectors.js";

type Position = Snapshot["positions"][number];

/**
 * The mark prices (micro-USD of the held side) at which this position's exit rules would enter,
 * for a watcher that sees market prices between polls and wants to poll the wallet in time. Only
 * what follows from the position and the config: `above` is the lowest price at which a take-profit
 * enters, `below` the highest at which a stop-loss enters, `trailingStopPct` the drawdown from the
 * peak that arms a trailing stop (its activation and peak live in the strategy's state, so a watcher
 * treats it as armed). The pnl rules become prices through the average price paid (the pnl percent
 * before fees is (mark - avg) / avg); after fees the true threshold is a little further, which the
 * watcher's band covers. On the realizable basis each price is raised to the mark that nets it
 * after the estimated sell fee. `atSeconds` is when `closeBeforeSeconds` enters (the market's close
 * less those seconds), whatever the price. Undefined for a position the strategy does not watch or
 * would not close (an order on it, worth less than `minPositionUsd`) or has no rule for.
 */
export interface ExitThresholds {
  above?: string;
  below?: string;
  trailingStopPct?: number;
  atSeconds?: number;
}

export function exitThresholds(
  config: ExitRulesConfig,
  position: Position,
  event?: EventDetails,
): ExitThresholds | undefined {
  // The strategy leaves a position with an order on it alone, and one worth less than its minimum:
  // no price makes it act until a sweep shows otherwise.
  if (!isOpen(position) || position.openOrders > 0) return undefined;
  const rules = rulesFor(config, position, event);
  if (BigInt(position.valueUsd ?? position.sizeUsd) < dollarsToMicro(rules.minPositionUsd)) return undefined;
  const avg = BigInt(position.avgPriceUsd);
  const ups: bigint[] = [];
  const downs: bigint[] = [];
  if (rules.takeProfitPriceUsd !== undefined) ups.push(usdToMicro(rules.takeProfitPriceUsd));
  if (rules.stopLossPriceUsd !== undefined) downs.push(usdToMicro(rules.stopLossPriceUsd));
  if (avg > 0n && rules.takeProfitPct !== undefined) ups.push(scaleByPct(avg, rules.takeProfitPct));
  if (avg > 0n && rules.stopLossPct !== undefined) downs.push(scaleByPct(avg, -rules.stopLossPct));
  if (rules.priceBasis === "realizable") {
    // The rules read the bid net of the sell fee: the mark must be at least the gross price that
    // nets the threshold (the bid sits at or below the mark; the sweep catches a wider spread).
    const gross = (net: bigint) => (net * 10_000n) / BigInt(Math.max(1, 10_000 - rules.estimatedSellFeeBps));
    ups.splice(0, ups.length, ...ups.map(gross));
    downs.splice(0, downs.length, ...downs.map(gross));
  }
  const out: ExitThresholds = {};
  // The nearest threshold on each side enters first.
  ups.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  downs.sort((a, b) => (a > b ? -1 : a < b ? 1 : 0));
  if (ups[0] !== undefined) out.above = ups[0].toString();
  if (downs[0] !== undefined) out.below = downs[0].toString();
  if (rules.trailingStopPct !== undefined) out.trailingStopPct = rules.trailingStopPct;
  // The time rule acts whatever the price: its owner is polled when it comes, not at its next sweep.
  // Whole seconds: the service's close time is only known to be a number.
  const closeTime = position.marketMetadata.closeTime;
  const at =
    rules.closeBeforeSeconds !== undefined && closeTime !== undefined
      ? Math.floor(closeTime - rules.closeBeforeSeconds)
      : undefined;
  if (at !== undefined && Number.isSafeInteger(at) && at > 0) out.atSeconds = at;
  return Object.keys(out).length > 0 ? out : undefined;
}
