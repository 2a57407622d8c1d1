import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningKeeper } from "../../src/app/start-keeper.js";
import type { Position } from "../../src/core/schemas/prediction.js";
import type { RunningSandbox } from "../../src/sandbox/index.js";
import {
  eventually,
  loadTestConfig,
  positionsOf,
  startTestKeeper,
  startTestSandbox,
  usdcBalance,
  writeKeeperConfig,
} from "../helpers/keeper-harness.js";
import { lastPollsOf } from "../helpers/last-polls.js";
import { testRedis } from "../helpers/redis.js";

const ONE_USD = 1_000_000;

/** The market's yes price that puts a position's own side at `sidePriceMicro`. */
function yesPriceFor(position: Position, sidePriceMicro: number): number {
  const side = Math.min(ONE_USD - 10_000, Math.max(10_000, Math.round(sidePriceMicro)));
  return position.isYes ? side : ONE_USD - side;
}

/** Waits until every configured wallet was polled `count` more times than now. */
async function morePolls(keeper: RunningKeeper, wallets: readonly string[], count: number) {
  const ticks = await lastPollsOf(keeper.redis, keeper.keys);
  await eventually(`${count} more polls`, async () => {
    const now = await lastPollsOf(keeper.redis, keeper.keys);
    return wallets.every((w) => Number(now[w] ?? 0) >= Number(ticks[w] ?? 0) + count) ? true : undefined;
  });
}

