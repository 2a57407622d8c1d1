import { contractsText } from "../../src/core/contracts.js";
import { type Intent, intentKeys } from "../../src/core/intent.js";
import { formatUsdCents } from "../../src/core/money.js";
import type { Position } from "../../src/core/schemas/prediction.js";
import { defineStrategy, type StrategyState } from "../../src/core/strategy.js";
import type { NextStep, PositionOutlook } from "../../src/core/strategy-hooks.js";
import { configSchema, type ExitRulesConfig, type Rules } from "./config.js";
import { closeStillDue } from "./recheck.js";
import {
  checkRules,
  dollarsToMicro,
  isOpen,
  nearestExitRule,
  type PositionState,
  readState,
  track,
  valuationOf,
  withheldReason,
} from "./rules.js";
import { rulesFor, selectsOnEvent } from "./selectors.js";
import { exitThresholds } from "./thresholds.js";

/**
 * exit-rules: closes open prediction positions by rule (take-profit, stop-loss, trailing stop, a
 * time before the market closes), with overrides selected by market, event, title, tags, category,
 * provider and side. Tags, category and provider come from `snapshot.events` (the strategy declares
 * it needs them through `needs`); an event missing there matches no selector on them.
 *
 * Hysteresis, exactly: every rule is a Schmitt trigger with a debounce.
 * - A rule *enters* when its metric crosses its threshold (e.g. pnl >= takeProfitPct).
 * - Once entered it *stays* until the metric comes back across the threshold by more than
 *   `hysteresisPct` (percentage points of pnl or of drawdown; percent of the threshold for the price
 *   rules). A flicker inside that band neither resets the count nor stops a close already asked for.
 * - It *fires* once it has entered or stayed on `confirmPolls` consecutive polls; from then on it
 *   asks for the same `close-<position>` intent on every poll while it stays (the ledger refuses the
 *   key while it is in flight or done, and re-admits it, bounded, after a failure), and asks nothing
 *   once the metric left the band. So a price that flickers produces at most one close per position,
 *   and one that merely touches a threshold for fewer than `confirmPolls` polls produces none.
 * - The time rule (`closeBeforeSeconds`) cannot flicker: it fires on the first poll past its time.
 */

export type { ExitRulesConfig, ExitRulesOverride, RuleName, Rules, Selector } from "./config.js";
export { RULE_NAMES } from "./config.js";
export { type ExitOutlook, nearestExitRule } from "./rules.js";
export { matches, rulesFor, specificity } from "./selectors.js";
export { type ExitThresholds, exitThresholds } from "./thresholds.js";

export const STRATEGY_NAME = "exit-rules";

/**
 * What a sale would bring in now, at the bid less the estimated sell fee: the realizable basis's own
 * figure, whatever basis the position's rules decide on (a trader reads what selling would give).
 */
function realizableOf(position: Position, rules: Rules): bigint | null {
  return valuationOf(position, { ...rules, priceBasis: "realizable" }).value;
}

