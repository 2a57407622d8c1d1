import type { CloseCheck, CloseCheckInput } from "../../src/core/strategy-hooks.js";
import { type ExitRulesConfig, RULE_NAMES, type RuleName } from "./config.js";
import { readState, ruleChecks, track, withheldReason } from "./rules.js";
import { rulesFor, selectsOnEvent } from "./selectors.js";

/**
 * Read before selling: the engine reads the position again right before building a close, and asks
 * whether the rule that fired still holds on it. It does while the rule stays inside its hysteresis
 * band (as `evaluate` would keep asking for the close); it does not once the figures moved back
 * out, or on the realizable basis once no one bids. A close that names no rule of this strategy (a
 * close-all's) is left as it is.
 */
export function closeStillDue(input: CloseCheckInput<ExitRulesConfig>): CloseCheck {
  const { config, position, exitRule, event } = input;
  const rule = RULE_NAMES.find((name) => name === exitRule);
  if (rule === undefined) return { isDue: true, reason: "the close names no rule of exit-rules" };
  if (event === undefined && config.overrides.some((override) => selectsOnEvent(override.match)))
    // Which override applies is unknown without the event: the rule is not judged on a guess.
    return { isDue: true, reason: "event details not read: the rule is not checked again" };
  const rules = rulesFor(config, position, event);
  const withheld = withheldReason(position, rules);
  if (withheld !== undefined) return { isDue: false, reason: `${rule}: ${withheld}` };
  const tracked = track(readState(input.state)[position.pubkey], position, rules);
  const check = ruleChecks(position, rules, tracked, input.nowSeconds).find((c) => c.rule === rule);
  if (check === undefined) return { isDue: false, reason: notCheckable(rule) };
  const detail = `${rule}: ${check.metric} (${check.threshold})`;
  return check.stays ? { isDue: true, reason: detail } : { isDue: false, reason: `no longer met: ${detail}` };
}

function notCheckable(rule: RuleName): string {
  return `${rule}: the rule is off for this position or the service gave no figure for it`;
}
