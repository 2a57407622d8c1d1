import { VersionedTransaction } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, createApiClient } from "../../../src/api/client.js";
import { type EndpointName, endpoints } from "../../../src/api/endpoints.js";
import { PermanentApiError, ValidationError } from "../../../src/api/errors.js";
import {
  collectAll,
  iterateEventMarkets,
  iterateEvents,
  iterateHistory,
  iterateInvites,
  iterateOrders,
  iteratePositions,
} from "../../../src/api/pagination.js";
import type { LeaderboardEntry } from "../../../src/core/schemas/prediction.js";
import type { RunningSandbox } from "../../../src/sandbox/index.js";
import { DrivenClock } from "../../../src/sandbox/world/clock.js";
import { startCheckedSandbox } from "../../helpers/checked-sandbox.js";

/**
 * The client against the sandbox: every endpoint answers through the typed client (which validates
 * each body against its schema), pages walk to the end, filters and sort orders hold on the data.
 */
let sandbox: RunningSandbox;
let client: ApiClient;
let wallet: string;
const answered = new Set<EndpointName>();

beforeAll(async () => {
  sandbox = await startCheckedSandbox({ port: 0, clock: new DrivenClock(), rateLimit: false });
  client = createApiClient({
    baseUrl: sandbox.url,
    apiKey: sandbox.apiKey,
    hooks: { onRequest: (o) => o.outcome === "ok" && answered.add(o.endpoint) },
  });
  wallet = sandbox.wallets[0] as string;
});
afterAll(() => sandbox.close());

/** Signs a transaction the service built, as the sandbox wallet that owes the signature. */
function signAs(walletIndex: number, base64: string): string {
  const tx = VersionedTransaction.deserialize(Buffer.from(base64, "base64"));
  tx.sign([sandbox.world.walletKeypair(walletIndex)]);
  return Buffer.from(tx.serialize()).toString("base64");
}

const isSorted = <T>(values: readonly T[], before: (a: T, b: T) => boolean) =>
  values.every((v, i) => i === 0 || before(values[i - 1] as T, v) || values[i - 1] === v);

