import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { Redis } from "ioredis";
import type { RedisTarget } from "../keeper/state/redis-connection.js";

/**
 * Answers PING within a second? A Redis that refuses the password answers too: connecting to it
 * then says why, instead of the demo trying to start a second one on its port.
 */
export async function redisAnswers(target: RedisTarget): Promise<boolean> {
  const redis = new Redis(target.url, {
    lazyConnect: true,
    connectTimeout: 1_000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    ...(target.password === undefined ? {} : { password: target.password }),
  });
  let refusedPassword = false;
  redis.on("error", (error: Error) => {
    // The answer is the return value; connection errors are expected here.
    if (/^(NOAUTH|WRONGPASS)\b/.test(error.message)) refusedPassword = true;
  });
  try {
    await redis.connect();
    return (await redis.ping()) === "PONG";
  } catch {
    return refusedPassword;
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
export async function startPrivateRedis(target: RedisTarget): Promise<ChildProcess> {
  const { hostname, port } = new URL(target.url);
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
    if (await redisAnswers(target)) return child;
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill();
  throw new Error(`redis-server did not answer on ${hostname}:${port}`);
}
