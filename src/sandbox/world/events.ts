import { type MarketPhase, type MarketRecord, PRICE_CEILING_MICRO, PRICE_FLOOR_MICRO } from "./markets.js";
import { derivePubkey, hashString, intBetween, pick, type Random, streamFor } from "./rng.js";
import { TOPICS, WORLD_CATEGORIES, type WorldCategory } from "./topics.js";

/**
 * The providers the sandbox generates its category events for, by the live service's names
 * (polymarket is its default). Forecast (`bisonfi`) events come after them, a few only
 * (generateForecastEvents): their markets trade only through the service's execute endpoint.
 */
export const SANDBOX_PROVIDERS = ["polymarket", "kalshi"] as const;
export type Provider = (typeof SANDBOX_PROVIDERS)[number] | "bisonfi";
export const FORECAST_PROVIDER = "bisonfi";

export interface EventRecord {
  readonly index: number;
  readonly eventId: string;
  readonly provider: Provider;
  readonly category: WorldCategory;
  readonly subcategory: string;
  readonly title: string;
  readonly subtitle: string;
  readonly slug: string;
  readonly series: string;
  readonly tags: readonly string[];
  /** Null for events without a start (a poll, a release date). */
  readonly beginAt: number | null;
  /** When the event was listed; the `new` filter looks at the last 24 hours of it. */
  readonly createdAt: number;
  readonly isTrending: boolean;
  readonly marketIndexes: readonly number[];
}

export interface GeneratedMarkets {
  readonly events: readonly EventRecord[];
  readonly markets: readonly MarketRecord[];
}

const MINUTE = 60;
const HOUR = 3_600;
const DAY = 86_400;

/**
 * Phases dealt to markets in turn, so every state exists at genesis whatever the seed: mostly open,
 * some closing within the hour, some closed awaiting resolution, some resolved, some cancelled.
 */
const PHASE_CYCLE: readonly MarketPhase[] = [
  "open",
  "resolved",
  "closing",
  "open",
  "awaiting",
  "resolved",
  "open",
  "cancelled",
  "closing",
];

interface Timeline {
  readonly openTime: number;
  readonly closeTime: number;
  readonly resolveTime: number;
}

function timelineFor(phase: MarketPhase, genesis: number, random: Random): Timeline {
  const openTime = genesis - intBetween(random, 3, 30) * DAY;
  switch (phase) {
    case "open": {
      const closeTime = genesis + intBetween(random, 2, 20) * DAY;
      return { openTime, closeTime, resolveTime: closeTime + intBetween(random, 1, 6) * HOUR };
    }
    case "closing": {
      const closeTime = genesis + intBetween(random, 20, 90) * MINUTE;
      return { openTime, closeTime, resolveTime: closeTime + intBetween(random, 30, 120) * MINUTE };
    }
    case "awaiting": {
      const closeTime = genesis - intBetween(random, 1, 6) * HOUR;
      return { openTime, closeTime, resolveTime: genesis + intBetween(random, 2, 12) * HOUR };
    }
    case "resolved": {
      const closeTime = genesis - intBetween(random, 2, 10) * DAY;
      return {
        openTime: closeTime - 20 * DAY,
        closeTime,
        resolveTime: closeTime + intBetween(random, 1, 12) * HOUR,
      };
    }
    case "cancelled": {
      const closeTime = genesis - intBetween(random, 1, 5) * DAY;
      return { openTime: closeTime - 10 * DAY, closeTime, resolveTime: closeTime };
    }
  }
}

const PROVIDER_PREFIX: Record<Provider, string> = { polymarket: "POLY", kalshi: "KX", bisonfi: "BF" };

