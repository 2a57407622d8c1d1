import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { Redis } from "ioredis";

/** Answers PING within a second? */
export async function redisAnswers(url: string): Promise<boolean> {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 1_000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  redis.on("error", () => {
    // The answer is the return value; connection errors are expected here.
  });
  try {
    await redis.connect();
    return (await redis.ping()) === "PONG";
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

export function redisServerInstalled(): boolean {
  return spawnSync("redis-server", ["--version"], { stdio: "ignore" }).status === 0;
}

/**
 * Starts a Redis for the demo on the URL's loopback port, in memory only, with the eviction policy
 * BullMQ needs. It lives as long as this process.
 */
export async function startPrivateRedis(url: string): Promise<ChildProcess> {
  const { hostname, port } = new URL(url);
  const child = spawn(
    "redis-server",
    [
      "--bind",
      hostname,
      "--port",
      port || "6379",
      "--save",
      "",
      "--appendonly",
      "no",
      "--maxmemory-policy",
      "noeviction",
    ],
    { stdio: "ignore" },
  );
  for (let i = 0; i < 50; i += 1) {
    if (await redisAnswers(url)) return child;
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill();
  throw new Error(`redis-server did not answer on ${hostname}:${port}`);
}