describe("exit-rules end to end: take-profit and stop-loss close once, open orders are left alone", () => {
  let sandbox: RunningSandbox;
  let keeper: RunningKeeper;
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let wallet: string;
  let takeProfit: Position;
  let stopLoss: Position;
  let withOrders: Position;

  beforeAll(async () => {
    ({ sandbox } = await startTestSandbox());
    redis = await testRedis("e2e-exit");
    wallet = sandbox.wallets[0] ?? "";
    const open = (await positionsOf(sandbox, wallet)).filter(
      (p) => p.marketMetadata.status === "open" && !p.claimable && !p.claimed,
    );
    const free = open.filter((p) => p.openOrders === 0);
    const busy = open.find((p) => p.openOrders > 0);
    if (free.length < 2 || !busy || new Set(open.map((p) => p.marketId)).size !== open.length)
      throw new Error("the sandbox seed no longer gives wallet 0 two free positions and one with orders");
    [takeProfit, stopLoss] = free as [Position, Position];
    withOrders = busy;
    // Each position starts at its own average price: no rule holds before the test moves a price.
    for (const p of [takeProfit, stopLoss, withOrders])
      sandbox.world.setPrice(p.marketId, yesPriceFor(p, Number(p.avgPriceUsd)));

    const side = (p: Position) => (p.isYes ? "yes" : "no");
    const extra = `strategies:
  - name: exit-rules
    overrides:
      - match: { marketId: "${takeProfit.marketId}", side: ${side(takeProfit)} }
        rules: { takeProfitPct: 20 }
      - match: { marketId: "${stopLoss.marketId}", side: ${side(stopLoss)} }
        rules: { stopLossPct: 20 }
      - match: { marketId: "${withOrders.marketId}", side: ${side(withOrders)} }
        rules: { takeProfitPct: 20 }
`;
    const config = await loadTestConfig(
      await writeKeeperConfig(sandbox, redis.prefix, {
        extra,
        walletYaml: `wallets:\n  - pubkey: ${wallet}\n`,
      }),
    );
    ({ keeper } = await startTestKeeper(config, sandbox));
  }, 60_000);

  afterAll(async () => {
    await keeper?.stop();
    await sandbox?.close();
    await redis?.cleanup();
  });

  it("closes each crossing position once through DELETE /positions/{pubkey}, signed and landed", async () => {
    // Prices at cost: polls run and ask for nothing.
    await morePolls(keeper, [wallet], 2);
    expect(await keeper.ledger.list()).toEqual([]);
    const before = await usdcBalance(sandbox, wallet, sandbox.usdcMint);

    sandbox.world.setPrice(
      takeProfit.marketId,
      yesPriceFor(takeProfit, Number(takeProfit.avgPriceUsd) * 1.5),
    );
    sandbox.world.setPrice(stopLoss.marketId, yesPriceFor(stopLoss, Number(stopLoss.avgPriceUsd) * 0.5));
    sandbox.world.setPrice(
      withOrders.marketId,
      yesPriceFor(withOrders, Number(withOrders.avgPriceUsd) * 1.5),
    );

    const expected = [`close-${takeProfit.pubkey}`, `close-${stopLoss.pubkey}`].sort();
    const rows = await eventually(
      "both closes confirmed",
      async () => {
        const closes = (await keeper.ledger.list()).filter((r) => r.kind === "close");
        return closes.filter((r) => r.status === "confirmed").length >= 2 ? closes : undefined;
      },
      60_000,
    );
    expect(rows.map((r) => r.key).sort()).toEqual(expected);
    for (const row of rows) {
      expect(row.status).toBe("confirmed");
      expect(row.signature).toBeTruthy();
      expect(row.strategy).toBe("exit-rules");
      expect(BigInt(row.amountMicroUsd ?? "0")).toBeGreaterThan(0n);
    }
    expect(rows.find((r) => r.key === `close-${takeProfit.pubkey}`)?.reason).toMatch(
      /^take-profit: realizable pnl/,
    );
    expect(rows.find((r) => r.key === `close-${stopLoss.pubkey}`)?.reason).toMatch(
      /^stop-loss: realizable pnl/,
    );

    // The service no longer lists them; the position with an open order is still there, untouched.
    const after = await positionsOf(sandbox, wallet);
    expect(after.find((p) => p.pubkey === takeProfit.pubkey)).toBeUndefined();
    expect(after.find((p) => p.pubkey === stopLoss.pubkey)).toBeUndefined();
    expect(after.find((p) => p.pubkey === withOrders.pubkey)?.pnlUsdPercent).toBeGreaterThan(20);

    // The proceeds are on the owner's USDC account, to the micro-dollar the builds announced.
    const proceeds = rows.reduce((sum, r) => sum + BigInt(r.amountMicroUsd ?? "0"), 0n);
    expect((await usdcBalance(sandbox, wallet, sandbox.usdcMint)) - before).toBe(proceeds);

    // More polls ask for nothing new: one close per position, none for the one with orders.
    await morePolls(keeper, [wallet], 2);
    const again = await keeper.ledger.list();
    expect(again.map((r) => r.key).sort()).toEqual(expected);
    const metrics = await keeper.metrics.render();
    expect(metrics).toContain('keeper_transactions_total{kind="close",outcome="confirmed"} 2');
  }, 120_000);
});

/** The value of one sample of the keeper's metrics, 0 when absent. */
async function metricValue(keeper: RunningKeeper, sample: string): Promise<number> {
  const text = await keeper.metrics.render();
  const line = text.split("\n").find((l) => l.startsWith(`${sample} `));
  return line === undefined ? 0 : Number(line.slice(sample.length + 1));
}

