import type { Redis } from "ioredis";
import type { RedisKeys } from "../../src/keeper/names.js";

/** Every wallet's last successful poll (Unix seconds, as text), from the sorted set the poll worker keeps. */
export async function lastPollsOf(
  redis: Redis,
  keys: Pick<RedisKeys, "lastPolls">,
): Promise<Record<string, string>> {
  const scored = await redis.zrange(keys.lastPolls, "0", "-1", "WITHSCORES");
  const times: Record<string, string> = {};
  for (let i = 0; i + 1 < scored.length; i += 2) times[scored[i] as string] = scored[i + 1] as string;
  return times;
}
