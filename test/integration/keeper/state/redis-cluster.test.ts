import { randomUUID } from "node:crypto";
import { Worker } from "bullmq";
import type { Cluster, Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiKeyFingerprint } from "../../../../src/api/rate-limiter.js";
import { createRequestBudget } from "../../../../src/api/request-budget.js";
import { type KeeperConfig, loadConfig } from "../../../../src/config/load-config.js";
import type { Intent } from "../../../../src/core/intent.js";
import { QUEUES, type RedisKeys, redisKeys, redisKeysOf } from "../../../../src/keeper/names.js";
import { PauseSwitch } from "../../../../src/keeper/operator/pause.js";
import { enqueueBuild } from "../../../../src/keeper/queues/enqueue.js";
import { createQueues, type KeeperQueues } from "../../../../src/keeper/queues/queues.js";
import { HoldingsIndex } from "../../../../src/keeper/state/holdings.js";
import { Ledger } from "../../../../src/keeper/state/ledger.js";
import { PollRecords } from "../../../../src/keeper/state/poll-record.js";
import { connectRedis, redisTargetOf } from "../../../../src/keeper/state/redis-connection.js";
import { readKeeperStatus } from "../../../../src/status/status-report.js";
import { WALLET } from "../../../helpers/fixtures.js";
import { testHolding } from "../../../helpers/holdings.js";
import { eventually } from "../../../helpers/keeper-harness.js";
import { type TestCluster, testCluster } from "../../../helpers/redis-cluster.js";
import { countSocketWrites } from "../../../helpers/socket-writes.js";

const claim = (position: string): Intent => ({
  kind: "claim",
  key: `claim-${position}`,
  wallet: WALLET,
  strategy: "auto-claim",
  positionPubkey: position,
});

/** The client of the master that holds `key`'s slot. */
async function masterOf(redis: Redis, key: string): Promise<Redis> {
  const cluster = redis as unknown as Cluster;
  const slot = (await redis.call("CLUSTER", "KEYSLOT", key)) as number;
  const shards = (await redis.call("CLUSTER", "SLOTS")) as [number, number, [string, number]][];
  const shard = shards.find(([from, to]) => slot >= from && slot <= to);
  const master = cluster.nodes("master").find((n) => n.options.port === shard?.[2][1]);
  if (!master) throw new Error(`no master for slot ${slot}`);
  return master;
}

/** The hash slot of each key, as the cluster computes it. */
async function slotsOf(redis: Redis, keys: readonly string[]): Promise<Set<number>> {
  const slots = await Promise.all(keys.map((k) => redis.call("CLUSTER", "KEYSLOT", k) as Promise<number>));
  return new Set(slots);
}

