import { Cluster, Redis } from "ioredis";
import type { Logger } from "pino";
import type { KeeperConfig } from "../../config/load-config.js";
import { ConfigError, TransientError } from "../../core/errors.js";
import { coalesceWrites } from "../../ops/coalesce-writes.js";
import { urlHasPassword } from "../../ops/secret-forms.js";

/** Where Keeper's Redis is and the password it requires, if any (never logged). */
export interface RedisTarget {
  readonly url: string;
  readonly password?: string | undefined;
  /** A Redis Cluster's seed nodes (host:port): when given, `url` is not used. */
  readonly cluster?: readonly string[] | undefined;
}

/**
 * The Redis every Keeper process and command opens: redis.url, or the cluster of redis.cluster, with
 * redis.passwordFile's password.
 */
export function redisTargetOf(config: Pick<KeeperConfig, "redis" | "secrets">): RedisTarget {
  return { url: config.redis.url, password: config.secrets.redisPassword, cluster: config.redis.cluster };
}

/** What a message names: the URL without its password, or the cluster's seed nodes. */
function describeTarget(target: RedisTarget): string {
  return isClusterTarget(target)
    ? `Redis Cluster at ${target.cluster?.join(",")}`
    : `Redis at ${redactUrl(target.url)}`;
}

function isClusterTarget(target: RedisTarget): boolean {
  return (target.cluster?.length ?? 0) > 0;
}

/** BullMQ workers need `maxRetriesPerRequest: null`; start-up fails fast instead of retrying forever. */
export async function connectRedis(
  target: RedisTarget,
  options: { connectTimeoutMs?: number } = {},
): Promise<Redis> {
  const redis = isClusterTarget(target)
    ? clusterClient(target, options.connectTimeoutMs ?? 3_000)
    : new Redis(target.url, {
        maxRetriesPerRequest: null,
        lazyConnect: true,
        connectTimeout: options.connectTimeoutMs ?? 3_000,
        // Give up on the first connection quickly; once connected, reconnect with a capped backoff.
        retryStrategy: (times) => Math.min(times * 200, 2_000),
        // Only when given: a password in the URL itself stays in force otherwise. BullMQ's own
        // connections are duplicates of this one and carry the same password.
        ...(target.password === undefined ? {} : { password: target.password }),
      });
  // A refused password shows only here: the connect call then rejects with "Connection is closed".
  let lastError: Error | undefined;
  redis.on("error", (error: Error) => {
    // Errors surface through the commands that fail; an unhandled 'error' event would crash the process.
    lastError = error;
  });
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    redis.disconnect();
    const refusal = authRefusal(target, lastError ?? (error as Error));
    if (refusal) throw new ConfigError([refusal]);
    throw new TransientError(`cannot reach ${describeTarget(target)}: ${(error as Error).message}`);
  }
  coalesceWrites(redis);
  return redis;
}

/**
 * A client of a Redis Cluster, typed as the single-node client: Keeper uses only what both offer
 * (commands, scripts, pipelines, transactions, duplicate, quit), BullMQ takes either, and its keys
 * keep each script, transaction and pipeline in one slot (names.ts). A master that fails over or
 * restarts is followed through MOVED replies and a refresh of the slots.
 */
function clusterClient(target: RedisTarget, connectTimeoutMs: number): Redis {
  const nodes = (target.cluster ?? []).map((node) => {
    const at = node.lastIndexOf(":");
    return { host: node.slice(0, at), port: Number(node.slice(at + 1)) };
  });
  const cluster = new Cluster(nodes, {
    lazyConnect: true,
    // Commands wait while the cluster is reached again (a master restarting), as on a single Redis.
    clusterRetryStrategy: (times) => Math.min(times * 200, 2_000),
    // A command to a master that is down waits for it (about 15 s) before it fails, as a single
    // Redis's commands wait for a reconnect: a restart is then a pause, not a burst of failed jobs.
    retryDelayOnFailover: 200,
    retryDelayOnClusterDown: 200,
    retryDelayOnTryAgain: 200,
    maxRedirections: 75,
    redisOptions: {
      maxRetriesPerRequest: null,
      connectTimeout: connectTimeoutMs,
      ...(target.password === undefined ? {} : { password: target.password }),
    },
  });
  return cluster as unknown as Redis;
}

/**
 * Redis answered but would not let Keeper in: a configuration problem (exit 2), named by the setting
 * to fix. The server's reply names no password, and neither does this message.
 */
function authRefusal(target: RedisTarget, error: Error): string | undefined {
  const at = describeTarget(target);
  const fromUrl = !isClusterTarget(target) && target.password === undefined && urlHasPassword(target.url);
  if (/^NOAUTH\b/.test(error.message))
    return `redis.passwordFile: ${at} requires a password (NOAUTH): set redis.passwordFile or KEEPER_REDIS_PASSWORD_FILE to a file holding it`;
  if (/^WRONGPASS\b/.test(error.message))
    return fromUrl
      ? `redis.url: ${at} refused the password in the URL (WRONGPASS)`
      : `redis.passwordFile: ${at} refused the password from the file (WRONGPASS): it must match the server's requirepass or the URL's ACL user`;
  return undefined;
}

/**
 * BullMQ loses jobs if Redis evicts keys: refuse anything but `noeviction`. Warn when Redis keeps
 * nothing on disk, since a Redis restart then loses the ledger and the queues. On a cluster every
 * master is asked (a keyless command would reach one at random) and each one that fails is named:
 * any of them may hold the ledger's or a queue's keys.
 */
export async function checkRedisForKeeper(redis: Redis, logger: Logger): Promise<void> {
  const masters = redis.isCluster
    ? (redis as unknown as Cluster).nodes("master").map((node) => ({ node, at: nodeAddress(node) }))
    : [{ node: redis, at: undefined }];
  const checked = await Promise.all(
    masters.map(async ({ node, at }) => {
      const [policy, save, aof] = await Promise.all([
        configValue(node, "maxmemory-policy"),
        configValue(node, "save"),
        configValue(node, "appendonly"),
      ]);
      return { at, policy, persistsNothing: (save === undefined || save.trim() === "") && aof !== "yes" };
    }),
  );
  const problems = checked
    .filter(({ policy }) => policy !== undefined && policy !== "noeviction")
    .map(({ at, policy }) =>
      at === undefined
        ? `redis maxmemory-policy: expected "noeviction" (BullMQ and the ledger must never be evicted), found "${policy}"`
        : `redis maxmemory-policy: expected "noeviction" on every master of the cluster (BullMQ and the ledger must never be evicted), found "${policy}" on the master at ${at}`,
    );
  if (problems.length > 0) throw new ConfigError(problems);
  for (const { at, persistsNothing } of checked)
    if (persistsNothing)
      logger.warn(
        at === undefined ? {} : { master: at },
        "redis persists nothing (no RDB snapshots, no AOF): a Redis restart loses the ledger and queued work",
      );
}

/** A cluster node as the cluster announces it: host:port. */
function nodeAddress(node: Redis): string {
  return `${node.options.host}:${node.options.port}`;
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

/**
 * A URL may hold a secret (a Redis password; an RPC provider's or the service's key in the path or
 * query): show only scheme, host and port. Shared by every message that names a node.
 */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.hostname}${u.port ? `:${u.port}` : ""}`;
  } catch {
    return "(unparsable URL)";
  }
}
