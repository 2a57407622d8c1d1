import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ProtectionsConfig } from "../../../../src/keeper/operator/circuit-breakers.js";
import { Protections } from "../../../../src/keeper/operator/protections.js";
import { processPoll } from "../../../../src/keeper/pipeline/poll-worker.js";
import { HoldingsIndex } from "../../../../src/keeper/state/holdings.js";
import { coalesceWrites } from "../../../../src/ops/coalesce-writes.js";
import { position } from "../../../helpers/fixtures.js";
import { type LedgerAndQueues, ledgerAndQueues } from "../../../helpers/ledger-queues.js";
import { quietExitRules, testPollDeps } from "../../../helpers/poll-deps.js";
import { countSocketWrites } from "../../../helpers/socket-writes.js";

const HELD = position({ openOrders: 0, sellPriceUsd: "650000" });
const NOW = 1_767_355_200;
const strategies = quietExitRules;

describe("a poll's Redis work on a single Redis", () => {
  let ctx: LedgerAndQueues;
  beforeEach(async () => {
    ctx = await ledgerAndQueues("poll-round-trips");
    coalesceWrites(ctx.redis); // as Keeper's own connection (connectRedis)
  });
  afterEach(async () => {
    await ctx.cleanup();
  });

  const poll = (protections: ProtectionsConfig = {}) =>
    processPoll(
      { id: "poll-1", data: { wallet: HELD.ownerPubkey, kind: "positions", tick: NOW } },
      testPollDeps(ctx, [HELD], {
        strategies,
        now: () => new Date(NOW * 1000),
        holdings: { index: new HoldingsIndex(ctx.redis, ctx.keys) },
        // As by default: no breaker enabled (an enabled one adds its own round trip).
        protections: new Protections(ctx.redis, ctx.keys, protections),
      }),
    );

  /** The keys of every command the client sends from now on (scripts' keys included). */
  const keysSent = () => {
    const sent: string[] = [];
    const send = ctx.redis.sendCommand.bind(ctx.redis);
    ctx.redis.sendCommand = ((command: { args: unknown[] }, ...rest: unknown[]) => {
      sent.push(...command.args.filter((arg): arg is string => typeof arg === "string"));
      return (send as (...a: unknown[]) => unknown)(command, ...rest);
    }) as typeof ctx.redis.sendCommand;
    return sent;
  };

  it("reads the breakers' state only when one is configured", async () => {
    const breakerKeys = [ctx.keys.protectionsExits, ctx.keys.protectionsResets];
    const sentByDefault = keysSent();
    await poll();
    expect(sentByDefault.filter((key) => breakerKeys.includes(key))).toEqual([]);
    const sentWithLimit = keysSent();
    await poll({ dailyLossLimitUsd: 50 });
    expect(sentWithLimit.filter((key) => breakerKeys.includes(key)).sort()).toEqual([...breakerKeys].sort());
  });

  it("goes in four writes (pause and lock; reads; what it saw; states, time and lock), and each landed", async () => {
    await poll(); // the first poll defines the scripts: a script's first run may send its text
    await ctx.redis.del(ctx.keys.pollSeen(HELD.ownerPubkey), ctx.keys.lastPolls, ctx.keys.holdingsMarkets);
    const [redisSecondBefore] = await ctx.redis.time();
    const writes = countSocketWrites(ctx.redis);
    const result = await poll();
    expect(result).toMatchObject({ intents: 0, admitted: 0 });
    expect(result.skipped).toBeUndefined();
    expect(writes.count).toBe(4);
    // What each round trip carried was written; the poll's time is Redis's second when it landed.
    const polledAt = Number(await ctx.redis.zscore(ctx.keys.lastPolls, HELD.ownerPubkey));
    expect(polledAt).toBeGreaterThanOrEqual(Number(redisSecondBefore));
    expect(polledAt).toBeLessThanOrEqual(Number((await ctx.redis.time())[0]));
    expect(await ctx.redis.hget(ctx.keys.pollSeen(HELD.ownerPubkey), "held")).toBe("1");
    expect(await ctx.redis.ttl(ctx.keys.pollSeen(HELD.ownerPubkey))).toBeGreaterThan(0);
    expect([...(await new HoldingsIndex(ctx.redis, ctx.keys).markets()).keys()]).toEqual([HELD.marketId]);
    expect(await ctx.redis.exists(ctx.keys.pollLock(HELD.ownerPubkey))).toBe(0);
  });

  it("paused: the lock taken beside the pause check is given back, and nothing else is written", async () => {
    await ctx.redis.set(ctx.keys.paused, JSON.stringify({ reason: "test", since: NOW }));
    expect(await poll()).toMatchObject({ skipped: "paused" });
    expect(await ctx.redis.exists(ctx.keys.pollLock(HELD.ownerPubkey))).toBe(0);
    expect(await ctx.redis.exists(ctx.keys.pollSeen(HELD.ownerPubkey))).toBe(0);
    expect(await ctx.redis.zscore(ctx.keys.lastPolls, HELD.ownerPubkey)).toBeNull();
  });
});
