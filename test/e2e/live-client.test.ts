import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningSandbox } from "../../src/sandbox/index.js";
import type { DrivenClock } from "../../src/sandbox/world/clock.js";
import { eventually, startTestSandbox, usdcBalance } from "../helpers/keeper-harness.js";
import {
  createLiveClient,
  isClaimCandidate,
  type LiveClient,
  LiveServiceError,
  lastValidBlockHeightOf,
} from "../helpers/live-client.js";

/**
 * The sandbox driven by a client written for the live service (test/helpers/live-client.ts: the
 * requests and fields api-live lists, as the service's own command-line client sends them). Each
 * command's effect is read on the local chain (the wallet's USDC) and in the sandbox's state.
 */
type Json = Record<string, unknown>;

let sandbox: RunningSandbox;
let clock: DrivenClock;

beforeAll(async () => {
  ({ sandbox, clock } = await startTestSandbox());
}, 60_000);
afterAll(() => sandbox?.close());

function clientOf(index: number): LiveClient {
  return createLiveClient({
    baseUrl: sandbox.url,
    apiKey: sandbox.apiKey,
    wallet: sandbox.world.walletKeypair(index),
    rpcUrl: sandbox.chain?.url,
  });
}

const usdc = (client: LiveClient) => usdcBalance(sandbox, client.owner, sandbox.usdcMint);
const recordOf = (pubkey: string) => sandbox.world.findPosition(pubkey);

/** An open market of an event the client listed, with its yes price (micro-USD). */
async function openMarket(
  client: LiveClient,
  provider?: string,
): Promise<{ market: Json; priceMicro: bigint }> {
  const events = await client.listEvents({
    sortBy: "volume24hr",
    includeMarkets: true,
    end: 100,
    ...(provider ? { provider } : {}),
  });
  for (const event of events)
    for (const market of (event.markets as Json[] | undefined) ?? []) {
      const price = (market.pricing as Json | undefined)?.buyYesPriceUsd;
      const taken = sandbox.world
        .allPositions()
        .some((p) => sandbox.world.marketOf(p).marketId === market.marketId);
      if (market.status === "open" && typeof price === "number" && price < 900_000 && !taken)
        return { market, priceMicro: BigInt(price) };
    }
  throw new Error(`no open market listed${provider ? ` for ${provider}` : ""}`);
}

/** Wallet `index`, checked to hold two winners to claim and a position to sell (the sandbox's seed gives them). */
function walletWithClaimAndClose(index: number): number {
  const held = sandbox.world.positionsOfWallet(index);
  const claimable = held.filter((p) => sandbox.world.isClaimable(p)).length;
  const open = held.filter(
    (p) => p.closedAt === undefined && sandbox.world.marketState(sandbox.world.marketOf(p)).status === "open",
  ).length;
  if (claimable < 2 || open < 1)
    throw new Error(`sandbox wallet ${index} no longer holds two winners and an open position`);
  return index;
}

