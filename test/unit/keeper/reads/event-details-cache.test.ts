import pino from "pino";
import { describe, expect, it } from "vitest";
import { PermanentApiError, TransientApiError } from "../../../../src/api/errors.js";
import type { ConfiguredStrategy } from "../../../../src/config/load-config.js";
import { ConfigError } from "../../../../src/core/errors.js";
import type { EventProvider } from "../../../../src/core/event-details.js";
import type { Event } from "../../../../src/core/schemas/prediction.js";
import { defineStrategy } from "../../../../src/core/strategy.js";
import {
  EventDetailsCache,
  type EventDetailsCacheOptions,
  type EventLookupOutcome,
  type EventReader,
} from "../../../../src/keeper/reads/event-details-cache.js";
import { type StrategyReads, snapshotNeeds, takeSnapshot } from "../../../../src/keeper/reads/snapshot.js";
import { createCaptureStream } from "../../../../src/ops/capture-stream.js";
import { autoClaim } from "../../../../strategies/auto-claim.js";
import { dca } from "../../../../strategies/dca.js";
import { exitRules } from "../../../../strategies/exit-rules/index.js";
import { limitOrders } from "../../../../strategies/limit-orders.js";
import { sweep } from "../../../../strategies/sweep.js";
import { eventMetadata, fakePubkey, position, WALLET } from "../../../helpers/fixtures.js";

function event(eventId: string, extra: Partial<Event> = {}): Event {
  return {
    eventId,
    isActive: true,
    isLive: false,
    category: "crypto",
    subcategory: "bitcoin",
    volumeUsd: "1000000",
    closeCondition: "",
    beginAt: null,
    rulesPdf: "https://example.invalid/rules.pdf",
    tags: ["btc"],
    ...extra,
  };
}

function details(extra: Record<string, unknown> = {}) {
  return { category: "crypto", subcategory: "bitcoin", tags: ["btc"], ...extra };
}

const apiError = (Kind: typeof PermanentApiError | typeof TransientApiError, status: number) =>
  new Kind(
    {
      status,
      code: undefined,
      endpoint: "getEvent",
      area: "prediction",
      requestId: undefined,
      param: undefined,
    },
    "no",
  );

/** A fake service: events by id, which provider's search lists which ids, failures to throw. */
function harness(
  options: {
    events?: Record<string, Event>;
    searchable?: Partial<Record<EventProvider, string[]>>;
    failGet?: Record<string, Error>;
    failSearch?: Partial<Record<EventProvider, Error>>;
  } & Partial<EventDetailsCacheOptions> = {},
) {
  const calls: string[] = [];
  const outcomes: EventLookupOutcome[] = [];
  let nowMs = 1_000_000;
  const reader: EventReader = {
    async getEvent(eventId) {
      calls.push(`get ${eventId}`);
      const failure = options.failGet?.[eventId];
      if (failure) throw failure;
      const found = options.events?.[eventId];
      if (!found) throw apiError(PermanentApiError, 404);
      return found;
    },
    async searchEvents({ query, provider, limit }) {
      calls.push(`search ${provider} "${query}" ${limit}`);
      const failure = options.failSearch?.[provider];
      if (failure) throw failure;
      return { data: (options.searchable?.[provider] ?? []).map((id) => event(id)) };
    },
  };
  const logs = createCaptureStream();
  const cache = new EventDetailsCache({
    reader,
    logger: pino({ level: "debug" }, logs),
    withProvider: false,
    now: () => nowMs,
    onLookup: (outcome) => outcomes.push(outcome),
    ...options,
  });
  return {
    cache,
    calls,
    outcomes,
    logs,
    advance(ms: number) {
      nowMs += ms;
    },
  };
}

const refs = (...ids: string[]) => ids.map((eventId) => ({ eventId, title: `Title of ${eventId}` }));

