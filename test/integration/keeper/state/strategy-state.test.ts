import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { redisKeys } from "../../../../src/keeper/names.js";
import { StrategyStateStore } from "../../../../src/keeper/state/strategy-state.js";
import { OTHER_WALLET, WALLET } from "../../../helpers/fixtures.js";
import { testRedis } from "../../../helpers/redis.js";

describe("strategy states in Redis", () => {
  let redis: Awaited<ReturnType<typeof testRedis>>;
  const storeOf = (prefix: string) => new StrategyStateStore(redis.redis, redisKeys(prefix, "live"));

  beforeAll(async () => {
    redis = await testRedis("strategy-state");
  });
  afterAll(async () => redis?.cleanup());

  it("loads every strategy of a wallet at once, an empty state where none is stored", async () => {
    const store = storeOf(`${redis.prefix}-a`);
    await store.save(WALLET, "dca", { rounds: 3 });
    await store.save(OTHER_WALLET, "exit-rules", { armed: true });
    const loaded = await store.loadAll(WALLET, ["dca", "exit-rules"]);
    expect(Object.fromEntries(loaded.states)).toEqual({ dca: { rounds: 3 }, "exit-rules": {} });
    expect(await store.load(WALLET, "dca")).toEqual({ rounds: 3 });
  });

  it("writes back only the states that changed", async () => {
    const prefix = `${redis.prefix}-b`;
    const store = storeOf(prefix);
    await store.save(WALLET, "dca", { rounds: 1 });
    await store.save(WALLET, "exit-rules", { armed: false });
    const loaded = await store.loadAll(WALLET, ["dca", "exit-rules", "auto-claim"]);
    // Someone else writes exit-rules after the load; the poll's unchanged copy must not undo it.
    await store.save(WALLET, "exit-rules", { armed: true });
    const written = await store.saveChanged(
      WALLET,
      [
        ["dca", { rounds: 2 }],
        ["exit-rules", { armed: false }],
        ["auto-claim", {}],
      ],
      loaded,
    );
    // dca changed; auto-claim had nothing stored, and an empty state is stored once.
    expect(written).toBe(2);
    expect(await store.load(WALLET, "dca")).toEqual({ rounds: 2 });
    expect(await store.load(WALLET, "exit-rules")).toEqual({ armed: true });
    const key = redisKeys(prefix, "live").strategyState(WALLET, "auto-claim");
    expect(await redis.redis.get(key)).toBe("{}");
  });

  it("writes nothing when no state changed", async () => {
    const store = storeOf(`${redis.prefix}-c`);
    await store.save(WALLET, "dca", { rounds: 5 });
    const loaded = await store.loadAll(WALLET, ["dca"]);
    expect(await store.saveChanged(WALLET, loaded.states, loaded)).toBe(0);
    expect(await store.loadAll(WALLET, [])).toEqual({ states: new Map(), stored: new Map() });
  });
});
