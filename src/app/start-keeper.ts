import { setMaxListeners } from "node:events";
import { Connection } from "@solana/web3.js";
import { type Job, Worker } from "bullmq";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import {
  type ApiClient,
  collectUnique,
  createApiClient,
  iterateOrders,
  iteratePositions,
  type RequestRateLimiter,
} from "../api/index.js";
import { createRequestBudget } from "../api/request-budget.js";
import { withBatchedReads } from "../chain/batched-reads.js";
import { priorityFeeSettings, recentPriorityFeesOn } from "../chain/priority-fee.js";
import { apiKeyFor } from "../config/api-key.js";
import type { KeeperConfig } from "../config/load-config.js";
import { balanceMints, resolveStrategyTokens } from "../config/resolve-tokens.js";
import { ConfigError } from "../core/errors.js";
import type { IntentKind } from "../core/intent.js";
import { formatUsd } from "../core/money.js";
import { QUEUES, type RedisKeys, redisKeys } from "../keeper/names.js";
import { PauseSwitch } from "../keeper/operator/pause.js";
import { Protections } from "../keeper/operator/protections.js";
import { processAction } from "../keeper/pipeline/action-worker.js";
import { simulateUnitsOn } from "../keeper/pipeline/assemble-swap.js";
import { processConfirm } from "../keeper/pipeline/confirm-loop.js";
import { runHousekeeping } from "../keeper/pipeline/housekeeping.js";
import { processPoll } from "../keeper/pipeline/poll-worker.js";
import { createQueues, type KeeperQueues, type PollJobData } from "../keeper/pipeline/queues.js";
import { processSign, type SignOutcome } from "../keeper/pipeline/sign-worker.js";
import { EventDetailsCache } from "../keeper/reads/event-details-cache.js";
import { orderListsFor } from "../keeper/reads/service-orders.js";
import { type SnapshotSource, snapshotNeeds } from "../keeper/reads/snapshot.js";
import { readTokenBalances } from "../keeper/reads/token-balances.js";
import { exitRulesConfigs, HoldingsIndex } from "../keeper/state/holdings.js";
import { Ledger, TERMINAL_STATUSES } from "../keeper/state/ledger.js";
import { checkRedisForKeeper, connectRedis, redisTargetOf } from "../keeper/state/redis-connection.js";
import { StrategyStateStore } from "../keeper/state/strategy-state.js";
import { MarketWatcher } from "../keeper/watch/market-watcher.js";
import { Scheduler } from "../keeper/watch/scheduler.js";
import { type OpsServer, startOpsServer } from "../ops/http.js";
import { createMetrics, type KeeperMetrics, queueCountsFrom } from "../ops/metrics.js";
import { Notifier } from "../ops/notifier.js";
import { PollTracker } from "../ops/poll-tracker.js";
import { redisReachable, rpcReachable } from "../ops/readiness-checks.js";
import { Watchdog } from "../ops/watchdog.js";
import { RedisAttemptStore } from "../signer/attempt-store.js";
import { signerGuardFor } from "../signer/guard-from-config.js";
import { keySourcesOf, loadWallets, type Wallets } from "../signer/keys.js";
import { watchAttempt } from "../signer/sign-transaction.js";
import { createSubmitAdapter } from "../signer/submit-adapter.js";
import { statusPagePlugin } from "../status/status-plugin.js";

const WORKER_HEARTBEAT_MS = 10_000;

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

