import { runHousekeeping } from "../keeper/pipeline/housekeeping.js";
import { MarketWatcher } from "../keeper/watch/market-watcher.js";
import { Scheduler } from "../keeper/watch/scheduler.js";
import type { RunningRole, SharedInfrastructure } from "./shared-infrastructure.js";

export interface RunningSchedulerRole extends RunningRole {
  readonly scheduler: Scheduler;
}

/**
 * The scheduler role: the sweep's ticks, the market watcher's targeted polls and housekeeping. Its
 * health loop: a scheduler tick stamps the watchdog, two missed intervals make /healthz fail.
 */
export function startSchedulerRole(shared: SharedInfrastructure): RunningSchedulerRole {
  const { config, redis, keys, queues, pause, logger, metrics, wallets, notifier } = shared;
  const watcher = new MarketWatcher({
    client: shared.clients.watcher,
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
