/** Reachability checks for `/readyz`, built from the clients the process already has. */

export interface Pingable {
  ping(): Promise<string>;
}

/** Redis answers PING. With ioredis' offline queue, a dead server makes this hang: `/readyz` bounds it. */
export function redisReachable(redis: Pingable): () => Promise<void> {
  return async () => {
    await redis.ping();
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
