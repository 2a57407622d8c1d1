import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, createApiClient } from "../../../../src/api/index.js";
import type { Market } from "../../../../src/core/schemas/prediction.js";
import { redisKeys } from "../../../../src/keeper/names.js";
import { PauseSwitch } from "../../../../src/keeper/operator/pause.js";
import { type Holding, HoldingsIndex } from "../../../../src/keeper/state/holdings.js";
import { MarketWatcher } from "../../../../src/keeper/watch/market-watcher.js";
import type { RunningSandbox } from "../../../../src/sandbox/index.js";
import { startCheckedSandbox } from "../../../helpers/checked-sandbox.js";
import { WALLET } from "../../../helpers/fixtures.js";
import { testHolding } from "../../../helpers/holdings.js";
import { testRedis } from "../../../helpers/redis.js";

function holding(market: Market, eventId: string, position: string): Holding {
  return testHolding({
    wallet: WALLET,
    marketId: market.marketId,
    eventId,
    position,
    exit: { above: "990000" },
  });
}

/**
 * The watcher lists events provider by provider. A provider the fleet holds nothing of is listed once
 * per retriggerSeconds, not every cycle; a market held there meanwhile is still read, alone.
 */
describe("market watcher: providers the fleet holds nothing of", () => {
  let sandbox: RunningSandbox;
  let redis: Awaited<ReturnType<typeof testRedis>>;

  beforeAll(async () => {
    sandbox = await startCheckedSandbox({ port: 0, chain: false, rateLimit: false });
    redis = await testRedis("watch-providers");
  });
  afterAll(async () => {
    await sandbox?.close();
    await redis?.cleanup();
  });

  it("lists such a provider once per retriggerSeconds, and still reads a market held there since", async () => {
    const client = createApiClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey });
    const firstOf = async (provider: string) => {
      const events = await client.prediction.listEvents({ provider, includeMarkets: true, end: 1 });
      const event = events.data[0];
      const market = event?.markets?.[0];
      if (!event || !market) throw new Error(`the sandbox lists no ${provider} market`);
      return { eventId: event.eventId, market };
    };
    const poly = await firstOf("polymarket");
    const kalshi = await firstOf("kalshi");

    const listed: string[] = [];
    const eventReads: string[] = [];
    const marketReads: string[] = [];
    const counting: ApiClient = {
      ...client,
      prediction: {
        ...client.prediction,
        listEvents: (params) => {
          listed.push(String(params?.provider));
          return client.prediction.listEvents(params);
        },
        listEventMarkets: (eventId, range) => {
          eventReads.push(eventId);
          return client.prediction.listEventMarkets(eventId, range);
        },
        getMarket: (marketId, options) => {
          marketReads.push(marketId);
          return client.prediction.getMarket(marketId, options);
        },
      },
    };
    const keys = redisKeys(redis.prefix, "live");
    const index = new HoldingsIndex(redis.redis, keys);
    let nowMs = 1_000_000;
    const watcher = new MarketWatcher({
      client: counting,
      index,
      redis: redis.redis,
      keys,
      poll: undefined as never,
      pause: new PauseSwitch(redis.redis, keys),
      logger: pino({ level: "silent" }),
      settings: { bandPct: 2, retriggerSeconds: 15, pageSize: 100, wallets: new Set([WALLET]) },
      now: () => nowMs,
    });
    // Five held events of one provider: listing (three pages at first) is cheaper than an event each.
    const polyEvents = await client.prediction.listEvents({ provider: "polymarket", includeMarkets: true });
    const extra = polyEvents.data
      .filter((e) => e.eventId !== poly.eventId && (e.markets?.length ?? 0) > 0)
      .slice(0, 4)
      .map((e, i) => holding(e.markets?.[0] as Market, e.eventId, `pos-x${i}`));
    await index.replaceWallet(WALLET, [holding(poly.market, poly.eventId, "pos-1"), ...extra]);

    const cycle = async () => {
      const before = { events: eventReads.length, markets: marketReads.length };
      const result = await watcher.run();
      return {
        ...result,
        eventReads: eventReads.slice(before.events),
        marketReads: marketReads.slice(before.markets),
      };
    };
    await cycle();
    expect(listed).toEqual(["polymarket", "kalshi", "bisonfi"]);
    listed.length = 0;

    // Two seconds on: only the provider the fleet holds markets of is listed.
    nowMs += 2_000;
    const second = await cycle();
    expect(listed).toEqual(["polymarket"]);
    expect(second.requests).toBe(1);
    listed.length = 0;

    // A kalshi market is held now: read alone (cheaper than its event) while kalshi is not listed.
    await index.replaceWallet(WALLET, [
      holding(poly.market, poly.eventId, "pos-1"),
      ...extra,
      holding(kalshi.market, kalshi.eventId, "pos-2"),
    ]);
    nowMs += 2_000;
    const third = await cycle();
    expect(listed).toEqual(["polymarket"]);
    expect(third.eventReads).toEqual([]);
    expect(third.marketReads).toEqual([kalshi.market.marketId]);
    expect(third.watched).toBe(extra.length + 2);
    listed.length = 0;

    // Past retriggerSeconds since kalshi and bisonfi were last listed: both are listed again, and
    // kalshi's market is found there (no event or market read), while bisonfi, still holding nothing, rests.
    nowMs += 15_000;
    const fourth = await cycle();
    expect(listed).toEqual(["polymarket", "kalshi", "bisonfi"]);
    expect(fourth.eventReads).toEqual([]);
    expect(fourth.marketReads).toEqual([]);
    listed.length = 0;
    nowMs += 2_000;
    await cycle();
    expect(listed).toEqual(["polymarket", "kalshi"]);
  });
});
