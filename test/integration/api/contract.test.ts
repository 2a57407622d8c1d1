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
import { type RunningSandbox, startSandbox } from "../../../src/sandbox/index.js";
import { DrivenClock } from "../../../src/sandbox/world/clock.js";

/**
 * The client against the sandbox: every endpoint answers through the typed client (which validates
 * each body against its schema), pages walk to the end, filters and sort orders hold on the data.
 */
let sandbox: RunningSandbox;
let client: ApiClient;
let wallet: string;
const answered = new Set<EndpointName>();

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, clock: new DrivenClock(), rateLimit: false });
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
    await client.prediction.closePosition(open?.pubkey ?? "", { ownerPubkey: wallet });
    await client.prediction.closeAllPositions({ ownerPubkey: wallet });

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
    await client.trigger.cancelOrder({ maker: wallet, order: trigger.order });

    const recurring = await client.recurring.createOrder({
      user: wallet,
      inputMint: usdc,
      outputMint: sol,
      params: { time: { inAmount: 200_000_000, numberOfOrders: 2, interval: 86_400 } },
    });
    await client.recurring.execute({
      requestId: recurring.requestId,
      signedTransaction: signAs(0, recurring.transaction),
    });
    await client.send.inviteHistory({ address: wallet });

    expect([...answered].sort()).toEqual(Object.keys(endpoints).sort());
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

    const eventWithMarkets = events.find((e) => e.eventId !== undefined) ?? events[0];
    const markets = await collectAll(
      iterateEventMarkets(client, eventWithMarkets?.eventId ?? "", { pageSize: 1 }),
    );
    const firstMarkets = await client.prediction.listEventMarkets(eventWithMarkets?.eventId ?? "", {
      end: 1,
    });
    expect(markets.length).toBe(firstMarkets.pagination.total);

    const invites = await collectAll(iterateInvites(client, wallet));
    expect(Array.isArray(invites)).toBe(true);
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
    const marketId = orders[0]?.marketId;
    if (marketId !== undefined) {
      const inMarket = await collectAll(iterateOrders(client, { marketId }));
      expect(inMarket.length).toBeGreaterThan(0);
      expect(inMarket.every((o) => o.marketId === marketId)).toBe(true);
    }

    const crypto = await collectAll(iterateEvents(client, { category: "crypto" }));
    expect(crypto.length).toBeGreaterThan(0);
    expect(crypto.every((e) => e.category === "crypto")).toBe(true);

    // Events carry no provider field; the two providers' lists are disjoint and each non-empty.
    const a = await collectAll(iterateEvents(client, { provider: "provider_a" }));
    const b = await collectAll(iterateEvents(client, { provider: "provider_b" }));
    expect(a.length).toBeGreaterThan(0);
    expect(b.length).toBeGreaterThan(0);
    const idsOfA = new Set(a.map((e) => e.eventId));
    expect(b.some((e) => idsOfA.has(e.eventId))).toBe(false);
    expect((await collectAll(iterateEvents(client))).map((e) => e.eventId)).toEqual(a.map((e) => e.eventId));
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
