import type { Socket } from "node:net";
import type { Redis } from "ioredis";

/**
 * Runs `issue` with the client's socket corked, so that the commands it sends before its first
 * await (several concerns' reads, say, each its own module's) leave in one write: on this kind of
 * machine a socket write costs about what a command's own work does. Nothing else changes: each
 * command is the client's as ever, answered and failing alone, in the order sent. On a cluster, or
 * before the client has a socket, `issue` just runs.
 */
export function inOneWrite<T>(redis: Redis, issue: () => T): T {
  const stream = (redis as unknown as { stream?: Partial<Socket> }).stream;
  if (redis.isCluster || typeof stream?.cork !== "function" || typeof stream.uncork !== "function")
    return issue();
  stream.cork();
  try {
    return issue();
  } finally {
    // At once, not on a later tick: no other task's command waits behind this one's.
    stream.uncork();
  }
}
