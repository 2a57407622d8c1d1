import { Connection } from "@solana/web3.js";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import type { ApiClient } from "../api/index.js";
import { createRequestBudget } from "../api/request-budget.js";
import { apiKeyFor } from "../config/api-key.js";
import { type KeeperConfig, NO_WALLETS_PROBLEM } from "../config/load-config.js";
import { ConfigError } from "../core/errors.js";
import { type RedisKeys, redisKeysOf } from "../keeper/names.js";
import { PauseSwitch } from "../keeper/operator/pause.js";
import { Protections } from "../keeper/operator/protections.js";
import { createQueues, type KeeperQueues } from "../keeper/queues/queues.js";
import { HoldingsIndex } from "../keeper/state/holdings.js";
import { Ledger } from "../keeper/state/ledger.js";
import { checkRedisForKeeper, connectRedis, redisTargetOf } from "../keeper/state/redis-connection.js";
import type { Scheduler } from "../keeper/watch/scheduler.js";
import type { OpsServer } from "../ops/http.js";
import { createMetrics, type KeeperMetrics, queueCountsFrom } from "../ops/metrics.js";
import { Notifier } from "../ops/notifier.js";
import { PollTracker } from "../ops/poll-tracker.js";
import { Watchdog } from "../ops/watchdog.js";
import type { Wallets } from "../signer/keys.js";
import { reflectPauseSwitch, refreshPollTimes, workersHeartbeat } from "./health-loops.js";
import { startKeeperOpsServer } from "./ops-server.js";
import { startSchedulerRole } from "./scheduler-role.js";
import { type RunningRole, type SharedInfrastructure, serviceClients } from "./shared-infrastructure.js";
import { startSignerRole } from "./signer-role.js";
import { startWorkerRole } from "./worker-role.js";

export type Role = "scheduler" | "worker" | "signer";
export const ALL_ROLES: readonly Role[] = ["scheduler", "worker", "signer"];

export interface StartKeeperOptions {
  config: KeeperConfig;
  roles: ReadonlySet<Role>;
  logger: Logger;
  /** Keys already in memory (the demo, tests); otherwise the signer role loads them from config. */
  wallets?: Wallets;
  /** Serve /metrics, /healthz, /readyz (default true). */
  opsServer?: boolean;
  metrics?: KeeperMetrics;
}

export interface RunningKeeper {
  readonly config: KeeperConfig;
  readonly redis: Redis;
  readonly keys: RedisKeys;
  readonly ledger: Ledger;
  readonly queues: KeeperQueues;
  readonly metrics: KeeperMetrics;
  readonly scheduler?: Scheduler;
  readonly ops?: OpsServer;
  readonly client: ApiClient;
  /** Finishes or hands back in-flight jobs, then closes everything; every step runs even if one fails. */
  stop(): Promise<void>;
}

/**
 * The composition root of the keeper: wires the shared infrastructure (Redis, queues, metrics, the
 * request budget, the ops server) and starts the given roles, each in its own module.
 */
