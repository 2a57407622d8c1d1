import type { Connection } from "@solana/web3.js";
import { type Job, Worker } from "bullmq";
import type { ApiClient } from "../api/index.js";
import { priorityFeeSettings, recentPriorityFeesOn } from "../chain/priority-fee.js";
import { resolveStrategyTokens } from "../config/resolve-tokens.js";
import { QUEUES, type QueueName } from "../keeper/names.js";
import { type ActionDeps, processAction } from "../keeper/pipeline/action-worker.js";
import { simulateUnitsOn } from "../keeper/pipeline/assemble-swap.js";
import { type PollDeps, type PollEvents, processPoll } from "../keeper/pipeline/poll-worker.js";
import { positionReader, type ReadBeforeCloseDeps } from "../keeper/pipeline/read-before-close.js";
import type { PollJobData } from "../keeper/queues/queues.js";
import { CLAIM_COST_TTL_MS, ClaimCostEstimator, solPriceFrom } from "../keeper/reads/claim-cost.js";
import { eventDetailsFor, serviceSnapshotSource } from "../keeper/reads/service-snapshot-source.js";
import { type SnapshotSource, snapshotNeeds } from "../keeper/reads/snapshot.js";
import { recordLineOf } from "../keeper/replay/recording.js";
import { StrategyStateStore } from "../keeper/state/strategy-state.js";
import { RecordWriter } from "../ops/record-writer.js";
import { RedisAttemptStore } from "../signer/attempt-store.js";
import { TokenPrices } from "../signer/token-prices.js";
import type { RunningRole, SharedInfrastructure } from "./shared-infrastructure.js";
import {
  closeWorkers,
  failIntentWhenExhausted,
  JobRunsAgainLater,
  trackWorker,
  workerOptionsFor,
} from "./workers.js";

type Strategies = SharedInfrastructure["config"]["strategies"];

/**
 * The worker role: polls (snapshot, strategies, intents admitted to the ledger) and builds (the
 * service's unsigned transactions). Its health loop is the workers' heartbeat in start-keeper.
 */
export async function startWorkerRole(shared: SharedInfrastructure): Promise<RunningRole> {
  const { config, clients, connection, logger, metrics } = shared;
  // Tokens named by symbol or name become mints once, here; a bad one stops the start (exit 2).
  const { strategies } = await resolveStrategyTokens(config, clients.targeted.tokens.search);
  const events = eventDetailsFor(strategies, clients.targeted, logger, (outcome) =>
    metrics.eventLookups.inc({ outcome }),
  );
  const claimCost = claimCostFor(shared, strategies);
  const sourceOver = (api: ApiClient): SnapshotSource =>
    serviceSnapshotSource(api, {
      strategies,
      pageSize: config.service.pageSize,
      connection,
      logger,
      orderLists: clients.targeted,
      ...(events ? { events } : {}),
      ...(claimCost ? { claimCost } : {}),
    });
  const pollDeps = pollDepsFor(shared, strategies);
  const recorder = recorderFor(shared);
  const readBeforeClose: ReadBeforeCloseDeps = {
    readPosition: positionReader(clients.targeted.prediction.getPosition),
    strategies,
    loadState: (wallet, strategy) => pollDeps.states.load(wallet, strategy),
    ...(events
      ? {
          eventOf: async (position) =>
            (
              await events.detailsOf([
                { eventId: position.eventId, title: position.eventMetadata.title ?? "" },
              ])
            )[position.eventId],
        }
      : {}),
    now: () => new Date(),
    logger,
    onStrategyError: (strategy) => metrics.strategyErrors.inc({ strategy }),
  };
  // The watcher's polls read at the plan's rate; the sweep's within its share.
  const targetedSource = sourceOver(clients.targeted);
  const sweepSource = sourceOver(clients.sweep);
  const workerOptions = (queue: QueueName) => workerOptionsFor(config, shared.redis, shared.keys, queue);
  const polls = new Worker<PollJobData>(
    QUEUES.poll,
    async (job) => {
      const poll = () =>
        processPoll(job, {
          ...pollDeps,
          source: job.data.target ? targetedSource : sweepSource,
          events: pollEvents(shared, job, recorder),
        });
      const result = job.data.target ? await shared.budget.acting(poll) : await poll();
      // The wallet's other poll may have read its positions before the market changed: a
      // targeted poll runs again once that one is done (its job's attempts, see jobOptions).
      if (result.skipped === "poll_running" && job.data.target)
        throw new JobRunsAgainLater("the wallet's poll is running: the targeted poll runs again after it");
      return result;
    },
    { ...workerOptions(QUEUES.poll), concurrency: config.queues.pollConcurrency },
  );
  trackWorker(polls, QUEUES.poll, metrics, logger);
  const builds = new Worker(
    QUEUES.actions,
    async (job) => {
      const deps = buildDepsFor(shared, targetedSource, readBeforeClose);
      await shared.budget.acting(() => processAction(job, deps));
    },
    { ...workerOptions(QUEUES.actions), concurrency: config.queues.actionConcurrency },
  );
  // A build that ran out of attempts fails its intent, so the next poll may try again later.
  failIntentWhenExhausted(builds, shared.ledger);
  trackWorker(builds, QUEUES.actions, metrics, logger);
  const workers = [polls, builds];
  return {
    workers,
    stop: async () => {
      await closeWorkers(workers);
      await recorder?.flush();
    },
  };
}

