import { describe, expect, it } from "vitest";
import { SandboxError } from "../../../../src/sandbox/world/errors.js";
import { defined, wallet, worldFixture } from "./helpers.js";

async function refusal(promise: Promise<unknown>): Promise<SandboxError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof SandboxError) return error;
    throw error;
  }
  throw new Error("expected a SandboxError");
}

describe("prediction reads", () => {
  it("pages events with start inclusive, end exclusive, a default page and hasNext", async () => {
    const { call } = worldFixture();
    const first = await call("listEvents", { start: 0, end: 5 });
    expect(first.data).toHaveLength(5);
    expect(first.pagination).toMatchObject({ start: 0, end: 5, hasNext: true });
    const rest = await call("listEvents", { start: 5 });
    const total = first.pagination.total;
    expect(rest.data).toHaveLength(Math.min(20, total - 5));
    const last = await call("listEvents", { start: total - 2, end: total + 10 });
    expect(last.pagination).toMatchObject({ end: total, hasNext: false });
    expect(last.data.map((e: { eventId: string }) => e.eventId)).not.toContain(first.data[0].eventId);
  });

  it("filters by provider, category, subcategory and new/live/trending", async () => {
    const { call, world } = worldFixture();
    const kalshi = await call("listEvents", { provider: "kalshi", end: 100 });
    expect(kalshi.data.length).toBeGreaterThan(0);
    expect(kalshi.data.every((e: { eventId: string }) => e.eventId.startsWith("KX-"))).toBe(true);
    const byDefault = await call("listEvents", { end: 100 });
    expect(byDefault.data.every((e: { eventId: string }) => e.eventId.startsWith("POLY-"))).toBe(true);
    // An open list: a provider the sandbox has no events of answers none, not a refusal.
    expect((await call("listEvents", { provider: "manifold" })).data).toEqual([]);
    const forecast = await call("listEvents", { provider: "bisonfi", end: 100 });
    expect(forecast.data.every((e: { eventId: string }) => e.eventId.startsWith("BF-"))).toBe(true);
    const sports = await call("listEvents", { category: "sports", end: 100 });
    expect(sports.data.length).toBeGreaterThan(0);
    expect(sports.data.every((e: { category: string }) => e.category === "sports")).toBe(true);
    const sub = sports.data[0].subcategory;
    const bySub = await call("listEvents", { category: "sports", subcategory: sub, end: 100 });
    expect(bySub.data.every((e: { subcategory: string }) => e.subcategory === sub)).toBe(true);
    const live = await call("listEvents", { filter: "live", end: 100 });
    expect(live.data.length).toBeGreaterThan(0);
    expect(live.data.every((e: { isLive: boolean }) => e.isLive)).toBe(true);
    const fresh = await call("listEvents", { filter: "new", end: 100 });
    expect(fresh.data.length).toBeGreaterThan(0);
    for (const e of fresh.data)
      expect(world.now() - (e.metadata.createdAt as number)).toBeLessThanOrEqual(86_400);
    const trending = await call("listEvents", { filter: "trending", end: 100 });
    expect(trending.data.length).toBeGreaterThan(0);
  });

  it("sorts by volume (desc by default) and beginAt (asc by default)", async () => {
    const { call } = worldFixture();
    const byVolume = (await call("listEvents", { sortBy: "volume", end: 100 })).data.map(
      (e: { volumeUsd: string }) => BigInt(e.volumeUsd),
    );
    expect(byVolume).toEqual([...byVolume].sort((a, b) => (a > b ? -1 : a < b ? 1 : 0)));
    const asc = (await call("listEvents", { sortBy: "volume", sortDirection: "asc", end: 100 })).data.map(
      (e: { volumeUsd: string }) => BigInt(e.volumeUsd),
    );
    expect(asc).toEqual([...byVolume].reverse());
    const begins = (await call("listEvents", { sortBy: "beginAt", end: 100 })).data
      .map((e: { beginAt: string | null }) => e.beginAt)
      .filter((b: string | null) => b !== null)
      .map(Number);
    expect(begins).toEqual([...begins].sort((a, b) => a - b));
  });

  it("includes markets only when asked, and reads single events and markets", async () => {
    const { call } = worldFixture();
    const without = await call("listEvents", { end: 3 });
    expect(without.data[0].markets).toBeUndefined();
    const withMarkets = await call("listEvents", { end: 3, includeMarkets: "true" });
    expect(withMarkets.data[0].markets.length).toBeGreaterThan(0);
    const event = await call("getEvent", { eventId: without.data[0].eventId, includeMarkets: true });
    const marketId = event.markets[0].marketId;
    const markets = await call("listEventMarkets", { eventId: event.eventId });
    expect(markets.pagination.total).toBe(event.markets.length);
    expect((await call("getEventMarket", { eventId: event.eventId, marketId })).marketId).toBe(marketId);
    expect((await call("getMarket", { marketId })).pricing.buyYesPriceUsd).toBeTypeOf("number");
    const found = await call("searchEvents", { query: event.metadata.title.slice(0, 6), limit: 5 });
    expect(found.data.length).toBeGreaterThan(0);
  });

  it("answers 404 for unknown events and markets", async () => {
    const { call } = worldFixture();
    expect((await refusal(call("getEvent", { eventId: "nope" }))).status).toBe(404);
    expect((await refusal(call("getMarket", { marketId: "nope" }))).status).toBe(404);
    expect((await refusal(call("listEventMarkets", { eventId: "nope" }))).status).toBe(404);
    const events = await call("listEvents", { end: 2, includeMarkets: true });
    const err = await refusal(
      call("getEventMarket", {
        eventId: events.data[0].eventId,
        marketId: events.data[1].markets[0].marketId,
      }),
    );
    expect(err.status).toBe(404);
  });

  it("filters positions by owner, market, market pubkey and side", async () => {
    const { call, world } = worldFixture();
    const owner = wallet(world, 1);
    const mine = await call("listPositions", { ownerPubkey: owner, end: 100 });
    expect(mine.data.length).toBeGreaterThan(3);
    expect(mine.data.every((p: { ownerPubkey: string }) => p.ownerPubkey === owner)).toBe(true);
    const yes = await call("listPositions", { ownerPubkey: owner, isYes: "true", end: 100 });
    expect(yes.data.every((p: { isYes: boolean }) => p.isYes)).toBe(true);
    const first = mine.data[0];
    const byMarket = await call("listPositions", { marketId: first.marketId, end: 100 });
    expect(byMarket.data.every((p: { marketId: string }) => p.marketId === first.marketId)).toBe(true);
    const byPubkey = await call("listPositions", { marketPubkey: first.market, end: 100 });
    expect(byPubkey.pagination.total).toBe(byMarket.pagination.total);
    const stranger = await call("listPositions", {
      ownerPubkey: "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin",
    });
    expect(stranger.pagination.total).toBe(0);
  });

  it("lists orders (pending ones tied to positions) and history by owner, id and position", async () => {
    const { call, world } = worldFixture();
    const owner = wallet(world, 0);
    const orders = await call("listOrders", { ownerPubkey: owner, end: 100 });
    const pendingOrder = orders.data.find((o: { status: string }) => o.status === "pending");
    expect(pendingOrder).toBeDefined();
    expect(orders.data.some((o: { status: string }) => o.status === "filled")).toBe(true);
    const positions = await call("listPositions", { ownerPubkey: owner, end: 100 });
    const holder = positions.data.find((p: { pubkey: string }) => p.pubkey === pendingOrder.position);
    expect(holder.openOrders).toBe(1);
    const history = await call("listHistory", { ownerPubkey: owner, end: 100 });
    expect(history.data.length).toBeGreaterThan(10);
    const one = await call("listHistory", { id: history.data[3].id });
    expect(one.data).toEqual([history.data[3]]);
    const ofPosition = await call("listHistory", { positionPubkey: holder.pubkey, end: 100 });
    expect(ofPosition.data.every((r: { positionPubkey: string }) => r.positionPubkey === holder.pubkey)).toBe(
      true,
    );
  });

  it("ranks leaderboards by each metric with the sandbox wallets on them", async () => {
    const { call, world } = worldFixture();
    for (const period of ["all_time", "weekly", "monthly"])
      for (const metric of ["pnl", "volume", "win_rate"]) {
        const board = await call("leaderboards", { period, metric });
        const owners = board.data.map((e: { ownerPubkey: string }) => e.ownerPubkey);
        for (const wallet of world.wallets()) expect(owners).toContain(wallet);
        if (metric === "volume") {
          const volumes = board.data.map((e: { totalVolumeUsd: string }) => BigInt(e.totalVolumeUsd));
          expect(volumes).toEqual([...volumes].sort((a, b) => (a > b ? -1 : a < b ? 1 : 0)));
        }
      }
    expect((await call("leaderboards", { limit: 3 })).data).toHaveLength(3);
  });
});

