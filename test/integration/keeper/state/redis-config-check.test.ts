import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError } from "../../../../src/core/errors.js";
import { checkRedisForKeeper, connectRedis } from "../../../../src/keeper/state/redis-connection.js";
import { captureLogger } from "../../../helpers/capture-logger.js";
import { type TestCluster, testCluster } from "../../../helpers/redis-cluster.js";

// The start-up check of a Redis Cluster asks every master: a keyless CONFIG GET would reach one at
// random and pass while another master evicts the ledger's or a queue's keys.

/** Sets `name` on the node at `at` (host:port) for the length of `run`, then puts back what it was. */
async function withConfig<T>(at: string, name: string, value: string, run: () => Promise<T>): Promise<T> {
  const split = at.lastIndexOf(":");
  const node = new Redis({ host: at.slice(0, split), port: Number(at.slice(split + 1)), lazyConnect: true });
  await node.connect();
  const [, was] = (await node.config("GET", name)) as string[];
  await node.config("SET", name, value);
  try {
    return await run();
  } finally {
    await node.config("SET", name, was ?? "");
    node.disconnect();
  }
}

/** What the check throws, or undefined when it passes. */
async function checkError(redis: Redis, logger = captureLogger().logger): Promise<Error | undefined> {
  try {
    await checkRedisForKeeper(redis, logger);
    return undefined;
  } catch (error) {
    return error as Error;
  }
}

describe("checkRedisForKeeper on a Redis Cluster", () => {
  let cluster: TestCluster;
  let redis: Redis;
  beforeAll(async () => {
    // Its own cluster: the test turns a master's eviction on, which another test's keeper would refuse.
    cluster = await testCluster({ ownCluster: true });
    redis = await connectRedis({ url: "redis://unused", cluster: cluster.nodes });
  });
  afterAll(async () => {
    redis?.disconnect();
    await cluster?.stop();
  });

  it("passes when every master has noeviction and persists, and warns of nothing", async () => {
    const { logger, lines } = captureLogger();
    expect(await checkError(redis, logger)).toBeUndefined();
    expect(lines().filter((line) => line.level === "warn")).toEqual([]);
  });

  it("refuses a cluster where any one master evicts, naming that master, whichever it is", async () => {
    for (const master of cluster.nodes) {
      const error = await withConfig(master, "maxmemory-policy", "allkeys-lru", () => checkError(redis));
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).problems).toEqual([
        `redis maxmemory-policy: expected "noeviction" on every master of the cluster (BullMQ and the ledger must never be evicted), found "allkeys-lru" on the master at ${master}`,
      ]);
    }
    expect(await checkError(redis)).toBeUndefined();
  });

  it("warns of a master that persists nothing, naming it", async () => {
    const [master] = cluster.nodes as [string];
    const { logger, lines } = captureLogger();
    const error = await withConfig(master, "appendonly", "no", () => checkError(redis, logger));
    expect(error).toBeUndefined();
    const warnings = lines().filter((line) => line.level === "warn");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({
      master,
      msg: "redis persists nothing (no RDB snapshots, no AOF): a Redis restart loses the ledger and queued work",
    });
  });
});
