import { runHousekeeping } from "../keeper/pipeline/housekeeping.js";
import { IndexClaims } from "../keeper/pipeline/index-claims.js";
import { ValueSeries } from "../keeper/state/value-series.js";
import { MarketWatcher } from "../keeper/watch/market-watcher.js";
import { Scheduler } from "../keeper/watch/scheduler.js";
import type { RunningRole, SharedInfrastructure } from "./shared-infrastructure.js";
import { claimCostFor } from "./worker-role.js";

export interface RunningSchedulerRole extends RunningRole {
  readonly scheduler: Scheduler;
}

/**
 * The scheduler role: the sweep's ticks, the market watcher's targeted polls and housekeeping. Its
 * health loop: a scheduler tick stamps the watchdog, two missed intervals make /healthz fail.
 */
export function startSchedulerRole(shared: SharedInfrastructure): RunningSchedulerRole {
  const { config, redis, keys, queues, pause, logger, metrics, wallets, notifier } = shared;
  const claims = indexClaimsFor(shared);
  // The fleet value series counts only the wallets this keeper runs (one taken out leaves the total).
  new ValueSeries(redis, keys)
    .forget(wallets)
    .catch((error: Error) => logger.warn({ err: error.message }, "fleet value series not trimmed"));
  const watcher = new MarketWatcher({
    client: shared.clients.watcher,
    ...(claims ? { claims } : {}),
    index: shared.holdings,
    redis,
    keys,
    poll: queues.poll,
    pause,
    logger,
    settings: {
      bandPct: config.watcher.bandPct,
      retriggerSeconds: config.watcher.retriggerSeconds,
      pageSize: config.service.pageSize,
      wallets: new Set(wallets),
      hot: {
        seconds: config.watcher.hotSeconds,
        bandPct: config.watcher.hotBandPct,
        eventsPerSecond: (config.service.requestsPerSecond * config.watcher.hotSharePct) / 100,
      },
    },
    events: {
      onWatched: (count) => metrics.watchedMarkets.set(count),
      onHot: (count) => metrics.hotEvents.set(count),
      onRequest: (endpoint) => metrics.watcherRequests.inc({ endpoint }),
      onTargeted: (trigger) => metrics.targetedPolls.inc({ trigger }),
    },
  });
  const scheduler = new Scheduler({
    config,
    wallets,
    queues,
    redis,
    keys,
    pause,
    logger,
    onSkipped: (reason) => metrics.pollSkipped.inc({ reason }),
    onTick: () => shared.watchdog.stamp("scheduler"),
    watchMarkets: async () => {
      await watcher.run();
    },
    watchHot: async () => {
      await watcher.runHot();
    },
    housekeeping: async () => {
      await runHousekeeping({
        ledger: shared.ledger,
        actions: queues.actions,
        sign: queues.sign,
        confirm: queues.confirm,
        wallets,
        stuckSendingSeconds: config.signer.stuckSendingSeconds,
        logger,
        notify: (event) => notifier?.notify(event),
        onStuckSending: (count) => metrics.setIntentsStuckSending(count),
      });
    },
  });
  // Two missed intervals of this length make /healthz fail: the stale-poll threshold in all.
  shared.watchdog.register("scheduler", (config.ops.stalePollSeconds * 1000) / 2);
  scheduler.start();
  return { scheduler, workers: [], stop: () => scheduler.stop() };
}

/**
 * Claims from the holdings index, when a configured strategy decides claims from an index entry
 * (its `claimFromIndex` hook): the strategies as configured (the hook gets no token field resolved).
 */
function indexClaimsFor(shared: SharedInfrastructure): IndexClaims | undefined {
  const { config, metrics, logger } = shared;
  const strategies = config.strategies;
  if (!strategies.some((s) => s.strategy.claimFromIndex !== undefined)) return undefined;
  const claimCost = claimCostFor(shared, strategies);
  return new IndexClaims({
    mode: config.mode,
    strategies,
    ledger: shared.ledger,
    actions: shared.queues.actions,
    logger,
    ...(claimCost ? { claimCost } : {}),
    events: {
      onOutcome: (outcome, strategy) => {
        metrics.indexClaims.inc({ outcome });
        // As a poll's admitted intents are counted (a left claim is an intent recorded, too).
        if (strategy && (outcome === "claimed" || outcome === "left_to_service"))
          metrics.recordIntent(strategy, "claim");
        if (outcome === "left_to_service")
          metrics.claimsWithoutTransaction.inc({ status: "left_to_service" });
      },
      onStrategyError: (strategy) => metrics.strategyErrors.inc({ strategy }),
      onClaimAdmitted: (seconds) => metrics.marketReaction.observe({ trigger: "resolved" }, seconds),
    },
  });
}