describe("Keeper's state on a Redis Cluster", () => {
  let cluster: TestCluster;
  let config: KeeperConfig;
  let redis: Redis;
  let keys: RedisKeys;
  let queues: KeeperQueues | undefined;
  const prefix = `t-cluster-${randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    cluster = await testCluster();
    config = await loadConfig({
      env: { KEEPER_REDIS_CLUSTER: cluster.nodes.join(","), KEEPER_REDIS_PREFIX: prefix },
    });
    redis = await connectRedis(redisTargetOf(config));
    keys = redisKeysOf(config);
  });
  afterAll(async () => {
    await queues?.close();
    redis?.disconnect();
    await cluster?.deleteKeys(prefix);
    await cluster?.stop();
  });

  it("keeps each concern's keys in one slot and spreads the concerns and queues over the masters", async () => {
    const ledger = [
      keys.ledgerIntent("a"),
      keys.ledgerIndex,
      keys.ledgerInFlight(WALLET),
      keys.ledgerTriggerOrders(WALLET),
    ];
    const holdings = [
      keys.holdingsMarkets,
      keys.holdingsMarket("m1"),
      keys.holdingsOfWallet(WALLET),
      keys.holdingsWallets,
    ];
    const polls = [keys.pollSeen(WALLET), keys.pollSeen("other"), keys.lastPolls, keys.pollLock(WALLET)];
    for (const concern of [ledger, holdings, polls]) expect((await slotsOf(redis, concern)).size).toBe(1);
    const queueSlots = await slotsOf(
      redis,
      Object.values(QUEUES).map((q) => `${keys.queuePrefix(q)}:${q}:wait`),
    );
    expect(queueSlots.size).toBe(4);
    // Untagged names (a single Redis's) would put one intent's record and its wallet's set apart.
    const single = redisKeys(config.redis.prefix, "live");
    expect((await slotsOf(redis, [single.ledgerIntent("a"), single.ledgerInFlight(WALLET)])).size).toBe(2);
  });

  it("runs the ledger's scripts and transactions, the holdings index and the poll records", async () => {
    const ledger = new Ledger(redis, keys);
    expect(await ledger.admit(claim("p1"))).toEqual({
      admitted: true,
      tries: 1,
      recordId: expect.any(String),
    });
    expect(await ledger.admit(claim("p1"))).toEqual({ admitted: false, status: "pending", owner: WALLET });
    await ledger.admit(claim("p2"));
    await ledger.update("claim-p1", { status: "confirmed", signature: "sig1" });
    expect((await ledger.inFlight(WALLET)).map((r) => r.key)).toEqual(["claim-p2"]);
    expect((await ledger.list()).map((r) => r.key).sort()).toEqual(["claim-p1", "claim-p2"]);

    const index = new HoldingsIndex(redis, keys);
    await index.replaceWallet(WALLET, [
      testHolding({ wallet: WALLET, marketId: "m1", eventId: "e1", position: "p1" }),
    ]);
    expect([...(await index.holders(["m1", "m2"])).keys()]).toEqual(["m1", "m2"]);
    expect(await index.forgetAllBut(new Set(), { everywhere: true })).toEqual([WALLET]);
    expect(await index.markets()).toEqual(new Map());

    const records = new PollRecords(redis, keys);
    await records.record(WALLET, { positions: [] }, 100);
    expect([...(await records.read([WALLET, "other"])).keys()]).toEqual([WALLET]);

    const pause = new PauseSwitch(redis, keys);
    await pause.pause("test", 100);
    expect(await pause.isPaused()).toBe(true);
    await pause.resume();
  });

  it("sends one turn's commands to a master in one write (coalesceWrites on each node's client)", async () => {
    const probe = keys.ledgerIntent("coalesce-probe"); // in the ledger's slot, deleted in the same turn
    const master = await masterOf(redis, probe);
    const writes = countSocketWrites(master);
    const answers = await Promise.all([redis.set(probe, "v"), redis.get(probe), redis.del(probe)]);
    expect(answers).toEqual(["OK", "v", 1]);
    expect(writes.count).toBe(1);
  });

  it("moves jobs through a queue whose keys share its own hash tag", async () => {
    queues = createQueues(redis, keys.queuePrefix, config);
    const seen: string[] = [];
    const worker = new Worker(
      QUEUES.actions,
      async (job) => {
        seen.push(job.data.intentKey);
      },
      { connection: redis, prefix: keys.queuePrefix(QUEUES.actions) },
    );
    try {
      await enqueueBuild(queues.actions, "claim-p2", { tries: 1 }, 1);
      await eventually("the build job to run", async () => (seen.length > 0 ? seen : undefined));
      expect(seen).toEqual(["claim-p2"]);
    } finally {
      await worker.close();
    }
  });

  it("reads the status (`keeper status`, the status page) from the cluster", async () => {
    const status = await readKeeperStatus({ config, redis, keys }, 200);
    expect(status.queues[QUEUES.actions]?.completed).toBe(1);
    expect(status.intents).toMatchObject({ confirmed: 1, pending: 1 });
  });

  it("names the cluster it cannot reach, quickly, without a password in sight", async () => {
    const unreachable = connectRedis({ url: config.redis.url, cluster: ["127.0.0.1:1", "127.0.0.1:2"] });
    await expect(unreachable).rejects.toThrow(
      "cannot reach Redis Cluster at 127.0.0.1:1,127.0.0.1:2: None of startup nodes is available",
    );
  });

  it("shares the plan's rate limit through the cluster", async () => {
    const budget = createRequestBudget({ config, apiKey: "cluster-test-key", redis });
    for (let i = 0; i < 3; i += 1) await budget.targeted.acquire();
    // The window's log is in the cluster (a script refused there would have thrown, not gone local).
    const log = `{${config.redis.prefix}:api-window}:${apiKeyFingerprint("cluster-test-key")}:log`;
    expect(await redis.zcard(log)).toBe(3);
  });
});