describe("EventDetailsCache", () => {
  it("fetches each distinct event once, then answers from memory until the TTL passes", async () => {
    const h = harness({ events: { a: event("a"), b: event("b", { category: "sports", tags: undefined }) } });
    const first = await h.cache.detailsOf(refs("a", "b", "a"));
    expect(first).toEqual({ a: details(), b: details({ category: "sports", tags: [] }) });
    expect(h.calls).toEqual(["get a", "get b"]);

    h.advance(600_000); // kept for the whole TTL...
    expect(await h.cache.detailsOf(refs("a", "b"))).toEqual(first);
    expect(h.calls).toHaveLength(2); // steady state: no request
    expect(h.outcomes).toEqual(["fetched", "fetched", "cached", "cached"]);

    h.advance(1); // ...and fetched again once it has passed
    await h.cache.detailsOf(refs("a"));
    expect(h.calls).toEqual(["get a", "get b", "get a"]);
  });

  it("leaves out an event it cannot fetch, logs and counts it, and tries again a minute later", async () => {
    const h = harness({
      events: { a: event("a"), b: event("b") },
      failGet: { b: apiError(TransientApiError, 503) },
    });
    expect(await h.cache.detailsOf(refs("a", "b"))).toEqual({ a: details() });
    expect(h.outcomes).toEqual(["fetched", "failed"]);
    expect(h.logs.records()).toContainEqual(
      expect.objectContaining({
        level: 40,
        eventId: "b",
        msg: "event details unavailable: its positions match no category, tags or provider selector",
      }),
    );

    h.advance(60_000);
    expect(await h.cache.detailsOf(refs("b"))).toEqual({});
    expect(h.calls).toEqual(["get a", "get b"]);
    h.advance(1);
    await h.cache.detailsOf(refs("b"));
    expect(h.calls).toEqual(["get a", "get b", "get b"]);
  });

  it("remembers an event the service refuses (4xx) for the full TTL", async () => {
    const h = harness({});
    expect(await h.cache.detailsOf(refs("gone"))).toEqual({});
    h.advance(599_999);
    await h.cache.detailsOf(refs("gone"));
    expect(h.calls).toEqual(["get gone"]);
  });

  it("concurrent lookups of the same event share one request", async () => {
    const h = harness({ events: { a: event("a") } });
    const [one, two] = await Promise.all([h.cache.detailsOf(refs("a")), h.cache.detailsOf(refs("a"))]);
    expect(one).toEqual({ a: details() });
    expect(two).toEqual({ a: details() });
    expect(h.calls).toEqual(["get a"]);
    expect([...h.outcomes].sort()).toEqual(["cached", "fetched"]);
  });

  it("keeps at most maxEntries events, dropping the least recently used", async () => {
    const h = harness({ events: { a: event("a"), b: event("b"), c: event("c") }, maxEntries: 2 });
    await h.cache.detailsOf(refs("a", "b"));
    await h.cache.detailsOf(refs("a")); // a is now the most recently used
    await h.cache.detailsOf(refs("c")); // b goes
    expect(h.cache.size).toBe(2);
    await h.cache.detailsOf(refs("a", "b"));
    expect(h.calls).toEqual(["get a", "get b", "get c", "get b"]);
  });

  describe("the provider", () => {
    it("is not looked for unless asked", async () => {
      const h = harness({ events: { a: event("a") }, searchable: { polymarket: ["a"] } });
      expect(await h.cache.detailsOf(refs("a"))).toEqual({ a: details() });
      expect(h.calls).toEqual(["get a"]);
    });

    it("comes from the event's metadata when it names one (any name, lower-cased): no search", async () => {
      const h = harness({
        withProvider: true,
        events: { a: event("a", { metadata: { title: "A", provider: "NewCo" } }) },
      });
      expect(await h.cache.detailsOf(refs("a"))).toEqual({ a: details({ provider: "newco" }) });
      expect(h.calls).toEqual(["get a"]);
    });

    it("otherwise comes from the search whose results hold the event, by its title", async () => {
      const h = harness({
        withProvider: true,
        events: { a: event("a", { metadata: { title: "A" } }) },
        searchable: { polymarket: ["x"], kalshi: ["y", "a"] },
      });
      expect(await h.cache.detailsOf(refs("a"))).toEqual({ a: details({ provider: "kalshi" }) });
      expect(h.calls).toEqual([
        "get a",
        'search polymarket "Title of a" 20',
        'search kalshi "Title of a" 20',
      ]);
      h.advance(599_999);
      await h.cache.detailsOf(refs("a"));
      expect(h.calls).toHaveLength(3);
    });

    it("stays unknown when no search of a known provider finds the event (kept for the full TTL)", async () => {
      const h = harness({ withProvider: true, events: { a: event("a") } });
      expect(await h.cache.detailsOf(refs("a"))).toEqual({ a: details() });
      expect(h.logs.records()).toContainEqual(
        expect.objectContaining({
          eventId: "a",
          msg: "event provider unknown: its positions match no provider selector",
        }),
      );
      h.advance(599_999);
      await h.cache.detailsOf(refs("a"));
      expect(h.calls).toHaveLength(4); // the get and one search per known provider, once
    });

    it("stays unknown for a minute when a search failed and none found it; the rest is still known", async () => {
      const h = harness({
        withProvider: true,
        events: { a: event("a") },
        searchable: { kalshi: ["a"] },
        failSearch: { polymarket: apiError(TransientApiError, 500) },
      });
      expect(await h.cache.detailsOf(refs("a"))).toEqual({ a: details({ provider: "kalshi" }) });
      h.advance(599_999); // found by the other search: settled, kept for the full TTL
      await h.cache.detailsOf(refs("a"));
      expect(h.calls.filter((c) => c.startsWith("get"))).toEqual(["get a"]);
      const h2 = harness({
        withProvider: true,
        events: { a: event("a") },
        failSearch: { polymarket: apiError(TransientApiError, 500) },
      });
      expect(await h2.cache.detailsOf(refs("a"))).toEqual({ a: details() });
      h2.advance(60_001);
      await h2.cache.detailsOf(refs("a"));
      expect(h2.calls.filter((c) => c.startsWith("get"))).toEqual(["get a", "get a"]);
    });

    it("searches with the title cut to 200 characters, and not at all without a title", async () => {
      const h = harness({ withProvider: true, events: { a: event("a"), b: event("b") } });
      await h.cache.detailsOf([
        { eventId: "a", title: "x".repeat(250) },
        { eventId: "b", title: "  " },
      ]);
      expect(h.calls.filter((c) => c.startsWith("search"))).toEqual([
        `search polymarket "${"x".repeat(200)}" 20`,
        `search kalshi "${"x".repeat(200)}" 20`,
        `search bisonfi "${"x".repeat(200)}" 20`,
      ]);
    });
  });
});

