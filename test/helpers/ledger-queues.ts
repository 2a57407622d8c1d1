import { Queue } from "bullmq";
import { type QueueName, redisKeys } from "../../src/keeper/names.js";
import { Ledger, type LedgerOptions } from "../../src/keeper/state/ledger.js";
import { RedisAttemptStore } from "../../src/signer/attempt-store.js";
import { testRedis } from "./redis.js";

/**
 * A test's own Redis prefix (see testRedis) with the keeper's live keys under it, a ledger and the
 * signer's attempt store over them, and the keeper's BullMQ queues on demand. `cleanup` closes the
 * queues, then deletes every key under the prefix.
 */
export async function ledgerAndQueues(
  label: string,
  ledgerOptions?: { options?: LedgerOptions; nowSeconds?: () => number },
) {
  const base = await testRedis(label);
  const keys = redisKeys(base.prefix, "live");
  const opened = new Map<QueueName, Queue>();
  return {
    ...base,
    keys,
    ledger: new Ledger(base.redis, keys, ledgerOptions?.options, ledgerOptions?.nowSeconds),
    attempts: new RedisAttemptStore(base.redis, keys.attemptsPrefix),
    /** The keeper's queue `name` under this test's prefix: one per name, closed by `cleanup`. */
    queue<Data>(name: QueueName): Queue<Data> {
      const queue = opened.get(name) ?? new Queue(name, { connection: base.redis, prefix: keys.bullPrefix });
      opened.set(name, queue);
      return queue as Queue<Data>;
    },
    async cleanup() {
      for (const queue of opened.values()) await queue.close();
      opened.clear();
      await base.cleanup();
    },
  };
}

export type LedgerAndQueues = Awaited<ReturnType<typeof ledgerAndQueues>>;