export async function startKeeper(options: StartKeeperOptions): Promise<RunningKeeper> {
  const { config, logger } = options;
  const roles = rolesToRun(options);
  const walletList = walletsOf(options);
  const redis = await connectRedis(redisTargetOf(config));
  const cleanups: Array<() => Promise<unknown>> = [async () => redis.quit()];
  const stop = async () => {
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup();
      } catch (error) {
        logger.warn({ err: (error as Error).message }, "shutdown step failed");
      }
    }
  };
  try {
    await checkRedisForKeeper(redis, logger);
    const shared = sharedInfrastructure(options, redis, walletList, cleanups);
    cleanups.push(refreshPollTimes(redis, shared.keys, shared.polls));
    cleanups.push(reflectPauseSwitch(shared.pause, (isPaused) => shared.metrics.setPaused(isPaused)));

    // Each role stops before the loops and the connections it uses; the workers of the worker and
    // signer roles close side by side, after the scheduler has stopped enqueueing.
    const scheduler = roles.has("scheduler") ? startSchedulerRole(shared) : undefined;
    const working: RunningRole[] = [];
    const stopWorking = async () => {
      await Promise.allSettled(working.map((role) => role.stop()));
    };
    cleanups.push(stopWorking);
    if (scheduler) cleanups.push(() => scheduler.stop());
    if (roles.has("worker")) working.push(await startWorkerRole(shared));
    if (roles.has("signer")) working.push(await startSignerRole(shared, options.wallets));
    cleanups.push(
      workersHeartbeat(
        shared.watchdog,
        working.flatMap((role) => role.workers),
      ),
    );

    let ops: OpsServer | undefined;
    if (options.opsServer !== false) {
      ops = await startKeeperOpsServer(shared);
      cleanups.push(() => ops?.close() ?? Promise.resolve());
    }
    logger.info(
      { mode: config.mode, roles: [...roles], wallets: walletList.length, ops: ops?.url },
      "keeper started",
    );
    const { keys, ledger, queues, metrics } = shared;
    return {
      config,
      redis,
      keys,
      ledger,
      queues,
      metrics,
      scheduler: scheduler?.scheduler,
      ops,
      client: shared.clients.targeted,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The roles this process runs: dry-run has no signer; strategies must be importable by a worker. */
function rolesToRun(options: StartKeeperOptions): Set<Role> {
  const { config, logger } = options;
  const roles = new Set(options.roles);
  if (config.mode === "dry-run" && roles.delete("signer"))
    logger.info("dry-run: the signer role does not run and no key is loaded");
  if (roles.has("worker") && config.strategyModules !== "import")
    throw new Error("the worker role runs strategies: load the config with its strategy modules imported");
  const userModules = config.strategies.flatMap((s) => (s.module ? [s.module] : []));
  if (roles.has("signer") && userModules.length > 0)
    logger.warn(
      { modules: userModules },
      "user strategy code runs in the process that holds the wallet keys; for real money run `keeper start --role signer` in a process of its own",
    );
  return roles;
}

function walletsOf(options: StartKeeperOptions): string[] {
  const wallets = options.config.wallets.map((w) => w.pubkey);
  if (wallets.length === 0 && !options.wallets) throw new ConfigError([NO_WALLETS_PROBLEM]);
  return wallets.length > 0 ? wallets : (options.wallets?.publicKeys() ?? []);
}

/** Made once per process and given to every role; its closes are pushed on `cleanups`. */
function sharedInfrastructure(
  options: StartKeeperOptions,
  redis: Redis,
  wallets: readonly string[],
  cleanups: Array<() => Promise<unknown>>,
): SharedInfrastructure {
  const { config, logger } = options;
  const keys = redisKeysOf(config);
  const queues = createQueues(redis, keys.queuePrefix, config, (queue, error) =>
    logger.debug({ queue, err: error.message }, "queue connection error"),
  );
  cleanups.push(() => queues.close());
  const polls = new PollTracker();
  polls.expect(wallets);
  const metrics =
    options.metrics ??
    createMetrics({
      getQueueCounts: queueCountsFrom(queues.all()),
      polls,
      stalePollSeconds: config.ops.stalePollSeconds,
    });
  if (apiKeyFor(config) === undefined)
    logger.info(
      { baseUrl: config.service.baseUrl },
      "no API key (KEEPER_API_KEY or service.apiKeyFile): using the service's keyless limits",
    );
  // One plan shared by every process of this key: targeted work first, the sweep at its share.
  const budget = createRequestBudget({ config, apiKey: apiKeyFor(config), redis });
  const notifier = config.secrets.webhookUrl
    ? new Notifier({
        webhookUrl: config.secrets.webhookUrl,
        logger,
        events: config.notifications.events,
        countOutcome: (o) => metrics.recordNotification(o),
      })
    : undefined;
  if (notifier) cleanups.push(() => notifier.flush(3_000));
  return {
    config,
    logger,
    redis,
    keys,
    wallets,
    ledger: new Ledger(redis, keys, { maxTries: 3, retryAfterSeconds: 60 }),
    pause: new PauseSwitch(redis, keys, {
      logger,
      onRestored: ({ reason, since }) =>
        notifier?.notify({
          kind: "pause_restored",
          ...(reason === undefined ? {} : { reason }),
          ...(since === undefined ? {} : { since }),
        }),
    }),
    protections: new Protections(redis, keys, config.protections),
    holdings: new HoldingsIndex(redis, keys),
    queues,
    metrics,
    polls,
    watchdog: new Watchdog(),
    notifier,
    budget,
    clients: serviceClients(config, budget, metrics, logger),
    connection: new Connection(config.rpc.url, { commitment: config.rpc.commitment }),
    // Only sends go to these: reads, simulation and confirmation stay on rpc.url.
    alsoSendTo: config.rpc.sendUrls.map((url) => new Connection(url, { commitment: config.rpc.commitment })),
  };
}
