import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, createApiClient } from "../../../../src/api/index.js";
import type { Market } from "../../../../src/core/schemas/prediction.js";
import { QUEUES } from "../../../../src/keeper/names.js";
import { PauseSwitch } from "../../../../src/keeper/operator/pause.js";
import type { PollJobData } from "../../../../src/keeper/queues/queues.js";
import { HoldingsIndex } from "../../../../src/keeper/state/holdings.js";
import { type HotSettings, MarketWatcher } from "../../../../src/keeper/watch/market-watcher.js";
import type { RunningSandbox } from "../../../../src/sandbox/index.js";
import { DrivenClock } from "../../../../src/sandbox/world/clock.js";
import { startCheckedSandbox } from "../../../helpers/checked-sandbox.js";
import { WALLET } from "../../../helpers/fixtures.js";
import { testHolding } from "../../../helpers/holdings.js";
import { type LedgerAndQueues, ledgerAndQueues } from "../../../helpers/ledger-queues.js";

/** The hot cadence's share: one request a second (`service.requestsPerSecond` × `hotSharePct`). */
const HOT_REQUESTS_PER_SECOND = 1;
/** Ten seconds of the hot cadence at its default interval. */
const HOT_RUNS = 20;
const HOT_INTERVAL_MS = 500;
/** What the hot cadence may send in those ten seconds: its share, plus the one request it starts with. */
const HOT_BUDGET = (HOT_RUNS * HOT_INTERVAL_MS * HOT_REQUESTS_PER_SECOND) / 1000 + 1;

/**
 * The watcher's reads against its request budget, every request counted (a page of an event's
 * markets is one). The sandbox's events hold up to three markets; a page size of one makes such an
 * event three pages, as a live event of 300 markets is at the usual page size of 100.
 */
