import { Redis } from "ioredis";
import type { Logger } from "pino";
import { ConfigError, TransientError } from "../core/errors.js";

/** BullMQ workers need `maxRetriesPerRequest: null`; start-up fails fast instead of retrying forever. */
export async function connectRedis(url: string, options: { connectTimeoutMs?: number } = {}): Promise<Redis> {
  const redis = new Redis(url, {
    maxRetriesPerRequest: null,
    lazyConnect: true,
    connectTimeout: options.connectTimeoutMs ?? 3_000,
    // Give up on the first connection quickly; once connected, reconnect with a capped backoff.
    retryStrategy: (times) => Math.min(times * 200, 2_000),
  });
  redis.on("error", () => {
    // Errors surface through the commands that fail; an unhandled 'error' event would crash the process.
  });
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    redis.disconnect();
    throw new TransientError(`cannot reach Redis at ${redactUrl(url)}: ${(error as Error).message}`);
  }
  return redis;
}

/**
 * BullMQ loses jobs if Redis evicts keys: refuse anything but `noeviction`. Warn when Redis keeps
 * nothing on disk, since a Redis restart then loses the ledger and the queues.
 */
export async function checkRedisForKeeper(redis: Redis, logger: Logger): Promise<void> {
  const policy = await configValue(redis, "maxmemory-policy");
  if (policy !== undefined && policy !== "noeviction")
    throw new ConfigError([
      `redis maxmemory-policy: expected "noeviction" (BullMQ and the ledger must never be evicted), found "${policy}"`,
    ]);
  const save = await configValue(redis, "save");
  const aof = await configValue(redis, "appendonly");
  if ((save === undefined || save.trim() === "") && aof !== "yes")
    logger.warn(
      "redis persists nothing (no RDB snapshots, no AOF): a Redis restart loses the ledger and queued work",
    );
}

async function configValue(redis: Redis, name: string): Promise<string | undefined> {
  try {
    const reply = (await redis.config("GET", name)) as string[];
    return reply[1];
  } catch {
    // Managed Redis services often forbid CONFIG: nothing to check then.
    return undefined;
  }
}

/** A Redis URL may hold a password: show only scheme, host and port. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.hostname}${u.port ? `:${u.port}` : ""}`;
  } catch {
    return "(unparsable URL)";
  }
}
