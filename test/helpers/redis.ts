import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";

export const REDIS_URL = process.env.KEEPER_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

/** A Redis connection and a key prefix of the test's own; `cleanup` deletes every key under it. */
export async function testRedis(label: string) {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null, lazyConnect: true });
  await redis.connect();
  const prefix = `t-${label}-${randomUUID().slice(0, 8)}`;
  return {
    redis,
    prefix,
    async cleanup() {
      let cursor = "0";
      do {
        const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 500);
        cursor = next;
        if (keys.length > 0) await redis.del(...keys);
      } while (cursor !== "0");
      redis.disconnect();
    },
  };
}