describe("market watcher: requests within its budget, every page counted", () => {
  const clock = new DrivenClock();
  let sandbox: RunningSandbox;
  let ctx: LedgerAndQueues;

  beforeAll(async () => {
    sandbox = await startCheckedSandbox({ port: 0, chain: false, rateLimit: false, clock });
    ctx = await ledgerAndQueues("watcher-budget");
  });
  afterAll(async () => {
    await sandbox?.close();
    await ctx?.cleanup();
  });

  /**
   * The sandbox's client, each request it sends recorded as `endpoint id`. With `noMarketRead`, the
   * service answers `GET /markets/{id}` 404 (a service without that read).
   */
  function countingClient(requests: string[], noMarketRead = false): ApiClient {
    const client = createApiClient({
      baseUrl: noMarketRead ? `${sandbox.url}/no-market-read` : sandbox.url,
      apiKey: sandbox.apiKey,
    });
    const real = createApiClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey });
    return {
      ...client,
      prediction: {
        ...client.prediction,
        listEvents: (params) => {
          requests.push(`listEvents ${params?.provider}`);
          return real.prediction.listEvents(params);
        },
        listEventMarkets: (eventId, range) => {
          requests.push(`listEventMarkets ${eventId}`);
          return real.prediction.listEventMarkets(eventId, range);
        },
        getMarket: (marketId, options) => {
          requests.push(`getMarket ${marketId}`);
          return client.prediction.getMarket(marketId, options);
        },
      },
    };
  }

  /** Every event of a provider with its markets, in one read. */
  async function eventsOf(provider: string) {
    const client = createApiClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey });
    const listed = await client.prediction.listEvents({ provider, includeMarkets: true, end: 100 });
    return listed.data.map((e) => ({ eventId: e.eventId, markets: e.markets ?? [] }));
  }

  const isUnresolved = (m: Market) => m.status !== "cancelled" && m.result === null;

  /** The sandbox's clock past `closeTime` (never back). */
  function passClose(closeTime: number) {
    clock.set(Math.max(clock.nowSeconds(), closeTime + 5));
  }

  async function watcherOver(
    requests: string[],
    holdings: readonly { eventId: string; market: Market }[],
    options: { pageSize: number; hot?: HotSettings; nowMs: () => number; noMarketRead?: boolean },
  ) {
    const index = new HoldingsIndex(ctx.redis, ctx.keys);
    await index.replaceWallet(
      WALLET,
      holdings.map(({ eventId, market }, i) =>
        testHolding({ wallet: WALLET, marketId: market.marketId, eventId, position: `pos-${i}`, exit: {} }),
      ),
    );
    return new MarketWatcher({
      client: countingClient(requests, options.noMarketRead),
      index,
      redis: ctx.redis,
      keys: ctx.keys,
      poll: ctx.queue<PollJobData>(QUEUES.poll),
      pause: new PauseSwitch(ctx.redis, ctx.keys),
      logger: pino({ level: "silent" }),
      settings: {
        bandPct: 2,
        retriggerSeconds: 15,
        pageSize: options.pageSize,
        wallets: new Set([WALLET]),
        ...(options.hot ? { hot: options.hot } : {}),
      },
      now: options.nowMs,
    });
  }

  /** Ten seconds of the hot cadence: the requests it sent. */
  async function tenHotSeconds(watcher: MarketWatcher, requests: string[], tick: () => void) {
    requests.length = 0;
    for (let run = 0; run < HOT_RUNS; run += 1) {
      tick();
      await watcher.runHot();
    }
    return [...requests];
  }

  it("held markets past their close, more than their event's pages: the event's pages, every one counted", async () => {
    const events = [...(await eventsOf("polymarket")), ...(await eventsOf("kalshi"))];
    const event = events.find((e) => e.markets.filter((m) => m.status === "open").length > 1);
    if (!event) throw new Error("the sandbox lists no event of several open markets");
    const unresolved = event.markets.filter((m) => m.status === "open");
    const requests: string[] = [];
    let extraMs = 0;
    let lastClose = 0;
    const watcher = await watcherOver(
      requests,
      unresolved.map((market) => ({ eventId: event.eventId, market })),
      {
        // One page for the event: cheaper than its markets alone.
        pageSize: event.markets.length,
        hot: { seconds: 1_000_000_000, bandPct: 5, eventsPerSecond: HOT_REQUESTS_PER_SECOND },
        nowMs: () => lastClose * 1000 + extraMs,
      },
    );
    // The watcher's clock past both close times, the service's not: the service still answers the
    // markets open, unresolved (the sandbox would resolve the first before the second closes).
    lastClose = Math.max(...unresolved.map((m) => m.closeTime)) + 5;
    await watcher.run();

    const hot = await tenHotSeconds(watcher, requests, () => {
      extraMs += HOT_INTERVAL_MS;
    });
    // One page a read for all of them, at the cadence its share allows.
    expect(hot.length).toBeGreaterThanOrEqual(HOT_BUDGET / 2);
    expect(hot.length).toBeLessThanOrEqual(HOT_BUDGET);
    expect(new Set(hot)).toEqual(new Set([`listEventMarkets ${event.eventId}`]));
  });

  it("a held market past its close, in an event of three pages, costs the hot cadence one request a read", async () => {
    const event = (await eventsOf("polymarket")).find(
      (e) => e.markets.length === 3 && e.markets.some(isUnresolved),
    );
    const held = event?.markets.find(isUnresolved);
    if (!event || !held) throw new Error("the sandbox lists no event of three markets with one unresolved");
    const requests: string[] = [];
    let extraMs = 0;
    const watcher = await watcherOver(requests, [{ eventId: event.eventId, market: held }], {
      pageSize: 1,
      hot: { seconds: 1_000_000_000, bandPct: 5, eventsPerSecond: HOT_REQUESTS_PER_SECOND },
      nowMs: () => clock.nowSeconds() * 1000 + extraMs,
    });
    passClose(held.closeTime);
    await watcher.run();

    const hot = await tenHotSeconds(watcher, requests, () => {
      extraMs += HOT_INTERVAL_MS;
    });
    // Read often (its result may come any second), within the share: the market alone, never its pages.
    expect(hot.length).toBeGreaterThanOrEqual(HOT_BUDGET / 2);
    expect(hot.length).toBeLessThanOrEqual(HOT_BUDGET);
    expect(new Set(hot)).toEqual(new Set([`getMarket ${held.marketId}`]));
  });

  it("a service that cannot read a market alone: its event's pages are read, and its result seen", async () => {
    const event = (await eventsOf("kalshi")).find(
      (e) => e.markets.length === 3 && e.markets.some(isUnresolved),
    );
    const held = event?.markets.find(isUnresolved);
    if (!event || !held) throw new Error("the sandbox lists no event of three markets with one unresolved");
    const requests: string[] = [];
    const watcher = await watcherOver(requests, [{ eventId: event.eventId, market: held }], {
      pageSize: 1,
      nowMs: () => clock.nowSeconds() * 1000,
      noMarketRead: true,
    });
    sandbox.world.resolveMarket(held.marketId, "yes");
    const cycle = await watcher.run();
    expect(requests).toContain(`getMarket ${held.marketId}`);
    expect(requests.filter((r) => r === `listEventMarkets ${event.eventId}`)).toHaveLength(3);
    // The result was seen through the pages: the holder is polled.
    expect(cycle.polled).toContain(WALLET);
  });

  it("a full cycle reads the events list once reading event by event costs more pages", async () => {
    const providers = ["polymarket", "kalshi", "bisonfi"];
    const all = (await Promise.all(providers.map(eventsOf))).flat();
    // Every market of every event with several: event by event, each costs a page per market.
    const holdings = all
      .filter((e) => e.markets.length > 1)
      .flatMap((e) => e.markets.map((market) => ({ eventId: e.eventId, market })));
    const heldEvents = new Set(holdings.map((h) => h.eventId)).size;
    const requests: string[] = [];
    let nowMs = 1_000_000;
    const watcher = await watcherOver(requests, holdings, { pageSize: 1, nowMs: () => nowMs });
    // The events list, a page an event: fewer pages than the held markets, more than the held events
    // (counted one request each, event by event would look cheaper).
    expect(all.length).toBeGreaterThan(heldEvents);
    expect(all.length).toBeLessThan(holdings.length);

    const cycles: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      nowMs += 2_000;
      cycles.push((await watcher.run()).requests);
    }
    // Once both ways were tried, every cycle takes the cheaper: the list (and what it leaves out).
    for (const requestsOfCycle of cycles.slice(3)) expect(requestsOfCycle).toBeLessThan(holdings.length);
  });
});