describe("takeSnapshot and event details", () => {
  const positions = [
    position({
      pubkey: fakePubkey("P1"),
      eventId: "e1",
      eventMetadata: eventMetadata({ eventId: "e1", title: "One" }),
    }),
    position({
      pubkey: fakePubkey("P2"),
      eventId: "e2",
      eventMetadata: eventMetadata({ eventId: "e2", title: "Two" }),
    }),
  ];
  const base = {
    wallet: WALLET,
    withOrders: false,
    inFlight: [],
    nowSeconds: 1_700_000_000,
  };

  it("carries no events when the source offers none", async () => {
    const snapshot = await takeSnapshot({
      ...base,
      source: { positions: async () => positions, pendingOrders: async () => [] },
    });
    expect(snapshot.events).toBeUndefined();
  });

  it("asks the source for the positions' events and carries what it answers", async () => {
    const asked: unknown[] = [];
    const snapshot = await takeSnapshot({
      ...base,
      source: {
        positions: async () => positions,
        pendingOrders: async () => [],
        eventDetails: async (events) => {
          asked.push(events);
          return { e1: { category: "tech", subcategory: "ai", tags: [] } };
        },
      },
    });
    expect(asked).toEqual([
      [
        { eventId: "e1", title: "One" },
        { eventId: "e2", title: "Two" },
      ],
    ]);
    expect(snapshot.events).toEqual({ e1: { category: "tech", subcategory: "ai", tags: [] } });
  });
});

const USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const SOL = "So11111111111111111111111111111111111111112";
const JUP = "JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN";

