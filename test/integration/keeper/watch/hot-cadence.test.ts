import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, createApiClient } from "../../../../src/api/index.js";
import type { Market } from "../../../../src/core/schemas/prediction.js";
import { QUEUES } from "../../../../src/keeper/names.js";
import { PauseSwitch } from "../../../../src/keeper/operator/pause.js";
import type { PollJobData } from "../../../../src/keeper/queues/queues.js";
import { HoldingsIndex } from "../../../../src/keeper/state/holdings.js";
import { MarketWatcher } from "../../../../src/keeper/watch/market-watcher.js";
import type { RunningSandbox } from "../../../../src/sandbox/index.js";
import { DrivenClock } from "../../../../src/sandbox/world/clock.js";
import { startCheckedSandbox } from "../../../helpers/checked-sandbox.js";
import { WALLET } from "../../../helpers/fixtures.js";
import { testHolding } from "../../../helpers/holdings.js";
import { type LedgerAndQueues, ledgerAndQueues } from "../../../helpers/ledger-queues.js";

/**
 * A held market passes its close time on the sandbox (its driven clock moved on) and resolves there.
 * The watcher's hot cadence reads that market alone (one request) and polls its winner, with no full
 * cycle in between; at rest, and for a market still open, it reads nothing.
 */
describe("market watcher: the hot cadence sees a market past its close resolve", () => {
  const clock = new DrivenClock();
  let sandbox: RunningSandbox;
  let ctx: LedgerAndQueues;

  beforeAll(async () => {
    sandbox = await startCheckedSandbox({ port: 0, chain: false, rateLimit: false, clock });
    ctx = await ledgerAndQueues("hot-cadence");
  });
  afterAll(async () => {
    await sandbox?.close();
    await ctx?.cleanup();
  });

  it("reads only the market past its close, at its cadence, and polls the winner before any full cycle", async () => {
    const client = createApiClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey });
    const listed = await client.prediction.listEvents({ provider: "polymarket", includeMarkets: true });
    const open = listed.data
      .flatMap((e) => (e.markets ?? []).map((m) => ({ eventId: e.eventId, market: m })))
      .filter(({ market }) => market.status === "open")
      .sort((a, b) => a.market.closeTime - b.market.closeTime);
    const closing = open[0];
    // Another event's market that stays open past the first one's close.
    const later = open.find(
      (o) => o.eventId !== closing?.eventId && o.market.closeTime > (closing?.market.closeTime ?? 0) + 60,
    );
    if (!closing || !later) throw new Error("the sandbox lists no two open markets of different events");

    const requests: string[] = [];
    const counting: ApiClient = {
      ...client,
      prediction: {
        ...client.prediction,
        listEvents: (params) => {
          requests.push("listEvents");
          return client.prediction.listEvents(params);
        },
        listEventMarkets: (eventId, range) => {
          requests.push(`listEventMarkets ${eventId}`);
          return client.prediction.listEventMarkets(eventId, range);
        },
        getMarket: (marketId, options) => {
          requests.push(`getMarket ${marketId}`);
          return client.prediction.getMarket(marketId, options);
        },
      },
    };
    const index = new HoldingsIndex(ctx.redis, ctx.keys);
    const held = (o: { eventId: string; market: Market }, position: string) =>
      testHolding({ wallet: WALLET, marketId: o.market.marketId, eventId: o.eventId, position, exit: {} });
    await index.replaceWallet(WALLET, [held(closing, "pos-closing"), held(later, "pos-later")]);
    let extraMs = 0;
    const watcher = new MarketWatcher({
      client: counting,
      index,
      redis: ctx.redis,
      keys: ctx.keys,
      poll: ctx.queue<PollJobData>(QUEUES.poll),
      pause: new PauseSwitch(ctx.redis, ctx.keys),
      logger: pino({ level: "silent" }),
      settings: {
        bandPct: 2,
        retriggerSeconds: 15,
        pageSize: 100,
        wallets: new Set([WALLET]),
        hot: { seconds: 300, bandPct: 5, eventsPerSecond: 2 },
      },
      now: () => clock.nowSeconds() * 1000 + extraMs,
    });
    const step = async (what: "full" | "hot") => {
      requests.length = 0;
      extraMs += 500;
      const cycle = what === "full" ? await watcher.run() : await watcher.runHot();
      return { requests: [...requests], polled: cycle.polled, decisions: cycle.decisions };
    };

    // At rest (both markets open, none near an exit): the hot cadence sends nothing.
    await step("full");
    expect(await step("hot")).toEqual({ requests: [], polled: [], decisions: [] });

    // The first market's close passes: the next full cycle sees it, the hot cadence reads it alone.
    clock.set(closing.market.closeTime + 5);
    await step("full");
    expect(await step("hot")).toEqual({
      requests: [`getMarket ${closing.market.marketId}`],
      polled: [],
      decisions: [],
    });

    // It resolves: the next hot cycle (no full cycle since) polls its winner, for one request.
    sandbox.world.resolveMarket(closing.market.marketId, "yes");
    const detected = await step("hot");
    expect(detected.requests).toEqual([`getMarket ${closing.market.marketId}`]);
    expect(detected.polled).toEqual([WALLET]);
    expect(detected.decisions).toMatchObject([{ marketId: closing.market.marketId, trigger: "resolved" }]);
    const queued = await ctx.queue<PollJobData>(QUEUES.poll).getJobs(["prioritized", "waiting"]);
    expect(queued.map((j) => [j.data.wallet, j.data.target?.trigger])).toEqual([[WALLET, "resolved"]]);

    // Resolved, it is no longer hot: the hot cadence is back to reading nothing.
    expect((await step("hot")).requests).toEqual([]);
  });
});

