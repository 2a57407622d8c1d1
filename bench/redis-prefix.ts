import type { Redis } from "ioredis";

/** Removes every key under `prefix` (a benchmark's own), in batches; returns how many. */
export async function deletePrefix(redis: Redis, prefix: string): Promise<number> {
  let cursor = "0";
  let deleted = 0;
  for (let round = 0; round < 100_000; round++) {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1_000);
    if (keys.length > 0) deleted += await redis.unlink(...keys);
    cursor = next;
    if (cursor === "0") break;
  }
  return deleted;
}