describe("a client written for the live service, on the sandbox", () => {
  it("lists events by volume24hr with markets, each volume24hr a micro-USD string, and searches with includeMarkets", async () => {
    const client = clientOf(0);
    const events = await client.listEvents({ sortBy: "volume24hr", includeMarkets: true, end: 50 });
    expect(events.length).toBeGreaterThan(1);
    const volumes = events.map((e) => e.volume24hrMicroUsd);
    expect(volumes).toEqual([...volumes].sort((a, b) => (a > b ? -1 : a < b ? 1 : 0)));
    for (const event of events) expect(Array.isArray(event.markets)).toBe(true);
    const upcoming = await client.listEvents({ filter: "upcoming", sortBy: "beginAt", end: 20 });
    expect(upcoming.length).toBeGreaterThan(0);
    for (const event of upcoming) expect(event.beginAtSeconds).toBeGreaterThan(sandbox.world.now());
    // Without a key the live service answers at its keyless limits, not 401.
    const keyless = createLiveClient({ baseUrl: sandbox.url, wallet: sandbox.world.walletKeypair(0) });
    expect((await keyless.listEvents({ end: 5 })).length).toBeGreaterThan(0);

    const word = String((events[0]?.metadata as Json | undefined)?.title).split(" ")[0] ?? "";
    const found = await client.searchEvents(word, 5);
    expect(found.length).toBeGreaterThan(0);
    for (const event of found) expect((event.markets as Json[]).length).toBeGreaterThan(0);
  });

  it("opens through /orders/execute, reads the position, closes it; USDC moves by the build's figures", async () => {
    const client = clientOf(0);
    const { market, priceMicro } = await openMarket(client);
    const before = await usdc(client);
    const opened = await client.open({
      marketId: String(market.marketId),
      isYes: true,
      amountMicroUsd: 10_000_000n,
      depositMint: sandbox.usdcMint,
      maxBuyPriceMicroUsd: priceMicro,
    });
    const order = opened.build.order as Json;
    const paid = BigInt(String(order.orderCostUsd)) + BigInt(String(order.estimatedTotalFeeUsd));
    expect(await usdc(client)).toBe(before - paid);
    expect(recordOf(opened.positionPubkey)?.closedAt).toBeUndefined();
    const position = await client.getPosition(opened.positionPubkey);
    expect(position).toMatchObject({ ownerPubkey: client.owner, isYes: true, claimed: false });
    expect((await client.listPositions()).map((p) => p.pubkey)).toContain(opened.positionPubkey);

    const afterOpen = await usdc(client);
    const closed = await client.closeOne(opened.positionPubkey);
    expect(closed.proceedsMicroUsd).toBeGreaterThan(0n);
    expect(await usdc(client)).toBe(afterOpen + closed.proceedsMicroUsd);
    expect(recordOf(opened.positionPubkey)?.closedAt).toBeDefined();
    await expect(client.getPosition(opened.positionPubkey)).rejects.toMatchObject({ status: 404 });
    expect((await client.listPositions()).map((p) => p.pubkey)).not.toContain(opened.positionPubkey);
  }, 60_000);

  it("opens with an amount through POST /prediction/v1/execute with the build's context; the fractional fill is read with contractsMicro", async () => {
    const client = clientOf(1);
    const { market } = await openMarket(client);
    // At $0.30 a contract, $10 buys 33.33 contracts (fills are floored to 0.01 contract).
    sandbox.world.setPrice(String(market.marketId), 300_000, { halfSpreadMicro: 0 });
    const before = await usdc(client);
    const opened = await client.open({
      marketId: String(market.marketId),
      isYes: true,
      amountMicroUsd: 10_000_000n,
      depositMint: sandbox.usdcMint,
      maxBuyPriceMicroUsd: 300_000n,
      via: "execute",
    });
    expect((opened.build.execution as Json).context).toMatchObject({ type: "create_order" });
    const position = await client.getPosition(opened.positionPubkey);
    expect(position).toMatchObject({
      contracts: "33",
      contractsMicro: "33330000",
      contractsDecimal: "33.33",
    });
    expect(BigInt(String(position.sizeUsd))).toBe((33_330_000n * 300_000n) / 1_000_000n);
    const order = opened.build.order as Json;
    const paid = BigInt(String(order.orderCostUsd)) + BigInt(String(order.estimatedTotalFeeUsd));
    expect(await usdc(client)).toBe(before - paid);
    expect(recordOf(opened.positionPubkey)?.contracts).toBe(33.33);
  }, 60_000);

  it("claims a winner through the service and another straight to the RPC; too early is 'not yet', then claimed", async () => {
    const index = walletWithClaimAndClose(2);
    const client = clientOf(index);
    const listed = await client.listPositions();
    const winners = listed.filter((p) => isClaimCandidate(p) && p.claimable === true);
    expect(winners.length).toBeGreaterThanOrEqual(2);
    for (const [i, via] of (["orders/execute", "rpc"] as const).entries()) {
      const pubkey = String(winners[i]?.pubkey);
      const before = await usdc(client);
      const outcome = await client.claim(pubkey, via);
      expect(outcome.status, via).toBe("claimed");
      if (outcome.status !== "claimed") continue;
      expect(outcome.payoutMicroUsd).toBe(BigInt(String(winners[i]?.payoutUsd)));
      expect(await usdc(client)).toBe(before + outcome.payoutMicroUsd);
      expect(recordOf(pubkey)?.claimedAt, via).toBeDefined();
      expect(await client.getPosition(pubkey)).toMatchObject({ claimed: true, claimable: false });
    }

    const held = listed.find(
      (p) => (p.marketMetadata as Json).status === "open" && p.claimable === false && p.openOrders === 0,
    );
    if (held === undefined) throw new Error("the wallet holds no open position to resolve");
    sandbox.world.resolveMarket(String(held.marketId), held.isYes ? "yes" : "no", {
      settleAfterSeconds: 600,
    });
    const before = await usdc(client);
    expect(await client.claim(String(held.pubkey))).toEqual({ status: "not_yet" });
    expect(await usdc(client)).toBe(before);
    expect(recordOf(String(held.pubkey))?.claimedAt).toBeUndefined();
    clock.advance(600);
    const outcome = await client.claim(String(held.pubkey));
    expect(outcome.status).toBe("claimed");
    expect(recordOf(String(held.pubkey))?.claimedAt).toBeDefined();
  }, 90_000);

  it("closes all: sells and claims mixed, each signed and executed; USDC rises by their sum", async () => {
    const index = walletWithClaimAndClose(3);
    const client = clientOf(index);
    // A Forecast position too, opened the CLI's way (/orders/execute): its sell needs the service's co-signature.
    const { market } = await openMarket(client, "bisonfi");
    const forecast = await client.open({
      marketId: String(market.marketId),
      isYes: false,
      amountMicroUsd: 6_000_000n,
      depositMint: sandbox.usdcMint,
      maxBuyPriceMicroUsd: 990_000n,
    });
    expect(recordOf(forecast.positionPubkey)?.closedAt).toBeUndefined();
    const before = await usdc(client);
    const sent = await client.closeAll(100);
    expect(sent.map((s) => s.positionPubkey)).toContain(forecast.positionPubkey);
    const kinds = new Set(sent.map((s) => s.kind));
    expect(kinds).toEqual(new Set(["close", "claim"]));
    const total = sent.reduce((sum, s) => sum + s.amountMicroUsd, 0n);
    expect(await usdc(client)).toBe(before + total);
    for (const s of sent) {
      const record = recordOf(s.positionPubkey);
      if (s.kind === "close") expect(record?.closedAt, s.positionPubkey).toBeDefined();
      else expect(record?.claimedAt, s.positionPubkey).toBeDefined();
    }
    // Nothing left to sell or to claim.
    for (const p of await client.listPositions()) {
      expect(p.claimable, String(p.pubkey)).toBe(false);
      expect((p.marketMetadata as Json).status, String(p.pubkey)).not.toBe("open");
    }
  }, 120_000);

  it("opens a Forecast (bisonfi) position and sells it, both through execute; no claim is asked", async () => {
    const client = clientOf(0);
    const { market } = await openMarket(client, "bisonfi");
    expect(market).toMatchObject({ lifecycleStatus: "open", tradable: true });
    const before = await usdc(client);
    const opened = await client.open({
      marketId: String(market.marketId),
      isYes: true,
      amountMicroUsd: 20_000_000n,
      depositMint: sandbox.usdcMint,
      maxBuyPriceMicroUsd: 990_000n,
      via: "execute",
    });
    expect(opened.build).toMatchObject({
      executionModel: "atomic_swap",
      settlement: "auto",
      requiredSigners: [client.owner, sandbox.chain?.assets.vault.publicKey.toBase58()],
      execution: { context: { type: "bisonfi_swap" } },
    });
    const order = opened.build.order as Json;
    const paid = BigInt(String(order.orderCostUsd)) + BigInt(String(order.estimatedTotalFeeUsd));
    expect(await usdc(client)).toBe(before - paid);
    const position = await client.getPosition(opened.positionPubkey);
    expect(position).toMatchObject({ claimable: false, claimed: false });
    expect(isClaimCandidate(position)).toBe(false);

    const afterOpen = await usdc(client);
    const sold = await client.closeOne(opened.positionPubkey, "execute");
    expect(await usdc(client)).toBe(afterOpen + sold.proceedsMicroUsd);
    expect(recordOf(opened.positionPubkey)?.closedAt).toBeDefined();
  }, 60_000);

  it("a winner of a market that pays by itself, or of a Forecast market, is not claimed: the service pays it", async () => {
    const client = clientOf(1);
    const held = (await client.listPositions()).find(
      (p) => (p.marketMetadata as Json).status === "open" && p.claimable === false && p.openOrders === 0,
    );
    if (held === undefined) throw new Error("wallet 1 holds no open position to resolve");
    sandbox.world.resolveMarket(String(held.marketId), held.isYes ? "yes" : "no", { needsClaim: false });
    const before = await usdc(client);
    expect(await client.claim(String(held.pubkey))).toEqual({ status: "no_claim_required" });
    expect(await usdc(client)).toBe(before);

    const { market } = await openMarket(client, "bisonfi");
    const opened = await client.open({
      marketId: String(market.marketId),
      isYes: true,
      amountMicroUsd: 8_000_000n,
      depositMint: sandbox.usdcMint,
      maxBuyPriceMicroUsd: 990_000n,
    });
    const position = await client.getPosition(opened.positionPubkey);
    const afterOpen = await usdc(client);
    sandbox.world.resolveMarket(String(market.marketId), "yes");
    await eventually("the Forecast winner paid", async () =>
      recordOf(opened.positionPubkey)?.claimedAt !== undefined ? true : undefined,
    );
    // Each winning contract pays $1, to the exact count.
    expect(await usdc(client)).toBe(afterOpen + BigInt(String(position.contractsMicro)));
    expect(await client.claim(opened.positionPubkey)).toEqual({ status: "nothing_to_claim" });
  }, 60_000);

  // Last: a day of world time makes every unclaimed winner of the sandbox due for the service's claim.
  it("a winner left a day after settlement is claimed by the service; the client then finds nothing to claim", async () => {
    const client = clientOf(0);
    const held = (await client.listPositions()).find(
      (p) => (p.marketMetadata as Json).status === "open" && p.claimable === false && p.openOrders === 0,
    );
    if (held === undefined) throw new Error("wallet 0 holds no open position to resolve");
    const pubkey = String(held.pubkey);
    sandbox.world.resolveMarket(String(held.marketId), held.isYes ? "yes" : "no");
    // Every winner of the wallet left unclaimed: the service pays them all, this one among them.
    const due = (await client.listPositions()).filter(isClaimCandidate);
    expect(due.map((p) => p.pubkey)).toContain(pubkey);
    const before = await usdc(client);
    // A day exactly: markets the world resolves on its own meanwhile are not due yet.
    clock.advance(86_400);
    await eventually("the service's claims landed", async () =>
      due.every((p) => recordOf(String(p.pubkey))?.claimedAt !== undefined) ? true : undefined,
    );
    expect(await client.getPosition(pubkey)).toMatchObject({ claimed: true, claimable: false });
    const paid = due.reduce((sum, p) => sum + BigInt(String(p.payoutUsd)), 0n);
    expect(await usdc(client)).toBe(before + paid);
    expect(await client.claim(pubkey)).toEqual({ status: "nothing_to_claim" });
  }, 60_000);

  it("refuses what the live service refuses, with its code", async () => {
    const client = clientOf(0);
    const error = await client.getPosition("11111111111111111111111111111111").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LiveServiceError);
    expect((error as LiveServiceError).status).toBe(404);
  });

  it.each([
    [{ lastValidBlockHeight: 123 }, 123],
    [{ lastValidBlockHeight: "123" }, 123],
  ])("reads txMeta %j's lastValidBlockHeight as a number", (txMeta, expected) => {
    expect(lastValidBlockHeightOf(txMeta)).toBe(expected);
  });

  it("refuses a lastValidBlockHeight that is neither an integer nor a decimal string, naming the field", () => {
    expect(() => lastValidBlockHeightOf({ lastValidBlockHeight: "12a" })).toThrow(
      /^txMeta\.lastValidBlockHeight/,
    );
  });
});