describe("contract: the client against the sandbox", () => {
  it("calls every endpoint, each answer passing its schema", async () => {
    const events = await client.prediction.listEvents({ includeMarkets: true, end: 50 });
    const event = events.data.find((e) => (e.markets?.length ?? 0) > 0);
    expect(event).toBeDefined();
    const eventId = event?.eventId ?? "";
    expect((await client.prediction.getEvent(eventId, { includeMarkets: true })).eventId).toBe(eventId);
    await client.prediction.searchEvents({ query: "a", limit: 5 });
    const markets = await client.prediction.listEventMarkets(eventId);
    const marketId = markets.data[0]?.marketId ?? "";
    expect((await client.prediction.getEventMarket(eventId, marketId)).marketId).toBe(marketId);
    expect((await client.prediction.getMarket(marketId)).marketId).toBe(marketId);

    const positions = await client.prediction.listPositions({ ownerPubkey: wallet, end: 100 });
    await client.prediction.listOrders({ ownerPubkey: wallet });
    await client.prediction.listHistory({ ownerPubkey: wallet });
    await client.prediction.leaderboards({ period: "weekly", metric: "volume", limit: 10 });
    const claimable = positions.data.find((p) => p.claimable && !p.claimed);
    expect(claimable, "the world starts with a claimable position").toBeDefined();
    const claim = await client.prediction.claimPosition(claimable?.pubkey ?? "", { ownerPubkey: wallet });
    expect(claim.position.positionPubkey).toBe(claimable?.pubkey);
    const open = positions.data.find((p) => !p.claimable && !p.claimed && p.contracts !== "0");
    expect(await client.prediction.getPosition(open?.pubkey ?? "")).toEqual(open);
    // One it does not know is a 404 in the area's error shape, which the client reads as permanent.
    await expect(client.prediction.getPosition(wallet)).rejects.toMatchObject({
      name: "PermanentApiError",
      status: 404,
      area: "prediction",
      code: "not_found",
      param: "positionPubkey",
    });
    await client.prediction.closePosition(open?.pubkey ?? "", { ownerPubkey: wallet });
    await client.prediction.closeAllPositions({ ownerPubkey: wallet, minSellPriceSlippageBps: 100 });

    const tokens = await client.tokens.search({ query: "USDC,SOL" });
    const mintOf = (symbol: string) => tokens.find((t) => t.symbol === symbol)?.id ?? "";
    const [usdc, sol] = [mintOf("USDC"), mintOf("SOL")];
    const built = await client.swap.build({
      inputMint: usdc,
      outputMint: sol,
      amount: 10_000_000n,
      taker: wallet,
    });
    expect(built.inAmount).toBe("10000000");

    const trigger = await client.trigger.createOrder({
      inputMint: usdc,
      outputMint: sol,
      maker: wallet,
      payer: wallet,
      params: { makingAmount: "10000000", takingAmount: "50000000" },
    });
    const executed = await client.trigger.execute({
      requestId: trigger.requestId,
      signedTransaction: signAs(0, trigger.transaction),
    });
    expect(executed.status).toBe("Success");
    const order = trigger.order ?? "";
    await client.trigger.cancelOrder({ maker: wallet, order });
    const listed = await client.trigger.getOrders({ user: wallet, orderStatus: "active" });
    expect(listed.orders.map((o) => o.orderKey)).toContain(order);
    const cancelMany = await client.trigger.cancelOrders({ maker: wallet, orders: [order] });
    expect(cancelMany.transactions).toHaveLength(1);

    const recurring = await client.recurring.createOrder({
      user: wallet,
      inputMint: usdc,
      outputMint: sol,
      params: { time: { inAmount: 200_000_000, numberOfOrders: 2, interval: 86_400 } },
    });
    const placed = await client.recurring.execute({
      requestId: recurring.requestId,
      signedTransaction: signAs(0, recurring.transaction),
    });
    const recurringOrders = await client.recurring.getOrders({
      user: wallet,
      orderStatus: "active",
      recurringType: "time",
    });
    expect(recurringOrders.time?.map((o) => o.orderKey)).toContain(placed.order);
    await client.recurring.cancelOrder({ user: wallet, order: placed.order ?? "" });
    await client.send.inviteHistory({ address: wallet });

    // Opening through the service: a Forecast buy through execute, a keeper-filled one through the
    // CLI's orders/execute form.
    const forecast = await client.prediction.listEvents({ provider: "bisonfi", includeMarkets: true });
    const buy = (id: string) =>
      client.prediction.createOrder({
        ownerPubkey: wallet,
        marketId: id,
        isYes: true,
        isBuy: true,
        depositAmount: "10000000",
      });
    const swap = await buy(forecast.data[0]?.markets?.[0]?.marketId ?? "");
    const swapped = await client.prediction.execute({
      signedTransaction: signAs(0, swap.transaction),
      ...(swap.execution ? { context: swap.execution.context } : {}),
    });
    expect(swapped).toMatchObject({ status: "Success", error: null });
    const keeperFilled = await buy(marketId);
    const sent = await client.prediction.executeOrder({
      signedTransaction: signAs(0, keeperFilled.transaction),
    });
    expect(sent.signature).toEqual(expect.any(String));

    expect([...answered].sort()).toEqual(Object.keys(endpoints).sort());
  });

  it("lists trigger and recurring orders as they move from active to history, cancelled through the client", async () => {
    const owner = sandbox.wallets[1] as string;
    const tokens = await client.tokens.search({ query: "USDC,SOL" });
    const mintOf = (symbol: string) => tokens.find((t) => t.symbol === symbol)?.id ?? "";
    const [usdc, sol] = [mintOf("USDC"), mintOf("SOL")];
    const placed: string[] = [];
    for (const making of ["10000000", "20000000"]) {
      const built = await client.trigger.createOrder({
        inputMint: usdc,
        outputMint: sol,
        maker: owner,
        payer: owner,
        params: { makingAmount: making, takingAmount: "50000000" },
      });
      // The live-shaped success: `{ signature, status }` without `code`.
      const executed = await client.trigger.execute({
        requestId: built.requestId,
        signedTransaction: signAs(1, built.transaction),
      });
      expect(executed).toEqual({ signature: expect.any(String), status: "Success" });
      placed.push(built.order ?? "");
    }
    const [filled, open] = placed as [string, string];
    sandbox.world.settleOrder(filled, "filled");
    const active = await client.trigger.getOrders({ user: owner, orderStatus: "active" });
    expect(active.orders.map((o) => o.orderKey)).toEqual([open]);
    const history = await client.trigger.getOrders({ user: owner, orderStatus: "history" });
    expect(history.orders.map((o) => [o.orderKey, o.status])).toEqual([[filled, "filled"]]);

    // cancelOrders without `orders`: every open order of the maker, one transaction each.
    const cancel = await client.trigger.cancelOrders({ maker: owner });
    expect(cancel.transactions).toHaveLength(1);
    await client.trigger.execute({
      requestId: cancel.requestId,
      signedTransaction: signAs(1, cancel.transactions[0] ?? ""),
    });
    expect(sandbox.world.swapOrders.get(open)?.status).toBe("cancelled");
    expect((await client.trigger.getOrders({ user: owner, orderStatus: "active" })).orders).toEqual([]);

    const recurring = await client.recurring.createOrder({
      user: owner,
      inputMint: usdc,
      outputMint: sol,
      params: { time: { inAmount: 200_000_000, numberOfOrders: 2, interval: 86_400 } },
    });
    const created = await client.recurring.execute({
      requestId: recurring.requestId,
      signedTransaction: signAs(1, recurring.transaction),
    });
    // The live-shaped success: `error: null`.
    expect(created).toMatchObject({ status: "Success", error: null });
    const stop = await client.recurring.cancelOrder({ user: owner, order: created.order ?? "" });
    await client.recurring.execute({
      requestId: stop.requestId,
      signedTransaction: signAs(1, stop.transaction),
    });
    const done = await client.recurring.getOrders({
      user: owner,
      orderStatus: "history",
      recurringType: "all",
    });
    expect(done.all?.map((o) => [o.orderKey, o.status, o.userClosed])).toEqual([
      [created.order, "cancelled", true],
    ]);
  });

  it("walks every paginated list to the end with the page size", async () => {
    const firstEvents = await client.prediction.listEvents({ end: 1 });
    const events = await collectAll(iterateEvents(client, {}, { pageSize: 7 }));
    expect(events).toHaveLength(firstEvents.pagination.total);
    expect(new Set(events.map((e) => e.eventId)).size).toBe(events.length);

    const firstPositions = await client.prediction.listPositions({ ownerPubkey: wallet, end: 1 });
    const positions = await collectAll(iteratePositions(client, { ownerPubkey: wallet }, { pageSize: 3 }));
    expect(positions.length).toBe(firstPositions.pagination.total);
    expect(positions.length).toBeGreaterThan(3);

    const history = await collectAll(iterateHistory(client, { ownerPubkey: wallet }, { pageSize: 10 }));
    const firstHistory = await client.prediction.listHistory({ ownerPubkey: wallet, end: 1 });
    expect(history.length).toBe(firstHistory.pagination.total);

    const orders = await collectAll(iterateOrders(client, { ownerPubkey: wallet }, { pageSize: 2 }));
    const firstOrders = await client.prediction.listOrders({ ownerPubkey: wallet, end: 1 });
    expect(orders.length).toBe(firstOrders.pagination.total);

    // An event with several markets, walked one market a page: more than one page by construction.
    const withMarkets = await collectAll(iterateEvents(client, { includeMarkets: true }, { pageSize: 25 }));
    const eventWithMarkets = withMarkets.find((e) => (e.markets?.length ?? 0) > 1);
    expect(eventWithMarkets, "an event with more than one market").toBeDefined();
    const eventId = eventWithMarkets?.eventId ?? "";
    const firstMarkets = await client.prediction.listEventMarkets(eventId, { end: 1 });
    expect(firstMarkets.data).toHaveLength(1);
    expect(firstMarkets.pagination.hasNext).toBe(true);
    const markets = await collectAll(iterateEventMarkets(client, eventId, { pageSize: 1 }));
    expect(markets.length).toBe(firstMarkets.pagination.total);
    expect(markets.length).toBeGreaterThan(1);
    expect(markets.map((m) => m.marketId)).toEqual(eventWithMarkets?.markets?.map((m) => m.marketId));
  });

  it("walks the invite history of a sandbox wallet over several pages", async () => {
    const pages: { invites: readonly { invite_pda: string; sender: string }[]; hasMoreData: boolean }[] = [];
    for (let page = 1; page <= 50; page += 1) {
      const answer = await client.send.inviteHistory({ address: wallet, page });
      pages.push(answer);
      if (!answer.hasMoreData) break;
    }
    expect(pages.length, "a sandbox wallet has invites over at least three pages").toBeGreaterThanOrEqual(3);
    const pageSize = pages[0]?.invites.length ?? 0;
    expect(pageSize).toBeGreaterThan(0);
    // Every page but the last is full and says more follow; the last one is not empty and says none do.
    for (const page of pages.slice(0, -1)) {
      expect(page.invites).toHaveLength(pageSize);
      expect(page.hasMoreData).toBe(true);
    }
    const last = pages.at(-1);
    expect(last?.hasMoreData).toBe(false);
    expect(last?.invites.length).toBeGreaterThan(0);
    expect(last?.invites.length).toBeLessThanOrEqual(pageSize);
    const byPage = pages.flatMap((p) => p.invites);
    expect(byPage.length).toBe(pageSize * (pages.length - 1) + (last?.invites.length ?? 0));

    const walked = await collectAll(iterateInvites(client, wallet));
    expect(walked).toHaveLength(byPage.length);
    expect(walked.map((i) => i.invite_pda)).toEqual(byPage.map((i) => i.invite_pda));
    expect(new Set(walked.map((i) => i.invite_pda)).size).toBe(walked.length);
    expect(walked.every((i) => i.sender === wallet)).toBe(true);

    // A page past the end is empty, not an error.
    const beyond = await client.send.inviteHistory({ address: wallet, page: pages.length + 1 });
    expect(beyond.invites).toEqual([]);
    expect(beyond.hasMoreData).toBe(false);
  });

  it("filters hold on the returned data", async () => {
    const mine = await collectAll(iteratePositions(client, { ownerPubkey: wallet }));
    expect(mine.every((p) => p.ownerPubkey === wallet)).toBe(true);
    const yes = await collectAll(iteratePositions(client, { ownerPubkey: wallet, isYes: true }));
    const no = await collectAll(iteratePositions(client, { ownerPubkey: wallet, isYes: false }));
    expect(yes.every((p) => p.isYes)).toBe(true);
    expect(no.every((p) => !p.isYes)).toBe(true);
    expect(yes.length + no.length).toBe(mine.length);

    const orders = await collectAll(iterateOrders(client, { ownerPubkey: wallet }));
    expect(orders.length, "the wallet has orders").toBeGreaterThan(0);
    // No market filter on the live service: the list is the owner's (or everyone's) orders.
    const allOrders = await collectAll(iterateOrders(client));
    expect(allOrders.length).toBeGreaterThan(orders.length);
    expect(orders.every((o) => o.ownerPubkey === wallet)).toBe(true);

    const crypto = await collectAll(iterateEvents(client, { category: "crypto" }));
    expect(crypto.length).toBeGreaterThan(0);
    expect(crypto.every((e) => e.category === "crypto")).toBe(true);

    // Events carry no provider field; the two providers' lists are disjoint and each non-empty.
    const a = await collectAll(iterateEvents(client, { provider: "polymarket" }));
    const b = await collectAll(iterateEvents(client, { provider: "kalshi" }));
    expect(a.length).toBeGreaterThan(0);
    expect(b.length).toBeGreaterThan(0);
    const idsOfA = new Set(a.map((e) => e.eventId));
    expect(b.some((e) => idsOfA.has(e.eventId))).toBe(false);
    expect((await collectAll(iterateEvents(client))).map((e) => e.eventId)).toEqual(a.map((e) => e.eventId));
  });

  it("positions filter by marketId and by marketPubkey", async () => {
    const all = await collectAll(iteratePositions(client));
    const mine = all.filter((p) => p.ownerPubkey === wallet);
    expect(mine.length).toBeGreaterThan(0);
    const target = mine[0];
    const expected = all.filter((p) => p.marketId === target?.marketId).map((p) => p.pubkey);
    expect(expected.length).toBeLessThan(all.length);

    const byId = await collectAll(
      iteratePositions(client, { marketId: target?.marketId ?? "" }, { pageSize: 2 }),
    );
    expect(byId.every((p) => p.marketId === target?.marketId)).toBe(true);
    expect(byId.map((p) => p.pubkey)).toEqual(expected);

    const byPubkey = await collectAll(iteratePositions(client, { marketPubkey: target?.market ?? "" }));
    expect(byPubkey.every((p) => p.market === target?.market)).toBe(true);
    expect(byPubkey.map((p) => p.pubkey)).toEqual(expected);

    // Filters combine: the owner and the market together.
    const mineThere = await collectAll(
      iteratePositions(client, { ownerPubkey: wallet, marketId: target?.marketId ?? "" }),
    );
    expect(mineThere.map((p) => p.pubkey)).toEqual(
      mine.filter((p) => p.marketId === target?.marketId).map((p) => p.pubkey),
    );
    const unknown = await client.prediction.listPositions({ marketId: "NO-SUCH-MARKET" });
    expect(unknown.data).toEqual([]);
    expect(unknown.pagination.total).toBe(0);
  });

  it("history filters by id and by positionPubkey", async () => {
    const history = await collectAll(iterateHistory(client, { ownerPubkey: wallet }));
    expect(history.length).toBeGreaterThan(1);
    const pick = history[Math.floor(history.length / 2)];
    const one = await client.prediction.listHistory({ id: pick?.id ?? 1 });
    expect(one.data).toHaveLength(1);
    expect(one.pagination.total).toBe(1);
    expect(one.data[0]?.id).toBe(pick?.id);
    expect(one.data[0]?.eventType).toBe(pick?.eventType);
    expect(one.data[0]?.positionPubkey).toBe(pick?.positionPubkey);

    const positionPubkey = pick?.positionPubkey ?? "";
    const ofPosition = await collectAll(iterateHistory(client, { positionPubkey }, { pageSize: 2 }));
    expect(ofPosition.length).toBeGreaterThan(0);
    expect(ofPosition.every((r) => r.positionPubkey === positionPubkey)).toBe(true);
    expect(ofPosition.map((r) => r.id)).toEqual(
      history.filter((r) => r.positionPubkey === positionPubkey).map((r) => r.id),
    );
    expect(ofPosition.length).toBeLessThan(history.length);
  });

  it.each([
    ["pnl", (e: LeaderboardEntry) => Number(e.realizedPnlUsd)],
    ["volume", (e: LeaderboardEntry) => Number(e.totalVolumeUsd)],
    ["win_rate", (e: LeaderboardEntry) => Number(e.winRatePct)],
  ] as const)("leaderboard by %s is sorted descending by its field", async (metric, field) => {
    const board = await client.prediction.leaderboards({ metric, period: "all_time", limit: 100 });
    expect(board.data.length).toBeGreaterThan(5);
    const values = board.data.map(field);
    expect(values.every((v) => Number.isFinite(v))).toBe(true);
    expect(isSorted(values, (x, y) => x > y)).toBe(true);
    // The ranking is the metric's: the first entry holds the largest value of the field.
    expect(values[0]).toBe(Math.max(...values));
  });

  it("leaderboard honours period and limit", async () => {
    for (const period of ["all_time", "weekly", "monthly"] as const) {
      const board = await client.prediction.leaderboards({ period, limit: 100 });
      expect(board.data.length).toBeGreaterThan(3);
      expect(board.data.every((e) => e.period === period)).toBe(true);
      const top = await client.prediction.leaderboards({ period, limit: 3 });
      expect(top.data).toHaveLength(3);
      expect(top.data.map((e) => e.ownerPubkey)).toEqual(board.data.slice(0, 3).map((e) => e.ownerPubkey));
    }
    const weekly = await client.prediction.leaderboards({ period: "weekly", limit: 100 });
    const allTime = await client.prediction.leaderboards({ period: "all_time", limit: 100 });
    expect(weekly.data.map((e) => e.realizedPnlUsd)).not.toEqual(allTime.data.map((e) => e.realizedPnlUsd));
    const defaults = await client.prediction.leaderboards();
    expect(defaults.data.every((e) => e.period === "all_time")).toBe(true);
    expect(defaults.data.map((e) => e.ownerPubkey)).toEqual(allTime.data.map((e) => e.ownerPubkey));
  });

  it("searchEvents honours limit and returns only events matching the query", async () => {
    const all = await collectAll(iterateEvents(client));
    const titleOf = (e: { metadata?: Record<string, unknown> | undefined }) =>
      String(e.metadata?.title ?? "").toLowerCase();
    // The most common word of the titles, so the search has more matches than the limit.
    const counts = new Map<string, number>();
    for (const e of all)
      for (const word of new Set(titleOf(e).split(/\s+/)))
        if (word.length >= 3) counts.set(word, (counts.get(word) ?? 0) + 1);
    const [term, matches] = [...counts.entries()].sort((a, b) => b[1] - a[1])[0] ?? ["", 0];
    expect(matches).toBeGreaterThan(2);
    const matching = (e: (typeof all)[number]) =>
      titleOf(e).includes(term) || e.eventId.toLowerCase().includes(term);

    const limited = await client.prediction.searchEvents({ query: term, limit: 2 });
    expect(limited.data).toHaveLength(2);
    expect(limited.data.every(matching)).toBe(true);

    const wide = await client.prediction.searchEvents({ query: term.toUpperCase(), limit: 20 });
    expect(wide.data.every(matching)).toBe(true);
    expect(wide.data.length).toBe(Math.min(20, all.filter(matching).length));

    const none = await client.prediction.searchEvents({ query: "zzqx-no-such-event" });
    expect(none.data).toEqual([]);
  });

  it("listEvents filter new, live and trending each return exactly the matching events", async () => {
    const all = await collectAll(iterateEvents(client, {}, { pageSize: 10 }));
    const ids = (events: readonly { eventId: string }[]) => events.map((e) => e.eventId).sort();
    const now = sandbox.world.now();
    const createdAt = (e: (typeof all)[number]) => Number(e.metadata?.createdAt);

    const fresh = await collectAll(iterateEvents(client, { filter: "new" }, { pageSize: 4 }));
    expect(fresh.length).toBeGreaterThan(0);
    expect(fresh.every((e) => createdAt(e) >= now - 86_400 && createdAt(e) <= now)).toBe(true);
    expect(ids(fresh)).toEqual(ids(all.filter((e) => createdAt(e) >= now - 86_400 && createdAt(e) <= now)));
    expect(fresh.length).toBeLessThan(all.length);

    const live = await collectAll(iterateEvents(client, { filter: "live" }, { pageSize: 4 }));
    expect(live.length).toBeGreaterThan(0);
    expect(live.every((e) => e.isLive && e.beginAt !== null && Number(e.beginAt) <= now)).toBe(true);
    expect(ids(live)).toEqual(ids(all.filter((e) => e.isLive)));
    expect(live.length).toBeLessThan(all.length);

    // Trending is the world's own flag (recent trade activity): listed events that carry it.
    const trending = await collectAll(iterateEvents(client, { filter: "trending" }, { pageSize: 4 }));
    const flagged = new Set(sandbox.world.events.filter((e) => e.isTrending).map((e) => e.eventId));
    expect(trending.length).toBeGreaterThan(0);
    expect(trending.every((e) => e.isActive && flagged.has(e.eventId))).toBe(true);
    expect(ids(trending)).toEqual(ids(all.filter((e) => e.isActive && flagged.has(e.eventId))));
    expect(trending.length).toBeLessThan(all.filter((e) => e.isActive).length);

    // A filter combines with a category.
    const liveCrypto = await collectAll(iterateEvents(client, { filter: "live", category: "crypto" }));
    expect(ids(liveCrypto)).toEqual(ids(live.filter((e) => e.category === "crypto")));
  });

  it("listEvents subcategory returns exactly the events of that subcategory", async () => {
    const all = await collectAll(iterateEvents(client));
    const subcategories = [...new Set(all.map((e) => e.subcategory))];
    expect(subcategories.length).toBeGreaterThan(1);
    for (const subcategory of subcategories.slice(0, 4)) {
      const found = await collectAll(iterateEvents(client, { subcategory }, { pageSize: 3 }));
      expect(found.length).toBeGreaterThan(0);
      expect(found.every((e) => e.subcategory === subcategory)).toBe(true);
      expect(found.map((e) => e.eventId)).toEqual(
        all.filter((e) => e.subcategory === subcategory).map((e) => e.eventId),
      );
    }
    const nothing = await client.prediction.listEvents({ subcategory: "no-such-subcategory" });
    expect(nothing.data).toEqual([]);
  });

  it.each([
    ["volume", "desc"],
    ["volume", "asc"],
    ["beginAt", "asc"],
    ["beginAt", "desc"],
  ] as const)("sortBy %s %s holds across pages", async (sortBy, sortDirection) => {
    const events = await collectAll(iterateEvents(client, { sortBy, sortDirection }, { pageSize: 9 }));
    expect(events.length).toBeGreaterThan(1);
    if (sortBy === "volume") {
      const volumes = events.map((e) => BigInt(e.volumeUsd));
      expect(isSorted(volumes, (x, y) => (sortDirection === "asc" ? x < y : x > y))).toBe(true);
    } else {
      const begins = events
        .map((e) => e.beginAt)
        .filter((v): v is string => v !== null)
        .map(Number);
      expect(isSorted(begins, (x, y) => (sortDirection === "asc" ? x < y : x > y))).toBe(true);
    }
  });

  it("a wrong key is a 401 PermanentApiError that does not echo the key", async () => {
    const wrongKey = "not-the-sandbox-key-4242";
    const stranger = createApiClient({ baseUrl: sandbox.url, apiKey: wrongKey, retries: 0 });
    const error = await stranger.prediction.listEvents().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PermanentApiError);
    expect((error as PermanentApiError).status).toBe(401);
    expect((error as Error).message).not.toContain(wrongKey);
  });

  it("the sandbox answers 400 naming the field for a rule the client refuses before sending", async () => {
    const refused = await client.prediction.leaderboards({ limit: 101 }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ValidationError);
    expect((refused as ValidationError).field).toBe("limit");

    const response = await fetch(`${sandbox.url}/prediction/v1/leaderboards?limit=101`, {
      headers: { "x-api-key": sandbox.apiKey },
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { param?: string; message?: string };
    expect(body.param).toBe("limit");
    expect(body.message).toContain("limit");

    const swapResponse = await fetch(
      `${sandbox.url}/swap/v2/build?inputMint=${wallet}&outputMint=${sandbox.wallets[1]}&amount=1&taker=${wallet}&dexes=A&excludeDexes=B`,
      { headers: { "x-api-key": sandbox.apiKey } },
    );
    expect(swapResponse.status).toBe(400);
    expect(((await swapResponse.json()) as { error: string }).error).toContain("excludeDexes");
  });
});