describe("snapshotNeeds: what the strategies' needs hooks ask read", () => {
  const entry = (config: Record<string, unknown>, index = 0): ConfiguredStrategy => ({
    index,
    name: exitRules.name,
    strategy: exitRules as ConfiguredStrategy["strategy"],
    config: exitRules.configSchema.parse(config),
  });
  const silent = defineStrategy({
    name: "silent",
    contractVersion: 1,
    description: "",
    configSchema: exitRules.configSchema,
    evaluate: () => ({ intents: [], state: {} }),
  }) as ConfiguredStrategy["strategy"];

  const builtIn = (strategy: ConfiguredStrategy["strategy"], config: unknown): ConfiguredStrategy => ({
    name: strategy.name,
    strategy,
    config: strategy.configSchema.parse(config),
  });
  const plan = { id: "p", inputMint: USDC, outputMint: SOL, inAmountRaw: "200000000", numberOfOrders: 2 };
  const dcaEntry = builtIn(dca as ConfiguredStrategy["strategy"], {
    plans: [{ ...plan, intervalSeconds: 60 }],
  });
  const limitEntry = builtIn(limitOrders as ConfiguredStrategy["strategy"], {
    orders: [
      {
        id: "o",
        side: "sell",
        inputMint: SOL,
        outputMint: USDC,
        inputDecimals: 9,
        outputDecimals: 6,
        amount: "1",
        price: "150",
      },
    ],
  });
  const sweepEntry = builtIn(sweep as ConfiguredStrategy["strategy"], {
    rules: [
      { id: "a", fromMint: USDC, toMint: SOL, keepRaw: "0" },
      { id: "b", fromMint: SOL, toMint: USDC, keepRaw: "0" },
      { id: "c", fromMint: USDC, toMint: JUP, keepRaw: "5" },
    ],
  });
  const none = { events: false, eventProviders: false, orderLists: [], balances: [], claimCost: false };

  it.each<[string, ConfiguredStrategy[], StrategyReads]>([
    ["no strategies", [], none],
    ["a strategy without needs", [{ name: "silent", strategy: silent, config: {} }], none],
    ["exit-rules on positions only", [entry({ takeProfitPct: 5 })], none],
    [
      "exit-rules with a tags selector",
      [entry({ takeProfitPct: 5, overrides: [{ match: { tags: ["nba"] }, rules: {} }] })],
      { ...none, events: true },
    ],
    [
      "exit-rules with a provider selector",
      [entry({ takeProfitPct: 5, overrides: [{ match: { provider: "kalshi" }, rules: {} }] })],
      { ...none, events: true, eventProviders: true },
    ],
    ["dca: the recurring orders list", [dcaEntry], { ...none, orderLists: ["recurring"] }],
    [
      "auto-claim: what a claim costs",
      [builtIn(autoClaim as ConfiguredStrategy["strategy"], {})],
      { ...none, claimCost: true },
    ],
    [
      "limit-orders and dca: both lists, in a fixed order",
      [dcaEntry, limitEntry],
      { ...none, orderLists: ["trigger", "recurring"] },
    ],
    ["sweep: the balances of its from-mints, each once", [sweepEntry], { ...none, balances: [USDC, SOL] }],
  ])("%s", (_label, strategies, expected) => {
    expect(snapshotNeeds(strategies)).toEqual(expected);
  });

  it("refuses an answer of needs() that is not needs, naming the key", () => {
    const misspelt = {
      ...silent,
      needs: () => ({ orderList: ["trigger"] }),
    } as ConfiguredStrategy["strategy"];
    expect(() => snapshotNeeds([{ index: 1, name: "silent", strategy: misspelt, config: {} }])).toThrow(
      expect.objectContaining({ problems: ["strategies[1]: needs() answered orderList: unknown key"] }),
    );
  });

  it("a strategy whose needs() throws stops the start with its path", () => {
    const broken = {
      ...silent,
      needs: () => {
        throw new Error("boom");
      },
    } as ConfiguredStrategy["strategy"];
    expect(() => snapshotNeeds([{ index: 2, name: "silent", strategy: broken, config: {} }])).toThrow(
      ConfigError,
    );
    try {
      snapshotNeeds([{ index: 2, name: "silent", strategy: broken, config: {} }]);
    } catch (error) {
      expect((error as ConfigError).problems).toEqual(["strategies[2]: needs() failed: boom"]);
    }
  });
});
