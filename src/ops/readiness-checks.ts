/** Reachability checks for `/readyz`, built from the clients the process already has. */

import type { Redis } from "ioredis";

export interface Pingable {
  ping(): Promise<string>;
}

/** Redis answers PING. With ioredis' offline queue, a dead server makes this hang: `/readyz` bounds it. */
export function redisReachable(redis: Pingable): () => Promise<void> {
  return async () => {
    await redis.ping();
  };
}

/** How long a write probe's key lives: it only has to be written, never read. */
const PROBE_TTL_MS = 60_000;

/**
 * Redis accepts a write: a SET with a short expiry of `probeKey`. PING alone passes on a replica
 * answering READONLY and on a full Redis under noeviction answering OOM, while every role's work (polls,
 * the ledger, the queues) fails; the reply's error names which.
 */
export function redisWritable(redis: Pick<Redis, "set">, probeKey: string): () => Promise<void> {
  return async () => {
    await redis.set(probeKey, "1", "PX", PROBE_TTL_MS);
  };
}

/** JSON-RPC "method not found": the node answered, it just lacks `getHealth` (some local validators). */
const METHOD_NOT_FOUND = -32601;

/**
 * The RPC node answers `getHealth` with "ok". A node that reports itself unhealthy (behind the
 * cluster) is not ready: transactions sent through it would confirm late or not at all.
 */
export function rpcReachable(rpcUrl: string, fetchImpl: typeof fetch = fetch): () => Promise<void> {
  return async () => {
    const response = await fetchImpl(rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "getHealth" }),
    });
    if (!response.ok) throw new Error(`RPC answered HTTP ${response.status}`);
    const body = (await response.json()) as {
      result?: unknown;
      error?: { code?: unknown; message?: unknown };
    };
    if (body.result === "ok") return;
    if (body.error?.code === METHOD_NOT_FOUND) return;
    const message =
      typeof body.error?.message === "string" ? body.error.message : "unexpected getHealth answer";
    throw new Error(`RPC not healthy: ${message}`);
  };
}