/** The composition root of the keeper: wires config, Redis, queues, workers and ops for the given roles. */
export async function startKeeper(options: StartKeeperOptions): Promise<RunningKeeper> {
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
  const wallets = config.wallets.map((w) => w.pubkey);
  if (wallets.length === 0 && !options.wallets)
    throw new ConfigError(["wallets: at least one wallet is required to run the keeper"]);
  const walletList = wallets.length > 0 ? wallets : (options.wallets?.publicKeys() ?? []);

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
    const keys = redisKeys(config.redis.prefix, config.mode);
    const ledger = new Ledger(redis, keys, { maxTries: 3, retryAfterSeconds: 60 });
    const pause = new PauseSwitch(redis, keys);
    const protections = new Protections(redis, keys, config.protections);
    const queues = createQueues(redis, keys.bullPrefix, config);
    cleanups.push(() => queues.close());
    const polls = new PollTracker();
    polls.expect(walletList);
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
    const clientWith = (rateLimiter: RequestRateLimiter) =>
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
    const client = clientWith(budget.targeted);
    const sweepClient = clientWith(budget.sweep);
    const watcherClient = clientWith(budget.watcher);
    const notifier = config.secrets.webhookUrl
      ? new Notifier({
          webhookUrl: config.secrets.webhookUrl,
          logger,
          events: config.notifications.events,
          countOutcome: (o) => metrics.recordNotification(o),
        })
      : undefined;
    if (notifier) cleanups.push(() => notifier.flush(3_000));
    const watchdog = new Watchdog();
    const connection = new Connection(config.rpc.url, { commitment: config.rpc.commitment });
    // Only sends go to these: reads, simulation and confirmation stay on rpc.url.
    const alsoSendTo = config.rpc.sendUrls.map(
      (url) => new Connection(url, { commitment: config.rpc.commitment }),
    );

    // Poll times are shared through Redis so /readyz of any role sees every wallet.
    const pollRefresh = setInterval(() => {
      void redis.hgetall(keys.lastPolls).then(
        (times) => {
          for (const [wallet, at] of Object.entries(times)) polls.recordSuccess(wallet, Number(at) * 1000);
        },
        () => undefined,
      );
    }, 2_000);
    cleanups.push(async () => clearInterval(pollRefresh));

    const workerOptions = {
      connection: redis,
      prefix: keys.bullPrefix,
      // A job whose lock is not renewed (process killed) runs again elsewhere; the ledger and the
      // recorded signature make that re-run safe.
      lockDuration: config.queues.lockDurationMs,
      stalledInterval: config.queues.stalledIntervalMs,
      maxStalledCount: 2,
    };
    const workers: Worker[] = [];
    const track = (worker: Worker, queue: string) => {
      worker.on("completed", () => metrics.recordJob(queue, "completed"));
      worker.on("failed", (job: Job | undefined, error: Error) => {
        const final = !job || job.attemptsMade >= (job.opts.attempts ?? 1);
        metrics.recordJob(queue, final ? "failed" : "retried");
        logger.warn({ job: job?.id, queue, err: error.message, final }, "job failed");
      });
      worker.on("stalled", () => metrics.recordJob(queue, "stalled"));
      worker.on("error", (error) => logger.error({ queue, err: error.message }, "worker error"));
      workers.push(worker);
    };
    cleanups.push(async () => {
      await Promise.allSettled(workers.map((w) => w.close()));
    });

    const holdings = new HoldingsIndex(redis, keys);
    let scheduler: Scheduler | undefined;
    if (roles.has("scheduler")) {
      const watcher = new MarketWatcher({
        client: watcherClient,
        index: holdings,
        redis,
        keys,
        poll: queues.poll,
        pause,
        logger,
        settings: {
          bandPct: config.watcher.bandPct,
          retriggerSeconds: config.watcher.retriggerSeconds,
          pageSize: config.service.pageSize,
          wallets: new Set(walletList),
        },
        events: {
          onWatched: (count) => metrics.watchedMarkets.set(count),
          onRequest: (endpoint) => metrics.watcherRequests.inc({ endpoint }),
          onTargeted: (trigger) => metrics.targetedPolls.inc({ trigger }),
        },
      });
      scheduler = new Scheduler({
        config,
        wallets: walletList,
        queues,
        redis,
        keys,
        pause,
        logger,
        onSkipped: (reason) => metrics.pollSkipped.inc({ reason }),
        onTick: () => watchdog.stamp("scheduler"),
        watchMarkets: async () => {
          await watcher.run();
        },
        housekeeping: async () => {
          await runHousekeeping({
            ledger,
            actions: queues.actions,
            sign: queues.sign,
            confirm: queues.confirm,
            wallets: walletList,
            stuckSendingSeconds: config.signer.stuckSendingSeconds,
            logger,
            notify: (event) => notifier?.notify(event),
            onStuckSending: (count) => metrics.setIntentsStuckSending(count),
          });
        },
      });
      // Two missed intervals of this length make /healthz fail: the stale-poll threshold in all.
      watchdog.register("scheduler", (config.ops.stalePollSeconds * 1000) / 2);
      scheduler.start();
      cleanups.push(() => scheduler?.stop() ?? Promise.resolve());
    }

    if (roles.has("worker")) {
      // Tokens named by symbol or name become mints once, here; a bad one stops the start (exit 2).
      const { strategies } = await resolveStrategyTokens(config, client.tokens.search);
      const events = eventDetailsFor(strategies, client, logger, metrics);
      const sourceOver = (api: ApiClient): SnapshotSource => ({
        positions: (wallet: string) =>
          collectUnique(
            iteratePositions(api, { ownerPubkey: wallet }, { pageSize: config.service.pageSize }),
            (p) => p.pubkey,
          ),
        pendingOrders: async (wallet: string) =>
          (
            await collectUnique(
              iterateOrders(api, { ownerPubkey: wallet }, { pageSize: config.service.pageSize }),
              (o) => o.pubkey,
            )
          ).filter((o) => o.status === "pending"),
        balances: (wallet: string, mints: readonly string[]) => readTokenBalances(connection, wallet, mints),
        // The orders' true state, read only for the strategies that place them.
        ...orderListsFor(strategies, client, logger),
        ...(events ? { eventDetails: (refs) => events.detailsOf(refs) } : {}),
      });
      const source = sourceOver(client);
      const sweepSource = sourceOver(sweepClient);
      const states = new StrategyStateStore(redis, keys);
      track(
        new Worker<PollJobData>(
          QUEUES.poll,
          async (job) => {
            const poll = () =>
              processPoll(job, {
                mode: config.mode,
                // A poll killed mid-way frees its wallet when its BullMQ lock would have expired too.
                lockMs: config.queues.lockDurationMs,
                strategies,
                balanceMints: balanceMints(strategies),
                // The watcher's polls read at the plan's rate; the sweep's within its share.
                source: job.data.target ? source : sweepSource,
                ledger,
                states,
                pause,
                redis,
                keys,
                actions: queues.actions,
                logger,
                events: {
                  onPollSucceeded: (wallet, ms) => {
                    polls.recordSuccess(wallet);
                    metrics.pollDuration.observe({ kind: job.data.kind }, ms / 1000);
                  },
                  onPollSkipped: (reason) => metrics.pollSkipped.inc({ reason }),
                  onIntent: (intent, admitted) => {
                    if (admitted) metrics.recordIntent(intent.strategy, intent.kind);
                  },
                  onIntentNotAdmitted: (intent, reason) =>
                    metrics.recordIntentNotAdmitted(intent.strategy, intent.kind, reason),
                  onStrategyError: (strategy) => metrics.strategyErrors.inc({ strategy }),
                  onProtections: (evaluation) => {
                    for (const b of evaluation.breakers)
                      if (b.isEnabled) metrics.setCircuitBreaker(b.name, b.isTripped);
                  },
                  onBreakerChange: (change) =>
                    notifier?.notify({
                      kind: "breaker",
                      breaker: change.breaker,
                      tripped: change.isTripped,
                      detail: change.detail,
                    }),
                  onTargetedIntent: (trigger, seconds) =>
                    metrics.marketReaction.observe({ trigger }, seconds),
                },
                protections,
                ...(config.watcher.enabled
                  ? { holdings: { index: holdings, exitRules: exitRulesConfigs(strategies) } }
                  : {}),
              });
            const result = job.data.target ? await budget.acting(poll) : await poll();
            // The wallet's other poll may have read its positions before the market changed: a
            // targeted poll runs again once that one is done (its job's attempts, see jobOptions).
            if (result.skipped === "poll_running" && job.data.target)
              throw new Error("the wallet's poll is running: the targeted poll runs again after it");
            return result;
          },
          { ...workerOptions, concurrency: config.queues.pollConcurrency },
        ),
        QUEUES.poll,
      );
      const actionsWorker = new Worker(
        QUEUES.actions,
        async (job) => {
          await budget.acting(() =>
            processAction(job, {
              api: buildApi(client, connection),
              ledger,
              sign: queues.sign,
              logger,
              positions: source.positions,
              closeAllSlippageBps: config.protections.closeAllSlippageBps,
              priorityFees: {
                recent: recentPriorityFeesOn(connection, logger),
                settings: priorityFeeSettings(config.signer),
              },
              onPriorityFee: (kind, price) => metrics.priorityFee.observe({ kind }, price),
            }),
          );
        },
        { ...workerOptions, concurrency: config.queues.actionConcurrency },
      );
      // A build that ran out of attempts fails its intent, so the next poll may try again later.
      actionsWorker.on("failed", (job, error) => void failIntentOfExhaustedJob(ledger, job, error));
      track(actionsWorker, QUEUES.actions);
    }

    if (roles.has("signer")) {
      const keyring = options.wallets ?? (await loadWallets(keySourcesOf(config.wallets), { logger }));
      for (const wallet of walletList)
        if (!keyring.has(wallet)) throw new ConfigError([`wallets: no key loaded for ${wallet}`]);
      const attempts = new RedisAttemptStore(redis, keys.attemptsPrefix);
      // The signer's limits and swap floor: from this process's config file and its own service reads.
      const guard = await signerGuardFor(
        config,
        clientWith(budget.targeted).tokens.search,
        redis,
        keys.signerSpent,
      );
      const maxRebuilds = config.signer.maxRebuilds;
      const send = {
        commitment: config.rpc.commitment,
        rebroadcastIntervalMs: config.signer.rebroadcastIntervalMs,
        alsoSendTo,
      };
      // What an outcome goes through, whether the sign job reached it or the watcher did.
      const outcomeDeps = {
        ledger,
        actions: queues.actions,
        maxRebuilds,
        logger,
        protections,
        events: {
          onOutcome: (row: Parameters<typeof notify>[1], outcome: SignOutcome) => {
            const seconds =
              outcome.outcome === "confirmed" && outcome.confirmationMs !== undefined
                ? outcome.confirmationMs / 1000
                : undefined;
            metrics.recordTransaction(row.kind, outcome.outcome, seconds);
            if (outcome.outcome === "refused")
              metrics.policyRefusals.inc({ kind: row.kind, reason: outcome.reason });
            if (outcome.outcome === "confirmed" && row.kind === "claim" && row.amountMicroUsd)
              metrics.addClaimedMicroUsd(BigInt(row.amountMicroUsd));
            notify(notifier, row, outcome);
          },
        },
      };
      const signAndSubmit = createSubmitAdapter({
        config,
        execute: { trigger: client.trigger.execute, recurring: client.recurring.execute },
        guard,
        wallets: keyring,
        connection,
        attempts,
        logger,
        send,
      });
      const signWorker = new Worker(
        QUEUES.sign,
        async (job, token) =>
          budget.acting(() =>
            processSign(
              job,
              {
                ...outcomeDeps,
                pause,
                confirm: queues.confirm,
                signAndSubmit,
              },
              token,
            ),
          ),
        { ...workerOptions, concurrency: config.signer.concurrency },
      );
      // The watcher: sent attempts to their outcome, so a dropped transaction never holds a signing
      // slot. It runs in the signer role, the one that sends, but needs no key: only the RPC and the
      // attempt records. A stop does not wait out the watches (up to a blockhash's lifetime): they are
      // cut short and their jobs retried, by another signer process or at the next start.
      const stopping = new AbortController();
      // Every watch in flight waits on this signal (its pause between polls, its retried reads): up to
      // watchConcurrency of them at once is the design, not a leak, so Node's warning at 10 is lifted.
      setMaxListeners(config.signer.watchConcurrency * 4, stopping.signal);
      // Hundreds of transactions watched at once after a burst of claims read their statuses together.
      const watchConnection = withBatchedReads(connection);
      const confirmWorker = new Worker(
        QUEUES.confirm,
        async (job) =>
          processConfirm(job, {
            ...outcomeDeps,
            watch: (intentKey, resumed) =>
              watchAttempt({
                intentKey,
                resumed,
                connection: watchConnection,
                attempts,
                logger,
                send,
                signal: stopping.signal,
              }),
            onWatching: (change) => metrics.attemptsWatched.inc(change),
          }),
        { ...workerOptions, concurrency: config.signer.watchConcurrency },
      );
      // A watch that ran out of attempts (an RPC outage) fails its intent as a sign job does: the next
      // try resumes the recorded attempt, never signs a second one.
      confirmWorker.on("failed", (job, error) => void failIntentOfExhaustedJob(ledger, job, error));
      track(confirmWorker, QUEUES.confirm);
      cleanups.push(async () =>
        stopping.abort(new Error("keeper stopping: the watch resumes from the attempt record")),
      );
      // A sign job that ran out of attempts (an RPC outage, a wallet that kept changing) fails its
      // intent instead of leaving it `sending`: the next poll admits it again, and a transaction that
      // was already sent is then resumed from its attempt record, never signed anew.
      signWorker.on("failed", (job, error) => void failIntentOfExhaustedJob(ledger, job, error));
      track(signWorker, QUEUES.sign);
    }

    // The workers' heartbeat: a blocked event loop or a worker that stopped makes /healthz fail.
    if (workers.length > 0) {
      watchdog.register("workers", WORKER_HEARTBEAT_MS);
      const heartbeat = setInterval(() => {
        if (workers.every((w) => w.isRunning())) watchdog.stamp("workers");
      }, WORKER_HEARTBEAT_MS / 2);
      cleanups.push(async () => clearInterval(heartbeat));
    }

    let ops: OpsServer | undefined;
    if (options.opsServer !== false) {
      ops = await startOpsServer({
        host: config.ops.host,
        port: config.ops.port,
        allowedHosts: config.ops.allowedHosts,
        metrics,
        logger,
        liveness: () => watchdog.check(),
        checks: {
          redis: redisReachable(redis),
          rpc: rpcReachable(config.rpc.url),
          lastPollFresh: () => polls.freshness(config.ops.stalePollSeconds * 1000),
        },
        plugins: [
          statusPagePlugin(
            {
              deps: { config, redis, keys, wallets: walletList },
              onOperatorAction: (action) => metrics.operatorActions.inc({ action }),
              onRefused: (reason) => metrics.opsRequestsRefused.inc({ reason }),
              ...(config.secrets.adminToken === undefined
                ? {}
                : {
                    adminToken: config.secrets.adminToken,
                    queues: queues.all(),
                    queuesWritable: config.ops.queuesWritable,
                  }),
            },
            logger,
          ),
        ],
        onHostRefused: () => metrics.opsRequestsRefused.inc({ reason: "host" }),
      });
      cleanups.push(() => ops?.close() ?? Promise.resolve());
    }
    logger.info(
      { mode: config.mode, roles: [...roles], wallets: walletList.length, ops: ops?.url },
      "keeper started",
    );
    return { config, redis, keys, ledger, queues, metrics, scheduler, ops, client, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Marks the intent of a build or sign job that used up its attempts failed, unless it already ended. */
async function failIntentOfExhaustedJob(
  ledger: Ledger,
  job: Job<{ intentKey: string }> | undefined,
  error: Error,
): Promise<void> {
  if (!job || job.attemptsMade < (job.opts.attempts ?? 1)) return;
  try {
    const row = await ledger.get(job.data.intentKey);
    if (!row || (TERMINAL_STATUSES as readonly string[]).includes(row.status)) return;
    await ledger.update(job.data.intentKey, { status: "failed", error: error.message });
  } catch {
    // Redis is away: housekeeping finds the intent without a job and enqueues it again.
  }
}

/**
 * The process-wide event details cache, made only when a configured strategy needs event details
 * (an exit-rules category, tags or provider selector); otherwise no event is ever fetched.
 */
function eventDetailsFor(
  strategies: KeeperConfig["strategies"],
  client: ApiClient,
  logger: Logger,
  metrics: KeeperMetrics,
): EventDetailsCache | undefined {
  const needs = snapshotNeeds(strategies);
  if (!needs.events) return undefined;
  logger.info({ withProvider: needs.eventProviders }, "snapshots carry event details");
  return new EventDetailsCache({
    reader: {
      getEvent: (eventId) => client.prediction.getEvent(eventId),
      searchEvents: (params) => client.prediction.searchEvents(params),
    },
    logger,
    withProvider: needs.eventProviders,
    onLookup: (outcome) => metrics.eventLookups.inc({ outcome }),
  });
}

function buildApi(client: ApiClient, connection: Connection) {
  return {
    claimPosition: client.prediction.claimPosition,
    closePosition: client.prediction.closePosition,
    createTriggerOrder: client.trigger.createOrder,
    cancelTriggerOrder: client.trigger.cancelOrder,
    createRecurringOrder: client.recurring.createOrder,
    cancelRecurringOrder: client.recurring.cancelOrder,
    closeAllPositions: client.prediction.closeAllPositions,
    buildSwap: client.swap.build,
    simulateUnits: simulateUnitsOn(connection),
  };
}

function notify(
  notifier: Notifier | undefined,
  row: {
    key: string;
    kind: IntentKind;
    wallet: string;
    strategy: string;
    amountMicroUsd?: string;
    tries: number;
  },
  outcome: SignOutcome,
) {
  if (!notifier) return;
  const base = { wallet: row.wallet, intent: row.key, intentKind: row.kind };
  switch (outcome.outcome) {
    case "confirmed":
      notifier.notify({
        kind: "confirmed",
        ...base,
        signature: outcome.signature,
        strategy: row.strategy,
        ...(row.amountMicroUsd ? { amountUsd: formatUsd(BigInt(row.amountMicroUsd)) } : {}),
      });
      break;
    case "refused":
      notifier.notify({
        kind: "refused",
        ...base,
        reason: outcome.reason,
        detail: outcome.detail,
        tries: row.tries,
      });
      break;
    case "failed":
      notifier.notify({ kind: "failed", ...base, error: outcome.error });
      break;
    case "expired":
      break;
  }
}