describe("tokens and invites", () => {
  it("searches by symbol, name and mint, with ambiguous symbols and audits", async () => {
    const { call, world } = worldFixture();
    const moons = await call("searchTokens", { query: "MOON" });
    expect(moons.filter((t: { symbol: string }) => t.symbol === "MOON")).toHaveLength(2);
    expect(moons[0].isVerified).toBe(true);
    expect(moons.some((t: { audit: { isSus: boolean } }) => t.audit.isSus)).toBe(true);
    const usdc = defined(world.tokens.byKey("usdc"));
    const byMint = await call("searchTokens", {
      query: `${usdc.mint},So11111111111111111111111111111111111111112`,
    });
    expect(byMint.map((t: { symbol: string }) => t.symbol)).toEqual(["USDC", "SOL"]);
    expect(await call("searchTokens", { query: "zzzz-nothing" })).toEqual([]);
    expect(world.tokens.tokens.length).toBeGreaterThanOrEqual(30);
    expect(world.tokens.tokens.some((t) => t.token.organicScoreLabel === "low")).toBe(true);
  });

  it("pages invite histories with every outcome", async () => {
    const { call, world } = worldFixture();
    const address = wallet(world, 0);
    const page1 = await call("inviteHistory", { address });
    expect(page1.invites).toHaveLength(10);
    expect(page1.hasMoreData).toBe(true);
    const page3 = await call("inviteHistory", { address, page: 3 });
    expect(page3.hasMoreData).toBe(false);
    const actions = new Set(page1.invites.map((i: { action?: string }) => i.action ?? "pending"));
    expect([...actions].sort()).toEqual(["claimed", "clawed_back", "pending"]);
  });
});
