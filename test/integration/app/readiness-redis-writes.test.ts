import type { ChildProcess } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startKeeperOpsServer } from "../../../src/app/ops-server.js";
import { startPrivateRedis } from "../../../src/cli/private-redis.js";
import { loadConfig } from "../../../src/config/load-config.js";
import { redisKeysOf } from "../../../src/keeper/names.js";
import { createQueues } from "../../../src/keeper/queues/queues.js";
import { connectRedis } from "../../../src/keeper/state/redis-connection.js";
import { createCaptureStream } from "../../../src/ops/capture-stream.js";
import type { OpsServer } from "../../../src/ops/http.js";
import { createLogger } from "../../../src/ops/logger.js";
import { createMetrics } from "../../../src/ops/metrics.js";
import { PollTracker } from "../../../src/ops/poll-tracker.js";
import { Watchdog } from "../../../src/ops/watchdog.js";
import { freePort } from "../../helpers/password-redis.js";

/**
 * A Redis that answers PING but refuses writes (a replica, or memory full under noeviction) stops
 * every role: /readyz must say so at once, and why, not minutes later when the polls go stale.
 */
describe("/readyz while Redis refuses writes", () => {
  const cleanups: Array<() => Promise<unknown> | unknown> = [];
  let server: ChildProcess;
  let admin: Redis;
  let ops: OpsServer;

  beforeAll(async () => {
    const url = `redis://127.0.0.1:${await freePort()}`;
    server = await startPrivateRedis({ url });
    cleanups.push(() => server.kill());
    // The RPC node is outside the process: a stand-in that reports itself healthy.
    const rpc: Server = createServer((_request, response) => {
      response.setHeader("content-type", "application/json");
      response.end(JSON.stringify({ jsonrpc: "2.0", id: 1, result: "ok" }));
    });
    await new Promise<void>((resolve) => rpc.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise((resolve) => rpc.close(resolve)));
    const address = rpc.address();
    const rpcPort = typeof address === "object" && address !== null ? address.port : 0;

    const loaded = await loadConfig({ env: {} });
    const config = {
      ...loaded,
      redis: { ...loaded.redis, url, prefix: "readiness-writes" },
      rpc: { ...loaded.rpc, url: `http://127.0.0.1:${rpcPort}` },
      ops: { ...loaded.ops, port: 0 },
    };
    const redis = await connectRedis({ url });
    cleanups.push(() => redis.disconnect());
    admin = redis.duplicate();
    cleanups.push(() => admin.disconnect());
    const keys = redisKeysOf(config);
    const queues = createQueues(redis, keys.queuePrefix, config);
    cleanups.push(() => queues.close());
    ops = await startKeeperOpsServer({
      config,
      redis,
      keys,
      queues,
      wallets: [],
      metrics: createMetrics({ defaultMetrics: false }),
      logger: createLogger({ level: "silent", pretty: false, destination: createCaptureStream() }),
      watchdog: new Watchdog(),
      polls: new PollTracker(),
    });
    cleanups.push(() => ops.close());
  });

  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  async function readyz() {
    const response = await fetch(`${ops.url}/readyz`);
    const body = (await response.json()) as {
      ok: boolean;
      failing: string[];
      checks: Record<string, { ok: boolean; detail: string }>;
    };
    return { status: response.status, body };
  }

  it.each([
    {
      refusal: "memory full under noeviction",
      refuse: () => admin.config("SET", "maxmemory", "1"),
      allow: () => admin.config("SET", "maxmemory", "0"),
      why: /OOM/,
    },
    {
      refusal: "a read-only replica",
      // A master that is not there: the server turns replica, read-only, and keeps answering reads.
      refuse: async () => admin.replicaof("127.0.0.1", await freePort()),
      allow: () => admin.replicaof("NO", "ONE"),
      why: /READONLY/,
    },
  ])("is not ready during $refusal, says why, and is ready again once writes work", async (fault) => {
    expect((await readyz()).status).toBe(200);
    await fault.refuse();
    try {
      const during = await readyz();
      expect(during.status).toBe(503);
      expect(during.body.failing).toEqual(["redisWritable"]);
      expect(during.body.checks.redis?.ok).toBe(true);
      expect(during.body.checks.redisWritable?.detail).toMatch(fault.why);
    } finally {
      await fault.allow();
    }
    const after = await readyz();
    expect(after.status).toBe(200);
    expect(after.body.checks.redisWritable?.ok).toBe(true);
  });
});
