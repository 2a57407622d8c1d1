import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it, vi } from "vitest";
import { loadConfig } from "../../../../src/config/load-config.js";
import { QUEUES, type QueueName } from "../../../../src/keeper/names.js";
import { createQueues } from "../../../../src/keeper/queues/queues.js";
import { connectRedis } from "../../../../src/keeper/state/redis-connection.js";
import { startPasswordRedis } from "../../../helpers/password-redis.js";

/**
 * A Redis outage is an expected failure: Keeper rides it out and logs it through its logger. BullMQ
 * prints a queue's error that nobody listens to with its stack on stderr, outside the logger and its
 * secret scrubber, on every reconnect; Keeper's queues are listened to.
 */
describe("queues during a Redis outage", () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  });

  it("print nothing to stderr, and hand each error to their listener", async () => {
    const server = await startPasswordRedis("queue-errors-secret");
    cleanups.push(() => server.stop());
    const redis = await connectRedis({ url: server.url, password: "queue-errors-secret" });
    cleanups.push(async () => redis.disconnect());
    const heard: QueueName[] = [];
    const queues = createQueues(redis, "queue-errors", await loadConfig({ env: {} }), (queue) => {
      heard.push(queue);
    });
    cleanups.push(() => queues.close());
    await queues.poll.waitUntilReady();
    const printed = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      await server.stop();
      // Bounded: until a queue heard the outage (the client retries every 2 s at most).
      for (let waited = 0; heard.length === 0 && waited < 10_000; waited += 100) await sleep(100);
      expect(heard.length).toBeGreaterThan(0);
      expect(new Set(heard).size).toBeLessThanOrEqual(Object.keys(QUEUES).length);
      expect(printed).not.toHaveBeenCalled();
    } finally {
      printed.mockRestore();
    }
  });
});