/**
 * A held market whose mark is near a holder's exit threshold is read at the hot cadence while its
 * price moves; resting there, it costs nothing more than the usual cycle.
 */
describe("market watcher: the hot cadence and a market near an exit", () => {
  let sandbox: RunningSandbox;
  let ctx: LedgerAndQueues;

  beforeAll(async () => {
    sandbox = await startCheckedSandbox({ port: 0, chain: false, rateLimit: false });
    ctx = await ledgerAndQueues("hot-near-exit");
  });
  afterAll(async () => {
    await sandbox?.close();
    await ctx?.cleanup();
  });

  it("reads it while its price moves near the threshold, and not once it rests", async () => {
    const client = createApiClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey });
    const listed = await client.prediction.listEvents({ provider: "polymarket", includeMarkets: true });
    const found = listed.data
      .flatMap((e) => (e.markets ?? []).map((m) => ({ eventId: e.eventId, market: m })))
      .find(({ market }) => market.status === "open");
    if (!found) throw new Error("the sandbox lists no open market");
    const { eventId, market } = found;
    sandbox.world.setPrice(market.marketId, 870_000);
    const reads: string[] = [];
    const counting: ApiClient = {
      ...client,
      prediction: {
        ...client.prediction,
        listEventMarkets: (id, range) => {
          reads.push(id);
          return client.prediction.listEventMarkets(id, range);
        },
        getMarket: (id, options) => {
          reads.push(id);
          return client.prediction.getMarket(id, options);
        },
      },
    };
    const index = new HoldingsIndex(ctx.redis, ctx.keys);
    // A take-profit at $0.90: $0.87 is within 5 % (hot) but not within 2 % (no poll).
    await index.replaceWallet(WALLET, [
      testHolding({
        wallet: WALLET,
        marketId: market.marketId,
        eventId,
        position: "pos-near",
        markUsd: "870000",
        exit: { above: "900000" },
      }),
    ]);
    let nowMs = 1_000_000;
    const watcher = new MarketWatcher({
      client: counting,
      index,
      redis: ctx.redis,
      keys: ctx.keys,
      poll: ctx.queue<PollJobData>(QUEUES.poll),
      pause: new PauseSwitch(ctx.redis, ctx.keys),
      logger: pino({ level: "silent" }),
      settings: {
        bandPct: 2,
        retriggerSeconds: 15,
        pageSize: 100,
        wallets: new Set([WALLET]),
        hot: { seconds: 300, bandPct: 5, eventsPerSecond: 2 },
      },
      now: () => nowMs,
    });
    const hotReads = async () => {
      reads.length = 0;
      nowMs += 500;
      const cycle = await watcher.runHot();
      expect(cycle.polled).toEqual([]);
      return [...reads];
    };

    await watcher.run();
    // Seen near the threshold: read at the hot cadence; its price has not moved, so once only.
    expect(await hotReads()).toEqual([market.marketId]);
    expect(await hotReads()).toEqual([]);
    expect(await hotReads()).toEqual([]);

    // Its price moves (still short of the trigger band): the next cycle sees it, the hot cadence reads it.
    sandbox.world.setPrice(market.marketId, 875_000);
    nowMs += 500;
    await watcher.run();
    expect(await hotReads()).toEqual([market.marketId]);
    expect(await hotReads()).toEqual([]);
  });
});