/** Events in every category from both providers, each with one to three markets. */
export function generateEventsAndMarkets(
  seed: number,
  genesis: number,
  eventsPerCategory = 4,
): GeneratedMarkets {
  const random = streamFor(seed, "events");
  const events: EventRecord[] = [];
  const markets: MarketRecord[] = [];
  let resolvedCount = 0;
  for (const provider of SANDBOX_PROVIDERS) {
    for (const category of WORLD_CATEGORIES) {
      const topic = TOPICS[category];
      for (let n = 1; n <= eventsPerCategory; n++) {
        const index = events.length;
        const eventId = `${PROVIDER_PREFIX[provider]}-${category.toUpperCase()}-${String(n).padStart(3, "0")}`;
        const title = pick(random, topic.titles).replace("{n}", String(index + 1));
        const marketCount = intBetween(random, 1, 3);
        const marketIndexes: number[] = [];
        for (let k = 1; k <= marketCount; k++) {
          const marketIndex = markets.length;
          const phase = PHASE_CYCLE[marketIndex % PHASE_CYCLE.length] ?? "open";
          const marketId = `${eventId}-M${k}`;
          const timeline = timelineFor(phase, genesis, random);
          // Resolved markets alternate yes and no so both outcomes exist from the start.
          const plannedResult = phase === "resolved" ? (resolvedCount++ % 2 === 0 ? "yes" : "no") : null;
          markets.push({
            index: marketIndex,
            marketId,
            pubkey: derivePubkey(`market:${marketId}`, seed).toBase58(),
            resultPubkey: derivePubkey(`market-result:${marketId}`, seed).toBase58(),
            eventIndex: index,
            title: `${title}: ${pick(random, topic.questions)}`,
            phase,
            ...timeline,
            isCancelled: phase === "cancelled",
            plannedResult,
            startPriceMicro: intBetween(
              random,
              PRICE_FLOOR_MICRO * 5,
              PRICE_CEILING_MICRO - PRICE_FLOOR_MICRO * 4,
            ),
            noiseSeed: hashString(`walk:${marketId}#${seed}`),
            baseVolumeMicro: intBetween(random, 1_000, 500_000) * 1_000_000,
            volumePerMinuteMicro: intBetween(random, 1, 400) * 10_000,
          });
          marketIndexes.push(marketIndex);
        }
        const slug = `${category}-${title.toLowerCase().replace(/[^a-z0-9]+/g, "-")}`;
        const hasBegin = index % 5 !== 4;
        const beginAt = hasBegin ? genesis + intBetween(random, -5 * DAY, 5 * DAY) : null;
        events.push({
          index,
          eventId,
          provider,
          category,
          subcategory: pick(random, topic.subcategories),
          title,
          subtitle: `${category} · ${provider}`,
          slug,
          series: `${PROVIDER_PREFIX[provider]}-${category.toUpperCase()}`,
          tags: [category, ...topic.tags.filter(() => random() < 0.6)],
          beginAt,
          // One event in three is listed within the last day, so the `new` filter finds some.
          createdAt:
            index % 3 === 0
              ? genesis - intBetween(random, 1, 20) * HOUR
              : genesis - intBetween(random, 2, 40) * DAY,
          isTrending: random() < 0.35,
          marketIndexes,
        });
      }
    }
  }
  generateForecastEvents(seed, genesis, events, markets);
  return { events, markets };
}

/**
 * Forecast (bisonfi) events, appended after the others from a stream of their own, so the rest of the
 * world is what it was without them: each asks whether a price ends up or down, one market per side.
 * The first two are open, the third closed and resolving, the fourth settled.
 */
function generateForecastEvents(
  seed: number,
  genesis: number,
  events: EventRecord[],
  markets: MarketRecord[],
) {
  const random = streamFor(seed, "forecast");
  const phases: readonly MarketPhase[] = ["open", "open", "awaiting", "resolved"];
  const assets = ["BTC", "SOL", "ETH", "JUP"];
  phases.forEach((phase, n) => {
    const index = events.length;
    const asset = assets[n] ?? "BTC";
    const eventId = `BF-CRYPTO-${String(n + 1).padStart(3, "0")}`;
    const timeline = timelineFor(phase, genesis, random);
    const marketIndexes: number[] = [];
    for (const side of ["up", "down"] as const) {
      const marketId = `${eventId}-${side.toUpperCase()}`;
      marketIndexes.push(markets.length);
      markets.push({
        index: markets.length,
        marketId,
        pubkey: derivePubkey(`market:${marketId}`, seed).toBase58(),
        resultPubkey: derivePubkey(`market-result:${marketId}`, seed).toBase58(),
        eventIndex: index,
        title: `${asset} ${side} by ${new Date(timeline.closeTime * 1000).toISOString().slice(0, 16)}?`,
        phase,
        ...timeline,
        isCancelled: false,
        plannedResult: phase === "resolved" ? (side === "up" ? "yes" : "no") : null,
        startPriceMicro: intBetween(random, 350_000, 650_000),
        noiseSeed: hashString(`walk:${marketId}#${seed}`),
        baseVolumeMicro: intBetween(random, 1_000, 50_000) * 1_000_000,
        volumePerMinuteMicro: intBetween(random, 1, 100) * 10_000,
        forecast: {
          outcomeSide: side,
          outcomeMint: derivePubkey(`outcome-mint:${marketId}`, seed).toBase58(),
          marketPda: derivePubkey(`forecast-market:${marketId}`, seed).toBase58(),
        },
      });
    }
    events.push({
      index,
      eventId,
      provider: FORECAST_PROVIDER,
      category: "crypto",
      subcategory: asset.toLowerCase(),
      title: `${asset} up or down`,
      subtitle: "crypto · bisonfi",
      slug: `crypto-${asset.toLowerCase()}-up-or-down-${n + 1}`,
      series: "BF-CRYPTO",
      tags: ["crypto", "forecast"],
      beginAt: timeline.openTime,
      createdAt: timeline.openTime,
      isTrending: n === 0,
      marketIndexes,
    });
  });
}