/** The status page's figures for one open position, and what Keeper would do when its rule fires. */
function outlookOf(
  position: Position,
  config: ExitRulesConfig,
  state: StrategyState,
  nowSeconds: number,
): { outlook: PositionOutlook; next?: NextStep } {
  const rules = rulesFor(config, position);
  const realizable = realizableOf(position, rules);
  const nearest = nearestExitRule(config, position, state, nowSeconds);
  const withheld = readState(state)[position.pubkey]?.withheld;
  const outlook: PositionOutlook = {
    ...(realizable === null ? {} : { realizableMicroUsd: realizable.toString() }),
    ...(nearest === undefined ? {} : { nearestRule: nearest.short, nearestDetail: nearest.detail }),
    ...(withheld === undefined ? {} : { nearestDetail: withheld, isAlert: true }),
    ...(nearest?.isEntered ? { isAlert: true } : {}),
  };
  if (nearest === undefined) return { outlook };
  const what = `${contractsText(position)} ${position.isYes ? "YES" : "NO"} of "${position.marketMetadata.title ?? position.marketId}"`;
  const proceeds = realizable === null ? "no bid now" : `about $${formatUsdCents(realizable)} now`;
  const closeTime = position.marketMetadata.closeTime;
  const at =
    nearest.rule === "close-before" && closeTime !== undefined && rules.closeBeforeSeconds !== undefined
      ? { at: closeTime - rules.closeBeforeSeconds }
      : {};
  return { outlook, next: { text: `${nearest.short}: sells ${what} at the bid (${proceeds})`, ...at } };
}
export const exitRules = defineStrategy<ExitRulesConfig>({
  name: STRATEGY_NAME,
  contractVersion: 1,
  description: "Close prediction positions by take-profit, stop-loss, trailing stop or time before close",
  configSchema,
  needs(config) {
    const selectors = config.overrides.map((override) => override.match);
    return {
      events: selectors.some(selectsOnEvent),
      eventProviders: selectors.some((match) => match.provider !== undefined),
    };
  },
  // The market watcher polls a holder when the mark comes near the prices at which a rule enters.
  priceThresholds: exitThresholds,
  // Read before selling: the rule that fired is checked again on the position as read now.
  closeStillDue,
  statusView({ config, state, positions, nowSeconds }) {
    const outlooks: Record<string, PositionOutlook> = {};
    const next: NextStep[] = [];
    for (const position of positions) {
      if (!isOpen(position)) continue;
      const seen = outlookOf(position, config, state, nowSeconds);
      outlooks[position.pubkey] = seen.outlook;
      if (seen.next) next.push(seen.next);
    }
    return { positions: outlooks, next };
  },
  evaluate({ snapshot, state, config, now }) {
    const nowSeconds = Math.floor(now.getTime() / 1000);
    const previous = readState(state);
    const closeAllInFlight = snapshot.inFlight.some((intent) => intent.kind === "closeAll");
    const inFlightKeys = new Set(snapshot.inFlight.map((intent) => intent.key));
    const positionsInFlight = new Set(snapshot.inFlight.map((intent) => intent.positionPubkey));

    const positions: Record<string, PositionState> = {};
    const intents: Intent[] = [];
    const usesEventSelectors = config.overrides.some((override) => selectsOnEvent(override.match));
    for (const position of snapshot.positions) {
      // Positions that left (or cannot be closed any more) leave the state with it.
      if (!isOpen(position)) continue;
      const event = snapshot.events?.[position.eventId];
      if (usesEventSelectors && event === undefined) {
        // Its event could not be read: which override applies is unknown, and a rule an override
        // turned off must not fire. Nothing is done and its state is kept until the event is read.
        const kept = previous[position.pubkey];
        if (kept !== undefined) positions[position.pubkey] = kept;
        continue;
      }
      const rules = rulesFor(config, position, event);
      const tracked = track(previous[position.pubkey], position, rules);
      const { polls, firing, firingRule } = checkRules(position, rules, tracked, nowSeconds);
      positions[position.pubkey] = { ...tracked, polls };

      if (firing === undefined) continue;
      const withheld = withheldReason(position, rules);
      if (withheld !== undefined) {
        positions[position.pubkey] = { ...tracked, polls, withheld: `${firing}; ${withheld}` };
        continue;
      }
      const key = intentKeys.close(position.pubkey);
      const closing = closeAllInFlight || positionsInFlight.has(position.pubkey) || inFlightKeys.has(key);
      if (position.openOrders > 0 || closing) continue;
      // Without a valuation the size (what was paid) tells whether the position is worth a close.
      const worth = valuationOf(position, rules).value ?? BigInt(position.sizeUsd);
      if (worth < dollarsToMicro(rules.minPositionUsd)) continue;
      intents.push({
        kind: "close",
        key,
        wallet: snapshot.wallet,
        strategy: STRATEGY_NAME,
        positionPubkey: position.pubkey,
        reason: firing,
        ...(firingRule === undefined ? {} : { exitRule: firingRule }),
        ...(/^\d+$/.test(position.totalCostUsd) ? { costBasisMicroUsd: position.totalCostUsd } : {}),
        ...(rules.slippageBps === undefined ? {} : { minSellPriceSlippageBps: rules.slippageBps }),
      });
    }
    return { intents, state: { positions } };
  },
});
