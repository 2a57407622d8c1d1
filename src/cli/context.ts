import { type ApiClient, createApiClient } from "../api/index.js";
import { createRequestBudget } from "../api/request-budget.js";
import { apiKeyFor } from "../config/api-key.js";
import { type KeeperConfig, type LoadConfigOptions, loadConfig } from "../config/load-config.js";

/** The demo keeps its own Redis keys, wiped at each start: its world is new each time. */
export const DEMO_REDIS_PREFIX = "keeper-demo";

/**
 * The demo's Redis prefix, `<KEEPER_REDIS_PREFIX>-demo` when that is set: the demo and the commands
 * that look at it agree, and the demo, which wipes its keys at start, never wipes a real keeper's.
 */
export function demoRedisPrefix(): string {
  const prefix = process.env.KEEPER_REDIS_PREFIX;
  return prefix ? `${prefix}-demo` : DEMO_REDIS_PREFIX;
}

export interface CliContext {
  /** The config, loaded once: `options` count only on the first call, and only for a config file. */
  config(options?: Pick<LoadConfigOptions, "requireWallets">): Promise<KeeperConfig>;
  client(): Promise<ApiClient>;
}

/**
 * With no config file, commands look at the embedded demo (`npm start` with no config), whose Redis
 * keys have a prefix of their own.
 */
export function createCliContext(configFile: () => string | undefined): CliContext {
  let config: Promise<KeeperConfig> | undefined;
  const getConfig = (options: Pick<LoadConfigOptions, "requireWallets"> = {}) => {
    const file = configFile();
    // With no file the embedded demo runs, on the sandbox's wallets: none are required of the defaults.
    config ??= loadConfig({ file, ...(file ? options : {}) }).then((c) =>
      file ? c : { ...c, redis: { ...c.redis, prefix: demoRedisPrefix() } },
    );
    return config;
  };
  return {
    config: getConfig,
    async client() {
      const c = await getConfig();
      // A command's reads are targeted work within the plan, counted in this process only.
      const budget = createRequestBudget({ config: c, apiKey: apiKeyFor(c) });
      return createApiClient({
        baseUrl: c.service.baseUrl,
        apiKey: apiKeyFor(c),
        timeoutMs: c.service.timeoutMs,
        retries: c.service.retries,
        rateLimiter: budget.targeted,
      });
    },
  };
}