/** The recording for `keeper replay`, when `record.dir` is set: a line per poll, never in its way. */
function recorderFor(shared: SharedInfrastructure): RecordWriter | undefined {
  const dir = shared.config.record.dir;
  if (dir === undefined) return undefined;
  shared.logger.info({ dir }, "recording what each poll sees for keeper replay");
  return new RecordWriter({
    dir,
    onOutcome: (outcome) => shared.metrics.recordLines.inc({ outcome }),
    onError: (file, message) => shared.logger.warn({ file, err: message }, "recording line not written"),
  });
}

/** One estimator a process: the worker's polls and the scheduler's claims from the index share it. */
const claimCosts = new WeakMap<SharedInfrastructure, ClaimCostEstimator>();

/**
 * The process-wide estimate of a claim's cost, made only when a strategy needs it: the priority fee
 * Keeper would bid (recent fees on the chain) at the SOL price of the service's token search.
 */
export function claimCostFor(
  shared: SharedInfrastructure,
  strategies: Strategies,
): ClaimCostEstimator | undefined {
  if (!snapshotNeeds(strategies).claimCost) return undefined;
  const { config, connection, logger, clients } = shared;
  const made =
    claimCosts.get(shared) ??
    new ClaimCostEstimator({
      recentFees: recentPriorityFeesOn(connection, logger),
      settings: priorityFeeSettings(config.signer),
      // Prices kept as long as the estimate, so a minute costs at most one token search.
      solPrice: solPriceFrom(new TokenPrices(clients.targeted.tokens.search, CLAIM_COST_TTL_MS)),
      logger,
    });
  claimCosts.set(shared, made);
  return made;
}

/** What every poll shares: the strategies, the stores and the protections. */
function pollDepsFor(
  shared: SharedInfrastructure,
  strategies: Strategies,
): Omit<PollDeps, "source" | "events"> {
  const { config } = shared;
  return {
    mode: config.mode,
    // A poll killed mid-way frees its wallet when its BullMQ lock would have expired too.
    lockMs: config.queues.lockDurationMs,
    strategies,
    balanceMints: snapshotNeeds(strategies).balances,
    ledger: shared.ledger,
    states: new StrategyStateStore(shared.redis, shared.keys),
    pause: shared.pause,
    redis: shared.redis,
    keys: shared.keys,
    actions: shared.queues.actions,
    logger: shared.logger,
    protections: shared.protections,
    ...(config.watcher.enabled ? { holdings: { index: shared.holdings } } : {}),
  };
}

/** A poll's events as metrics, the poll tracker's freshness and breaker notifications. */
function pollEvents(
  shared: SharedInfrastructure,
  job: Job<PollJobData>,
  recorder: RecordWriter | undefined,
): PollEvents {
  const { metrics, notifier } = shared;
  return {
    ...(recorder ? { onSnapshot: (snapshot) => recorder.write(recordLineOf(snapshot)) } : {}),
    onPollSucceeded: (wallet, ms) => {
      shared.polls.recordSuccess(wallet);
      metrics.pollDuration.observe({ kind: job.data.kind }, ms / 1000);
    },
    onPollSkipped: (reason) => metrics.pollSkipped.inc({ reason }),
    onIntent: (intent, admitted) => {
      if (admitted) metrics.recordIntent(intent.strategy, intent.kind);
    },
    onIntentNotAdmitted: (intent, reason) =>
      metrics.recordIntentNotAdmitted(intent.strategy, intent.kind, reason),
    onLeftToService: () => metrics.claimsWithoutTransaction.inc({ status: "left_to_service" }),
    onStrategyError: (strategy) => metrics.strategyErrors.inc({ strategy }),
    onStrategyNotice: (strategy, notice) => metrics.strategyNotices.inc({ strategy, notice }),
    onProtections: (evaluation) => {
      for (const b of evaluation.breakers) if (b.isEnabled) metrics.setCircuitBreaker(b.name, b.isTripped);
    },
    onBreakerChange: (change) =>
      notifier?.notify({
        kind: "breaker",
        breaker: change.breaker,
        tripped: change.isTripped,
        detail: change.detail,
      }),
    onTargetedIntent: (trigger, seconds) => metrics.marketReaction.observe({ trigger }, seconds),
  };
}

/** A build job's dependencies: the service's build endpoints, the chain for fees and simulation. */
function buildDepsFor(
  shared: SharedInfrastructure,
  source: SnapshotSource,
  readBeforeClose: ReadBeforeCloseDeps,
): ActionDeps {
  const { config, connection, logger, metrics } = shared;
  return {
    api: buildApi(shared.clients.targeted, connection),
    ledger: shared.ledger,
    sign: shared.queues.sign,
    logger,
    positions: source.positions,
    closeAllSlippageBps: config.protections.closeAllSlippageBps,
    claimPayoutToleranceBps: config.signer.inflowToleranceBps,
    priorityFees: {
      recent: recentPriorityFeesOn(connection, logger),
      settings: priorityFeeSettings(config.signer),
    },
    onPriorityFee: (kind, price) => metrics.priorityFee.observe({ kind }, price),
    onClaimSettled: () => metrics.claimsWithoutTransaction.inc({ status: "settled" }),
    readBeforeClose,
    onCloseDropped: (reason) => metrics.closesDropped.inc({ reason }),
    attempts: new RedisAttemptStore(shared.redis, shared.keys.attemptsPrefix),
  };
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
