import type { EventDetails } from "../../src/core/event-details.js";
import type { Snapshot } from "../../src/core/snapshot.js";
import {
  baseRules,
  EVENT_SELECTOR_KEYS,
  type ExitRulesConfig,
  type ExitRulesOverride,
  mergeRules,
  type Rules,
  SELECTOR_KEYS,
  type Selector,
} from "./config.js";

type Position = Snapshot["positions"][number];

/**
 * Specificity: marketId (64) > eventId (32) > titleContains (16) > tags (8) > category (4) >
 * provider (2) > side (1), summed over the keys a selector sets. Each weight is larger than all
 * smaller ones together, so comparing sums compares the most specific key first: `{ marketId }`
 * beats `{ eventId, titleContains, tags, category, provider, side }`, `{ tags }` beats
 * `{ category, provider }`, and `{ category, side }` beats `{ category }`. Equal specificity: the
 * override listed first wins. A selector matches only when every key it sets matches.
 */
const SPECIFICITY: Record<(typeof SELECTOR_KEYS)[number], number> = {
  marketId: 64,
  eventId: 32,
  titleContains: 16,
  tags: 8,
  category: 4,
  provider: 2,
  side: 1,
};

export function specificity(match: Selector): number {
  return SELECTOR_KEYS.reduce((sum, key) => sum + (match[key] === undefined ? 0 : SPECIFICITY[key]), 0);
}

/** `event`: the details of the position's event, undefined when unknown (then no event key matches). */
export function matches(match: Selector, position: Position, event: EventDetails | undefined): boolean {
  if (match.marketId !== undefined && match.marketId !== position.marketId) return false;
  if (match.eventId !== undefined && match.eventId !== position.eventId) return false;
  if (match.side !== undefined && match.side !== (position.isYes ? "yes" : "no")) return false;
  if (match.titleContains !== undefined) {
    const needle = match.titleContains.toLowerCase();
    const titles = [position.marketMetadata.title, position.eventMetadata.title];
    if (!titles.some((title) => title?.toLowerCase().includes(needle))) return false;
  }
  if (selectsOnEvent(match) && event === undefined) return false;
  if (match.category !== undefined && match.category !== event?.category.toLowerCase()) return false;
  if (match.provider !== undefined && match.provider !== event?.provider?.toLowerCase()) return false;
  if (match.tags !== undefined) {
    const held = new Set(event?.tags.map((tag) => tag.toLowerCase()));
    if (!match.tags.some((tag) => held.has(tag.toLowerCase()))) return false;
  }
  return true;
}

/** The rules for one position: the most specific matching override over the global rules. */
export function rulesFor(config: ExitRulesConfig, position: Position, event?: EventDetails): Rules {
  let winner: ExitRulesOverride | undefined;
  for (const override of config.overrides) {
    if (!matches(override.match, position, event)) continue;
    if (!winner || specificity(override.match) > specificity(winner.match)) winner = override;
  }
  return winner ? mergeRules(baseRules(config), winner.rules) : baseRules(config);
}

/** The selector reads the event's details (tags, category or provider), not only the position. */
export function selectsOnEvent(match: Selector): boolean {
  return EVENT_SELECTOR_KEYS.some((key) => match[key] !== undefined);
}