describe("exit-rules end to end: a category selector overrides the global rule, events fetched once", () => {
  let sandbox: RunningSandbox;
  let keeper: RunningKeeper;
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let wallet: string;
  let kept: Position;
  let closed: Position;
  let eventCount: number;
  const GET_EVENT = 'keeper_api_requests_total{endpoint="getEvent",status="200"}';
  const SEARCH_EVENTS = 'keeper_api_requests_total{endpoint="searchEvents",status="200"}';

  beforeAll(async () => {
    ({ sandbox } = await startTestSandbox());
    redis = await testRedis("e2e-exit-category");
    wallet = sandbox.wallets[0] ?? "";
    const all = await positionsOf(sandbox, wallet);
    const open = all.filter((p) => p.marketMetadata.status === "open" && !p.claimable && !p.claimed);
    // Only the events of positions that can still be exited are read.
    eventCount = new Set(open.map((p) => p.eventId)).size;
    if (eventCount === new Set(all.map((p) => p.eventId)).size)
      throw new Error("the sandbox seed no longer gives wallet 0 a settled position of another event");
    const categoryOf = (p: Position) => sandbox.world.events.find((e) => e.eventId === p.eventId)?.category;
    const free = open.filter((p) => p.openOrders === 0);
    const first = free[0];
    const other = free.find((p) => first && categoryOf(p) !== categoryOf(first));
    if (!first || !other)
      throw new Error("the sandbox seed no longer gives wallet 0 two free positions in different categories");
    [kept, closed] = [first, other];
    // Every open position at its own average price: no rule holds before the test moves a price.
    for (const p of open) sandbox.world.setPrice(p.marketId, yesPriceFor(p, Number(p.avgPriceUsd)));

    // The global take-profit applies to both; the category override turns it off for `kept`'s
    // category, and beats the (less specific) provider override that would close it sooner.
    const keptEvent = sandbox.world.events.find((e) => e.eventId === kept.eventId);
    const extra = `strategies:
  - name: exit-rules
    takeProfitPct: 20
    overrides:
      - match: { provider: ${keptEvent?.provider} }
        rules: { takeProfitPct: 10 }
      - match: { category: ${categoryOf(kept)} }
        rules: { takeProfitPct: null }
`;
    const config = await loadTestConfig(
      await writeKeeperConfig(sandbox, redis.prefix, {
        extra,
        walletYaml: `wallets:\n  - pubkey: ${wallet}\n`,
      }),
    );
    ({ keeper } = await startTestKeeper(config, sandbox));
  }, 60_000);

  afterAll(async () => {
    await keeper?.stop();
    await sandbox?.close();
    await redis?.cleanup();
  });

  it("closes only the position outside the category, and polls fetch no event twice", async () => {
    await morePolls(keeper, [wallet], 2);
    expect(await keeper.ledger.list()).toEqual([]);
    // Each event of the wallet's positions was fetched once. The live service's events carry no
    // provider, so it was learnt by search, once per event: later polls search no more.
    expect(await metricValue(keeper, GET_EVENT)).toBe(eventCount);
    const searches = await metricValue(keeper, SEARCH_EVENTS);
    expect(searches).toBeGreaterThanOrEqual(eventCount);

    for (const p of [kept, closed])
      sandbox.world.setPrice(p.marketId, yesPriceFor(p, Number(p.avgPriceUsd) * 1.5));

    const rows = await eventually(
      "the close confirmed",
      async () => {
        const closes = (await keeper.ledger.list()).filter((r) => r.kind === "close");
        return closes.some((r) => r.status === "confirmed") ? closes : undefined;
      },
      60_000,
    );
    expect(rows.map((r) => [r.key, r.status])).toEqual([[`close-${closed.pubkey}`, "confirmed"]]);
    expect(rows[0]?.reason).toMatch(/^take-profit: realizable pnl [\d.]+% >= 20%$/);

    // More polls: still nothing for the position the category override protects, though it is up 50 %.
    await morePolls(keeper, [wallet], 2);
    expect((await keeper.ledger.list()).map((r) => r.key)).toEqual([`close-${closed.pubkey}`]);
    const after = await positionsOf(sandbox, wallet);
    expect(after.find((p) => p.pubkey === closed.pubkey)).toBeUndefined();
    expect(after.find((p) => p.pubkey === kept.pubkey)?.pnlUsdPercent).toBeGreaterThan(20);

    // Steady state: every later poll answered from the cache.
    expect(await metricValue(keeper, GET_EVENT)).toBe(eventCount);
    expect(await metricValue(keeper, SEARCH_EVENTS)).toBe(searches);
    expect(await metricValue(keeper, 'keeper_event_lookups_total{outcome="fetched"}')).toBe(eventCount);
    expect(await metricValue(keeper, 'keeper_event_lookups_total{outcome="cached"}')).toBeGreaterThan(0);
    expect(await metricValue(keeper, 'keeper_event_lookups_total{outcome="failed"}')).toBe(0);
  }, 120_000);
});
