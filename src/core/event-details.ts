/**
 * What Keeper knows of a prediction event beyond the `eventMetadata` a position carries: the fields
 * of GET /prediction/v1/events/{eventId} that strategies select on. Positions do not carry them, so
 * the snapshot holds them only when a strategy declares it needs them (see `SnapshotNeeds` in
 * strategy-hooks.ts).
 */

/**
 * The usual event categories (the Event resource's `category`, the events list's filter). Not a closed
 * set: the service may send others, which Keeper reads and selects on as plain strings.
 */
export const KNOWN_EVENT_CATEGORIES = [
  "all",
  "crypto",
  "sports",
  "politics",
  "esports",
  "culture",
  "economics",
  "tech",
] as const;
export type KnownEventCategory = (typeof KNOWN_EVENT_CATEGORIES)[number];
export type EventCategory = string;

/**
 * The live service's data providers today (the `provider` query parameter of the events list and
 * search; `polymarket` is its default). New providers appear: any non-empty name is sent and read.
 */
export const KNOWN_EVENT_PROVIDERS = ["polymarket", "kalshi", "bisonfi"] as const;
export type EventProvider = string;

export interface EventDetails {
  readonly category: EventCategory;
  readonly subcategory: string;
  /** The event's tags as the service gives them; empty when it gives none. */
  readonly tags: readonly string[];
  /**
   * The provider the event comes from, when it could be learnt (the Event resource has no provider
   * field): absent means unknown, and then no provider selector matches the event.
   */
  readonly provider?: EventProvider;
}
