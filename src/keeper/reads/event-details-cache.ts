import { LRUCache } from "lru-cache";
import pLimit from "p-limit";
import type { Logger } from "pino";
import { PermanentError } from "../../core/errors.js";
import { type EventDetails, type EventProvider, KNOWN_EVENT_PROVIDERS } from "../../core/event-details.js";
import type { Event } from "../../core/schemas/prediction.js";

/** The reads the cache makes: the API client's prediction area in production, a fake in tests. */
export interface EventReader {
  getEvent(eventId: string): Promise<Event>;
  searchEvents(params: { query: string; provider: EventProvider; limit: number }): Promise<{ data: Event[] }>;
}

/** An event a position belongs to: its id and, for the provider search, its title. */
export interface EventRef {
  readonly eventId: string;
  readonly title: string;
}

/** `cached`: answered from memory (or from a fetch already under way); `failed`: GET /events/{id} failed. */
export type EventLookupOutcome = "cached" | "fetched" | "failed";

export interface EventDetailsCacheOptions {
  readonly reader: EventReader;
  readonly logger: Logger;
  /** Learn each event's provider too (some strategy selects on it). */
  readonly withProvider: boolean;
  /** How long fetched details are kept. Default 10 minutes. */
  readonly ttlMs?: number;
  /** How long a failed fetch (or provider search) is remembered before it is tried again. Default 1 minute. */
  readonly failureTtlMs?: number;
  /** Events kept; the least recently used goes first. Default 2000. */
  readonly maxEntries?: number;
  /** Events fetched at once by one lookup. Default 4. */
  readonly concurrency?: number;
  readonly now?: () => number;
  readonly onLookup?: (outcome: EventLookupOutcome) => void;
}

interface Entry {
  /** Undefined: the fetch failed; the event's positions match no event selector until it is tried again. */
  readonly details: EventDetails | undefined;
}

const SEARCH_QUERY_MAX = 200;
const SEARCH_LIMIT = 20;

/**
 * Category, subcategory, tags and (optionally) provider of events, fetched through
 * GET /prediction/v1/events/{eventId} and kept in memory with a TTL and an LRU bound, so a wallet's
 * poll costs no request for events seen in the last `ttlMs`. One process-wide instance is shared by
 * every poll; concurrent polls asking for the same event share one fetch. Never throws: an event
 * that cannot be fetched is logged, counted and left out of the answer.
 *
 * The provider: the Event resource has no provider field. Keeper reads `metadata.provider` when it
 * holds one of the spec's providers (the sandbox puts it there; the live service's documented
 * `metadata` does not list it), and otherwise searches each provider for the event's title
 * (GET /events/search?provider=...) and takes the provider whose results hold the event id. Found
 * nowhere, the provider stays unknown.
 */
export class EventDetailsCache {
  readonly #options: EventDetailsCacheOptions;
  readonly #ttlMs: number;
  readonly #failureTtlMs: number;
  /** lru-cache keeps the TTL, the LRU bound, and shares one fetch among concurrent askers. */
  readonly #entries: LRUCache<string, Entry, EventRef>;

  constructor(options: EventDetailsCacheOptions) {
    this.#options = options;
    this.#ttlMs = options.ttlMs ?? 600_000;
    this.#failureTtlMs = options.failureTtlMs ?? 60_000;
    const now = options.now;
    this.#entries = new LRUCache<string, Entry, EventRef>({
      max: Math.max(1, options.maxEntries ?? 2_000),
      ttl: this.#ttlMs,
      // Read the clock on every check, so a test's clock (and a TTL of a few ms) is exact.
      ttlResolution: 0,
      ...(now ? { perf: { now } } : {}),
      fetchMethod: async (_eventId, _stale, { context, options: setOptions }) => {
        const { entry, ttlMs } = await this.#fetch(context);
        setOptions.ttl = ttlMs;
        return entry;
      },
    });
  }

  /** Events held in memory (fresh or not yet evicted). */
  get size(): number {
    return this.#entries.size;
  }

  /** Details of each distinct event, by event id; events whose fetch failed are absent. */
  async detailsOf(refs: readonly EventRef[]): Promise<Record<string, EventDetails>> {
    const titles = new Map<string, string>();
    for (const ref of refs) if (!titles.has(ref.eventId)) titles.set(ref.eventId, ref.title);
    const out: Record<string, EventDetails> = {};
    const limit = pLimit(Math.max(1, this.#options.concurrency ?? 4));
    await Promise.all(
      [...titles].map(([eventId, title]) =>
        limit(async () => {
          const status: LRUCache.Status<string, Entry, EventRef> = {};
          const entry = await this.#entries.fetch(eventId, { context: { eventId, title }, status });
          // A hit, or a fetch another poll already has under way: no request of this lookup's own.
          if (status.fetch === "hit" || status.fetch === "inflight") this.#options.onLookup?.("cached");
          if (entry?.details) out[eventId] = entry.details;
        }),
      ),
    );
    return out;
  }

  /** One event's details, and how long to keep the answer (a failure is tried again sooner). */
  async #fetch(ref: EventRef): Promise<{ entry: Entry; ttlMs: number }> {
    const { reader, logger, onLookup } = this.#options;
    let event: Event;
    try {
      event = await reader.getEvent(ref.eventId);
    } catch (error) {
      onLookup?.("failed");
      logger.warn(
        { eventId: ref.eventId, err: (error as Error).message },
        "event details unavailable: its positions match no category, tags or provider selector",
      );
      // An event the service refuses (e.g. 404) is not asked for again until the normal TTL.
      return {
        entry: { details: undefined },
        ttlMs: error instanceof PermanentError ? this.#ttlMs : this.#failureTtlMs,
      };
    }
    onLookup?.("fetched");
    const details: EventDetails = {
      category: event.category,
      subcategory: event.subcategory,
      tags: event.tags ?? [],
    };
    if (!this.#options.withProvider) return { entry: { details }, ttlMs: this.#ttlMs };
    const fromMetadata = asProvider(event.metadata?.provider);
    if (fromMetadata)
      return { entry: { details: { ...details, provider: fromMetadata } }, ttlMs: this.#ttlMs };
    const { provider, isSettled } = await this.#searchProvider(ref);
    return {
      entry: { details: provider ? { ...details, provider } : details },
      ttlMs: isSettled ? this.#ttlMs : this.#failureTtlMs,
    };
  }

  /** The provider whose search for the event's title returns the event; `isSettled` false if one failed and none found it. */
  async #searchProvider(ref: EventRef): Promise<{ provider?: EventProvider; isSettled: boolean }> {
    const { reader, logger } = this.#options;
    const query = ref.title.trim().slice(0, SEARCH_QUERY_MAX);
    let isSettled = true;
    if (query !== "")
      // Only the providers known today can be searched; an event of a newer one stays without provider.
      for (const provider of KNOWN_EVENT_PROVIDERS) {
        try {
          const found = await reader.searchEvents({ query, provider, limit: SEARCH_LIMIT });
          if (found.data.some((event) => event.eventId === ref.eventId)) return { provider, isSettled: true };
        } catch (error) {
          isSettled = false;
          logger.warn(
            { eventId: ref.eventId, provider, err: (error as Error).message },
            "event provider search failed",
          );
        }
      }
    if (isSettled)
      logger.warn(
        { eventId: ref.eventId },
        "event provider unknown: its positions match no provider selector",
      );
    return { isSettled };
  }
}

/** Any provider name the service gives (the list is open), lower-cased like the selectors. */
function asProvider(value: unknown): EventProvider | undefined {
  return typeof value === "string" && value.trim() !== "" ? value.trim().toLowerCase() : undefined;
}
