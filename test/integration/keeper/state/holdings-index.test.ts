import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiClient } from "../../../../src/api/index.js";
import { redisKeys } from "../../../../src/keeper/names.js";
import { PauseSwitch } from "../../../../src/keeper/operator/pause.js";
import { type Holding, HoldingsIndex } from "../../../../src/keeper/state/holdings.js";
import { MarketWatcher } from "../../../../src/keeper/watch/market-watcher.js";
import { OTHER_WALLET, WALLET } from "../../../helpers/fixtures.js";
import { testHolding } from "../../../helpers/holdings.js";
import { testRedis } from "../../../helpers/redis.js";

function holding(wallet: string, marketId: string, position: string): Holding {
  return testHolding({ wallet, marketId, eventId: `evt-of-${marketId}`, position });
}

describe("holdings index in Redis", () => {
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let index: HoldingsIndex;

  beforeAll(async () => {
    redis = await testRedis("holdings");
    index = new HoldingsIndex(redis.redis, redisKeys(redis.prefix, "live"));
  });
  afterAll(async () => redis?.cleanup());

  it("records who holds what, replaces a wallet's entries on each sweep, and forgets markets nobody holds", async () => {
    await index.replaceWallet(WALLET, [
      holding(WALLET, "m1", "p1"),
      holding(WALLET, "m1", "p2"),
      holding(WALLET, "m2", "p3"),
    ]);
    await index.replaceWallet(OTHER_WALLET, [holding(OTHER_WALLET, "m2", "p4")]);
    expect(await index.markets()).toEqual(
      new Map([
        ["m1", "evt-of-m1"],
        ["m2", "evt-of-m2"],
      ]),
    );
    let holders = await index.holders(["m1", "m2", "m3"]);
    expect(
      holders
        .get("m1")
        ?.map((h) => h.position)
        .sort(),
    ).toEqual(["p1", "p2"]);
    expect(
      holders
        .get("m2")
        ?.map((h) => `${h.wallet}:${h.position}`)
        .sort(),
    ).toEqual([`${WALLET}:p3`, `${OTHER_WALLET}:p4`].sort());
    expect(holders.get("m3")).toEqual([]);
    expect(holders.get("m1")?.[0]).toMatchObject({
      side: "yes",
      costUsd: "1010000",
      exit: { above: "900000" },
    });

    // The next sweep of WALLET: m1 closed, m3 opened; m2 is still held by the other wallet.
    await index.replaceWallet(WALLET, [holding(WALLET, "m3", "p5")]);
    expect(await index.markets()).toEqual(
      new Map([
        ["m2", "evt-of-m2"],
        ["m3", "evt-of-m3"],
      ]),
    );
    holders = await index.holders(["m1", "m2", "m3"]);
    expect(holders.get("m1")).toEqual([]);
    expect(holders.get("m2")?.map((h) => h.wallet)).toEqual([OTHER_WALLET]);
    expect(holders.get("m3")?.map((h) => h.position)).toEqual(["p5"]);

    // A wallet with nothing left leaves no trace.
    await index.replaceWallet(OTHER_WALLET, []);
    await index.replaceWallet(WALLET, []);
    expect(await index.markets()).toEqual(new Map());
    expect(await redis.redis.keys(`${redis.prefix}:holdings:*`)).toEqual([]);
  });

  it("forgets the wallets no longer configured, at once, and keeps the configured ones' entries", async () => {
    const keys = redisKeys(redis.prefix, "live");
    const DROPPED = "DroppedWa11et1111111111111111111111111111111";
    const OLD = "0ldWa11etWrittenBeforeTheWalletSet1111111111";
    await index.replaceWallet(WALLET, [holding(WALLET, "m1", "p1"), holding(WALLET, "m2", "p2")]);
    await index.replaceWallet(DROPPED, [holding(DROPPED, "m2", "p3"), holding(DROPPED, "m4", "p4")]);
    // Entries as the index wrote them before it kept its set of wallets.
    await redis.redis.hset(keys.holdingsMarket("m5"), OLD, JSON.stringify([holding(OLD, "m5", "p5")]));
    await redis.redis.hset(keys.holdingsMarkets, "m5", "evt-of-m5");
    await redis.redis.sadd(keys.holdingsOfWallet(OLD), "m5");

    // Each cycle's check sees the wallets the index knows of; the whole walk finds the old entries too.
    expect(await index.forgetAllBut(new Set([WALLET, OTHER_WALLET]))).toEqual([DROPPED]);
    expect([...(await index.markets()).keys()].sort()).toEqual(["m1", "m2", "m5"]);
    expect(await index.forgetAllBut(new Set([WALLET]), { everywhere: true })).toEqual([OLD]);
    expect([...(await index.markets()).keys()].sort()).toEqual(["m1", "m2"]);
    const holders = await index.holders(["m1", "m2", "m4", "m5"]);
    expect(holders.get("m1")?.map((h) => h.position)).toEqual(["p1"]);
    expect(holders.get("m2")?.map((h) => `${h.wallet}:${h.position}`)).toEqual([`${WALLET}:p2`]);
    expect(holders.get("m4")).toEqual([]);
    expect(holders.get("m5")).toEqual([]);
    expect(await redis.redis.exists(keys.holdingsOfWallet(DROPPED), keys.holdingsOfWallet(OLD))).toBe(0);
    expect(await redis.redis.smembers(keys.holdingsWallets)).toEqual([WALLET]);
    // Nothing more to forget; a configured wallet's next sweep is indexed as before.
    expect(await index.forgetAllBut(new Set([WALLET]), { everywhere: true })).toEqual([]);
    await index.replaceWallet(WALLET, []);
    expect(await redis.redis.keys(`${redis.prefix}:holdings:*`)).toEqual([]);
  });

  it("the market watcher counts only the markets configured wallets hold", async () => {
    const keys = redisKeys(redis.prefix, "live");
    const DROPPED = "DroppedWa11et1111111111111111111111111111111";
    await index.replaceWallet(DROPPED, [holding(DROPPED, "m7", "p7")]);
    const watched: number[] = [];
    const watcher = new MarketWatcher({
      // With nothing held by a configured wallet, the cycle reads no market: the service is never asked.
      client: {} as ApiClient,
      index,
      redis: redis.redis,
      keys,
      poll: undefined as never,
      pause: new PauseSwitch(redis.redis, keys),
      logger: pino({ level: "silent" }),
      settings: { bandPct: 2, retriggerSeconds: 15, pageSize: 50, wallets: new Set([WALLET]) },
      events: { onWatched: (count) => watched.push(count) },
      now: () => nowMs,
    });
    let nowMs = 1_000_000;
    expect((await watcher.run()).watched).toBe(0);
    expect(watched).toEqual([0]);
    expect(await index.markets()).toEqual(new Map());
    // A poll job queued before the config changed writes the dropped wallet again: a later check forgets it.
    await index.replaceWallet(DROPPED, [holding(DROPPED, "m8", "p8")]);
    nowMs += 15_000;
    expect((await watcher.run()).watched).toBe(0);
    expect(await index.markets()).toEqual(new Map());
  });
});
