import { Connection } from "@solana/web3.js";
import type { ApiClient } from "../api/index.js";
import { PermanentApiError } from "../api/index.js";
import { describeApiKey } from "../config/api-key.js";
import type { KeeperConfig } from "../config/load-config.js";
import { ConfigError, TransientError } from "../core/errors.js";
import { redactUrl } from "../keeper/state/redis-connection.js";

/**
 * Start-up checks that turn an unreachable service or RPC into one clear line before any worker starts.
 * Redis is checked by its connection. A node is named by scheme, host and port only: a provider's key
 * often rides in the URL's path or query.
 */
export async function checkServiceReachable(client: ApiClient, config: KeeperConfig): Promise<void> {
  try {
    await client.prediction.listEvents({ start: 0, end: 1 });
  } catch (error) {
    const refusal = keyRefusal(error, config);
    if (refusal) throw refusal;
    throw new TransientError(
      `cannot reach the service at ${redactUrl(config.service.baseUrl)}: ${(error as Error).message}`,
    );
  }
}

/**
 * The service refused the key (401, 403): a configuration problem (exit 2), named by where the key came
 * from, which is the setting to fix; never the key. Undefined for any other error.
 */
export function keyRefusal(error: unknown, config: KeeperConfig): ConfigError | undefined {
  if (!(error instanceof PermanentApiError) || (error.status !== 401 && error.status !== 403))
    return undefined;
  const { source, key } = describeApiKey(config);
  return new ConfigError([
    `${source}: the service at ${redactUrl(config.service.baseUrl)} refused ${key} (HTTP ${error.status})`,
  ]);
}

export async function checkRpcReachable(config: KeeperConfig): Promise<void> {
  const connection = new Connection(config.rpc.url, {
    commitment: config.rpc.commitment,
    disableRetryOnRateLimit: true,
  });
  try {
    await Promise.race([
      connection.getBlockHeight(),
      new Promise((_, reject) => setTimeout(() => reject(new Error("no answer within 5 s")), 5_000).unref()),
    ]);
  } catch (error) {
    throw new TransientError(
      `cannot reach the Solana RPC at ${redactUrl(config.rpc.url)}: ${(error as Error).message}`,
    );
  }
}
