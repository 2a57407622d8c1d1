import type { Connection } from "@solana/web3.js";
import type { Worker } from "bullmq";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import { type ApiClient, createApiClient, type RequestRateLimiter } from "../api/index.js";
import type { RequestBudget } from "../api/request-budget.js";
import { apiKeyFor } from "../config/api-key.js";
import type { KeeperConfig } from "../config/load-config.js";
import type { RedisKeys } from "../keeper/names.js";
import type { PauseSwitch } from "../keeper/operator/pause.js";
import type { Protections } from "../keeper/operator/protections.js";
import type { KeeperQueues } from "../keeper/queues/queues.js";
import type { HoldingsIndex } from "../keeper/state/holdings.js";
import type { Ledger } from "../keeper/state/ledger.js";
import type { KeeperMetrics } from "../ops/metrics.js";
import type { Notifier } from "../ops/notifier.js";
import type { PollTracker } from "../ops/poll-tracker.js";
import type { Watchdog } from "../ops/watchdog.js";

/** What every role is given by start-keeper: shared infrastructure, made once per process. */
export interface SharedInfrastructure {
  readonly config: KeeperConfig;
  readonly logger: Logger;
  readonly redis: Redis;
  readonly keys: RedisKeys;
  /** The wallets the keeper runs for (config.wallets, or the keys given in memory). */
  readonly wallets: readonly string[];
  readonly ledger: Ledger;
  readonly pause: PauseSwitch;
  readonly protections: Protections;
  readonly holdings: HoldingsIndex;
  readonly queues: KeeperQueues;
  readonly metrics: KeeperMetrics;
  readonly polls: PollTracker;
  readonly watchdog: Watchdog;
  readonly notifier: Notifier | undefined;
  /** How the sweep, the market watcher and targeted work share the plan. */
  readonly budget: RequestBudget;
  /** Service clients, one per share of the budget. */
  readonly clients: ServiceClients;
  /** Reads, simulation and confirmation. */
  readonly connection: Connection;
  /** Extra RPC nodes that sends also go to (rpc.sendUrls). */
  readonly alsoSendTo: readonly Connection[];
}

export interface ServiceClients {
  /** Targeted work: the watcher's polls, every build, the signer's reads. */
  readonly targeted: ApiClient;
  readonly sweep: ApiClient;
  readonly watcher: ApiClient;
  /** A client of its own over `rateLimiter`, counted in the metrics like the others. */
  over(rateLimiter: RequestRateLimiter): ApiClient;
}

/** The service clients of a keeper process: every request timed and counted in the metrics. */
export function serviceClients(
  config: KeeperConfig,
  budget: RequestBudget,
  metrics: KeeperMetrics,
  logger: Logger,
): ServiceClients {
  const over = (rateLimiter: RequestRateLimiter) =>
    createApiClient({
      baseUrl: config.service.baseUrl,
      apiKey: apiKeyFor(config),
      timeoutMs: config.service.timeoutMs,
      retries: config.service.retries,
      rateLimiter,
      logger,
      hooks: {
        onRequest: (o) =>
          metrics.observeApiRequest(
            o.endpoint,
            o.status ?? (o.outcome === "timeout" ? "timeout" : "network"),
            o.durationMs / 1000,
          ),
        onItemsSkipped: (endpoint, count) => metrics.recordApiItemsSkipped(endpoint, count),
      },
    });
  return { targeted: over(budget.targeted), sweep: over(budget.sweep), watcher: over(budget.watcher), over };
}

/** What a started role hands back: its workers (watched by the heartbeat) and how to stop it. */
export interface RunningRole {
  readonly workers: readonly Worker[];
  /** Stops the role's loops and workers; each step runs even when another fails. */
  stop(): Promise<void>;
}
