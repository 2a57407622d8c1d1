import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Holding, HoldingsIndex } from "../../../src/keeper/holdings.js";
import { redisKeys } from "../../../src/keeper/names.js";
import { OTHER_WALLET, WALLET } from "../../helpers/fixtures.js";
import { testRedis } from "../../helpers/redis.js";

function holding(wallet: string, marketId: string, position: string): Holding {
  return {
    wallet,
    position,
    marketId,
    eventId: `evt-of-${marketId}`,
    side: "yes",
    sizeUsd: "1000000",
    costUsd: "1010000",
    claimable: false,
    resolvedSeen: false,
    markUsd: "500000",
    exit: { above: "900000" },
    sweptAt: 1_700_000_000,
  };
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
});
