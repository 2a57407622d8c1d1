import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { IntentKind } from "../core/intent.js";
import { MICRO_PER_USD } from "../core/money.js";
import type { NotificationOutcome } from "./notifier.js";
import { type PollTimesSource, summarizePolls } from "./poll-tracker.js";
import { mergePrometheusText } from "./prometheus-text.js";
import { withTimeout } from "./with-timeout.js";

/*
 * Every metric is `keeper_<thing>_<unit>` and every label value comes from a small fixed set (an
 * endpoint name, a queue, an outcome, a reason code): never a wallet, a signature, a URL or a key.
 * Each metric is documented in METRICS.md.
 */

export type TransactionOutcome = "confirmed" | "failed" | "expired" | "refused";
export type JobOutcome = "completed" | "failed" | "retried" | "stalled";
/** An HTTP status code, or what happened when there was none. */
export type ApiStatus = number | "network" | "timeout";

/** Job counts per queue, then per BullMQ state (`waiting`, `active`, `delayed`, `failed`, ...). */
export type QueueCounts = Readonly<Record<string, Readonly<Record<string, number>>>>;

/** What BullMQ's Queue offers that metrics use; a structural type so tests need no Redis. */
export interface PrometheusExportingQueue {
  exportPrometheusMetrics(): Promise<string>;
}
export interface CountingQueue {
  readonly name: string;
  getJobCounts(): Promise<Record<string, number>>;
}

export interface CreateMetricsOptions {
  /** Queue depths for `keeper_queue_jobs`, read at each scrape. */
  getQueueCounts?: () => Promise<QueueCounts>;
  /** Per-wallet poll times, summarised at each scrape. */
  polls?: PollTimesSource;
  /** A wallet not polled for this long counts as stale. Default 120 s. */
  stalePollSeconds?: number;
  /** BullMQ queues whose own Prometheus text is appended to `render()`. */
  bullQueues?: readonly PrometheusExportingQueue[];
  /** Process metrics (CPU, memory, event loop, GC); default true. */
  defaultMetrics?: boolean;
  /** How long a scrape waits for Redis-backed collectors. Default 2000 ms. */
  collectTimeoutMs?: number;
  now?: () => number;
}

const API_SECONDS_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const CONFIRMATION_SECONDS_BUCKETS = [0.5, 1, 2, 3, 5, 8, 13, 20, 30, 45, 60, 90, 120];
const POLL_SECONDS_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export type KeeperMetrics = ReturnType<typeof createMetrics>;

/** A fresh registry and metric set: one per process, or one per test. */
export function createMetrics(options: CreateMetricsOptions = {}) {
  const registry = new Registry();
  const registers = [registry];
  const collectTimeoutMs = options.collectTimeoutMs ?? 2_000;

  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry, prefix: "keeper_" });

  const collectErrors = new Counter({
    name: "keeper_metrics_collect_errors_total",
    help: "Scrapes during which a collector (queue counts, poll times, bullmq) failed or timed out",
    labelNames: ["collector"] as const,
    registers,
  });
  // Registered in the order a scrape has always listed them.
  const api = apiMetrics(registers);
  const queueJobs = queueDepthMetric(registers, options, collectErrors);
  const pipeline = pipelineMetrics(registers);
  const watcher = watcherMetrics(registers);
  const freshness = pollFreshnessMetrics(registers, options, collectErrors);
  const controls = controlMetrics(registers);
  const { apiRequests, apiRequestDuration, apiItemsSkipped, apiRateLimited } = api;
  const { jobs, intents, intentsNotAdmitted, transactions, confirmationDuration, claimedUsd } = pipeline;
  const { notifications, paused, intentsStuckSending, circuitBreakerTripped } = controls;

  return {
    registry,
    apiRequests,
    apiRequestDuration,
    apiRateLimited,
    queueJobs,
    ...pipeline,
    ...watcher,
    ...freshness,
    ...controls,
    collectErrors,

    /** One API call: counts it, times it, and counts a 429 separately. */
    observeApiRequest(endpoint: string, status: ApiStatus, seconds: number): void {
      apiRequests.inc({ endpoint, status: String(status) });
      apiRequestDuration.observe({ endpoint }, seconds);
      if (status === 429) apiRateLimited.inc({ endpoint });
    },
    /** Items of a list answer left out (unreadable), so one bad item does not lose a whole poll. */
    recordApiItemsSkipped(endpoint: string, count: number): void {
      apiItemsSkipped.inc({ endpoint }, count);
    },
    recordJob(queue: string, outcome: JobOutcome): void {
      jobs.inc({ queue, outcome });
    },
    recordIntent(strategy: string, kind: IntentKind): void {
      intents.inc({ strategy, kind });
    },
    recordIntentNotAdmitted(strategy: string, kind: IntentKind, reason: string): void {
      intentsNotAdmitted.inc({ strategy, kind, reason });
    },
    /** A transaction's final outcome; the confirmation time is observed for confirmed ones. */
    recordTransaction(kind: IntentKind, outcome: TransactionOutcome, confirmationSeconds?: number): void {
      transactions.inc({ kind, outcome });
      if (outcome === "confirmed" && confirmationSeconds !== undefined)
        confirmationDuration.observe({ kind }, confirmationSeconds);
    },
    /** Adds a confirmed claim's payout. Micro-USD stay integers until this one conversion. */
    addClaimedMicroUsd(amountMicroUsd: bigint): void {
      if (amountMicroUsd <= 0n) return;
      const whole = amountMicroUsd / MICRO_PER_USD;
      const fraction = amountMicroUsd % MICRO_PER_USD;
      claimedUsd.inc(Number(whole) + Number(fraction) / 1e6);
    },
    /** Pass as the notifier's `countOutcome`. */
    recordNotification(outcome: NotificationOutcome): void {
      notifications.inc({ outcome });
    },
    setPaused(isPaused: boolean): void {
      paused.set(isPaused ? 1 : 0);
    },
    setIntentsStuckSending(count: number): void {
      intentsStuckSending.set(count);
    },
    setCircuitBreaker(breaker: string, isTripped: boolean): void {
      circuitBreakerTripped.set({ breaker }, isTripped ? 1 : 0);
    },

    get contentType(): string {
      return registry.contentType;
    },
    /** Keeper's metrics in text format, followed by BullMQ's own when queues were given. */
    async render(): Promise<string> {
      const own = await registry.metrics();
      if (!options.bullQueues || options.bullQueues.length === 0) return own;
      try {
        const blocks = await withTimeout(
          Promise.all(options.bullQueues.map((queue) => queue.exportPrometheusMetrics())),
          collectTimeoutMs,
          "bullmq metrics",
        );
        return own + mergePrometheusText(blocks);
      } catch {
        collectErrors.inc({ collector: "bullmq" });
        return own;
      }
    },
  };
}

/** Requests to the service API. */
function apiMetrics(registers: Registry[]) {
  const apiRequests = new Counter({
    name: "keeper_api_requests_total",
    help: "Requests to the service API, by endpoint name and HTTP status (or network/timeout)",
    labelNames: ["endpoint", "status"] as const,
    registers,
  });
  const apiRequestDuration = new Histogram({
    name: "keeper_api_request_duration_seconds",
    help: "Service API request latency, by endpoint name",
    labelNames: ["endpoint"] as const,
    buckets: API_SECONDS_BUCKETS,
    registers,
  });
  const apiItemsSkipped = new Counter({
    name: "keeper_api_items_skipped_total",
    help: "Items of service API list answers left out because they broke the schema, by endpoint name",
    labelNames: ["endpoint"] as const,
    registers,
  });
  const apiRateLimited = new Counter({
    name: "keeper_api_rate_limited_total",
    help: "Service API answers with status 429, by endpoint name",
    labelNames: ["endpoint"] as const,
    registers,
  });
  return { apiRequests, apiRequestDuration, apiItemsSkipped, apiRateLimited };
}

/** Queue depths, read from Redis at each scrape. */
function queueDepthMetric(
  registers: Registry[],
  options: CreateMetricsOptions,
  collectErrors: Counter<"collector">,
) {
  const collectTimeoutMs = options.collectTimeoutMs ?? 2_000;
  return new Gauge({
    name: "keeper_queue_jobs",
    help: "Jobs per queue and state, read from Redis at scrape time",
    labelNames: ["queue", "state"] as const,
    registers,
    async collect() {
      if (!options.getQueueCounts) return;
      try {
        const counts = await withTimeout(options.getQueueCounts(), collectTimeoutMs, "queue counts");
        this.reset();
        for (const [queue, states] of Object.entries(counts))
          for (const [state, count] of Object.entries(states)) this.set({ queue, state }, count);
      } catch {
        // Reset rather than repeat old depths as if they were current; the failure is counted.
        this.reset();
        collectErrors.inc({ collector: "queue_jobs" });
      }
    },
  });
}

/** Jobs, intents, transactions and polls: the pipeline at work. */
function pipelineMetrics(registers: Registry[]) {
  const jobs = new Counter({
    name: "keeper_jobs_total",
    help: "Finished job attempts, by queue and outcome (completed, failed, retried, stalled)",
    labelNames: ["queue", "outcome"] as const,
    registers,
  });
  const intents = new Counter({
    name: "keeper_intents_total",
    help: "Intents produced by strategies and admitted, by strategy and intent kind",
    labelNames: ["strategy", "kind"] as const,
    registers,
  });
  const intentsNotAdmitted = new Counter({
    name: "keeper_intents_not_admitted_total",
    help: "Intents the ledger did not admit, by strategy, intent kind and why (done, in_flight, failed, refused, other_wallet)",
    labelNames: ["strategy", "kind", "reason"] as const,
    registers,
  });
  const strategyErrors = new Counter({
    name: "keeper_strategy_errors_total",
    help: "Strategy evaluations that threw or returned invalid output, by strategy",
    labelNames: ["strategy"] as const,
    registers,
  });
  const strategyNotices = new Counter({
    name: "keeper_strategy_notices_total",
    help: "Things strategies reported and did not act on (e.g. dca_order_unmatched), by strategy and notice",
    labelNames: ["strategy", "notice"] as const,
    registers,
  });
  const transactions = new Counter({
    name: "keeper_transactions_total",
    help: "Transactions by intent kind and final outcome (confirmed, failed, expired, refused)",
    labelNames: ["kind", "outcome"] as const,
    registers,
  });
  const confirmationDuration = new Histogram({
    name: "keeper_confirmation_duration_seconds",
    help: "Time from first send to confirmation, by intent kind",
    labelNames: ["kind"] as const,
    buckets: CONFIRMATION_SECONDS_BUCKETS,
    registers,
  });
  const priorityFee = new Histogram({
    name: "keeper_priority_fee_micro_lamports",
    help: "Compute-unit price Keeper asked for per build, in micro-lamports per unit, by intent kind",
    labelNames: ["kind"] as const,
    buckets: [1_000, 10_000, 100_000, 1_000_000, 10_000_000],
    registers,
  });
  const policyRefusals = new Counter({
    name: "keeper_policy_refusals_total",
    help: "Transactions the signer refused to sign, by intent kind and policy reason code",
    labelNames: ["kind", "reason"] as const,
    registers,
  });
  const claimedUsd = new Counter({
    name: "keeper_claimed_usd_total",
    help: "US dollars paid out by confirmed claims",
    registers,
  });
  const claimsWithoutTransaction = new Counter({
    name: "keeper_claims_without_transaction_total",
    help: "Claims that ended without a transaction of Keeper's, by status (left_to_service: not worth the fee, the service's free claim pays; settled: no claim required, or already claimed)",
    labelNames: ["status"] as const,
    registers,
  });
  const pollDuration = new Histogram({
    name: "keeper_poll_duration_seconds",
    help: "Time to poll one wallet (all pages) and build its snapshot, by poll kind",
    labelNames: ["kind"] as const,
    buckets: POLL_SECONDS_BUCKETS,
    registers,
  });
  const pollSkipped = new Counter({
    name: "keeper_poll_skipped_total",
    help: "Scheduled polls not run, by reason (previous poll still running, paused, ...)",
    labelNames: ["reason"] as const,
    registers,
  });
  const closesDropped = new Counter({
    name: "keeper_closes_dropped_total",
    help: "Closes dropped by the read before selling, by reason (not_found, not_open, rule_not_met)",
    labelNames: ["reason"] as const,
    registers,
  });
  return {
    jobs,
    intents,
    intentsNotAdmitted,
    closesDropped,
    strategyErrors,
    strategyNotices,
    transactions,
    confirmationDuration,
    priorityFee,
    policyRefusals,
    claimedUsd,
    claimsWithoutTransaction,
    pollDuration,
    pollSkipped,
  };
}

/** The market watcher's work and the event details it looks up. */
function watcherMetrics(registers: Registry[]) {
  const watchedMarkets = new Gauge({
    name: "keeper_watched_markets",
    help: "Markets the fleet holds, read by the market watcher at its last cycle",
    registers,
  });
  const hotEvents = new Gauge({
    name: "keeper_watcher_hot_events",
    help: "Held events the market watcher reads at its hot cadence (a market past close and unresolved, or near an exit)",
    registers,
  });
  const watcherRequests = new Counter({
    name: "keeper_watcher_requests_total",
    help: "Requests the market watcher sent, by endpoint name (listEvents, listEventMarkets, getMarket)",
    labelNames: ["endpoint"] as const,
    registers,
  });
  const targetedPolls = new Counter({
    name: "keeper_targeted_polls_total",
    help: "Polls the market watcher enqueued ahead of the sweep, by trigger (resolved, price, time)",
    labelNames: ["trigger"] as const,
    registers,
  });
  const marketReaction = new Histogram({
    name: "keeper_market_reaction_seconds",
    help: "From the market watcher seeing a change to an intent of the holder's poll admitted, by trigger",
    labelNames: ["trigger"] as const,
    buckets: [0.25, 0.5, 1, 2, 3, 5, 8, 13, 20, 30, 60],
    registers,
  });
  const indexClaims = new Counter({
    name: "keeper_index_claims_total",
    help: "Winners of a resolved market decided from the holdings index, by outcome (claimed, left_to_service, not_admitted, nothing, polled)",
    labelNames: ["outcome"] as const,
    registers,
  });
  const recordLines = new Counter({
    name: "keeper_record_lines_total",
    help: "Poll lines for the replay recording (record.dir), by outcome (written, failed, dropped)",
    labelNames: ["outcome"] as const,
    registers,
  });
  const eventLookups = new Counter({
    name: "keeper_event_lookups_total",
    help: "Event details looked up for snapshots, by outcome (cached, fetched, failed)",
    labelNames: ["outcome"] as const,
    registers,
  });
  return {
    watchedMarkets,
    hotEvents,
    watcherRequests,
    targetedPolls,
    marketReaction,
    indexClaims,
    eventLookups,
    recordLines,
  };
}

/** How fresh every wallet's last poll is, summarised at each scrape. */
function pollFreshnessMetrics(
  registers: Registry[],
  options: CreateMetricsOptions,
  collectErrors: Counter<"collector">,
) {
  const now = options.now ?? Date.now;
  const collectTimeoutMs = options.collectTimeoutMs ?? 2_000;
  const staleMs = (options.stalePollSeconds ?? 120) * 1_000;
  const pollSummary = async () => {
    if (!options.polls) return undefined;
    try {
      const times = await withTimeout(
        Promise.resolve(options.polls.pollTimes()),
        collectTimeoutMs,
        "poll times",
      );
      return summarizePolls(times, now(), staleMs);
    } catch {
      collectErrors.inc({ collector: "polls" });
      return undefined;
    }
  };
  const lastSuccessfulPoll = new Gauge({
    name: "keeper_last_successful_poll_timestamp_seconds",
    help: "Oldest last-successful-poll time across wallets (Unix seconds); 0 before any wallet is tracked",
    registers,
    async collect() {
      const summary = await pollSummary();
      this.set(summary?.oldestMs === undefined ? 0 : summary.oldestMs / 1_000);
    },
  });
  const staleWallets = new Gauge({
    name: "keeper_stale_wallets",
    help: "Wallets whose last successful poll is older than the stale threshold",
    registers,
    async collect() {
      const summary = await pollSummary();
      if (summary) this.set(summary.stale.length);
    },
  });
  return { lastSuccessfulPoll, staleWallets };
}

/** Notifications, operator actions and the controls (pause, breakers, stuck and watched sends). */
function controlMetrics(registers: Registry[]) {
  const notifications = new Counter({
    name: "keeper_notifications_total",
    help: "Webhook notifications by outcome (delivered, failed, dropped, suppressed)",
    labelNames: ["outcome"] as const,
    registers,
  });
  const operatorActions = new Counter({
    name: "keeper_operator_actions_total",
    help: "Pause, resume and retry taken through the ops server with the operator token",
    labelNames: ["action"] as const,
    registers,
  });
  const opsRequestsRefused = new Counter({
    name: "keeper_ops_requests_refused_total",
    help: "Requests to the ops server refused, by reason (token, cross_site, host, read_only)",
    labelNames: ["reason"] as const,
    registers,
  });
  const paused = new Gauge({
    name: "keeper_paused",
    help: "1 while the pause switch is on (nothing is built or sent), else 0",
    registers,
  });
  const intentsStuckSending = new Gauge({
    name: "keeper_intents_stuck_sending",
    help: "Intents in sending longer than signer.stuckSendingSeconds at the last housekeeping",
    registers,
  });
  const predictionExecutes = new Counter({
    name: "keeper_prediction_executes_total",
    help: "Calls of the service's prediction execute endpoint (first sends and resends), by its answer (success, failed, error)",
    labelNames: ["outcome"] as const,
    registers,
  });
  const attemptsWatched = new Gauge({
    name: "keeper_attempts_watched",
    help: "Sent transactions this process is watching to an outcome (rebroadcasting), outside the signing slots",
    registers,
  });
  const circuitBreakerTripped = new Gauge({
    name: "keeper_circuit_breaker_tripped",
    help: "1 while the named circuit breaker is open, else 0",
    labelNames: ["breaker"] as const,
    registers,
  });
  return {
    notifications,
    operatorActions,
    opsRequestsRefused,
    paused,
    intentsStuckSending,
    attemptsWatched,
    predictionExecutes,
    circuitBreakerTripped,
  };
}

/** Reads `keeper_queue_jobs` from BullMQ queues. */
export function queueCountsFrom(queues: readonly CountingQueue[]): () => Promise<QueueCounts> {
  return async () => {
    const entries = await Promise.all(
      queues.map(async (queue) => [queue.name, await queue.getJobCounts()] as const),
    );
    return Object.fromEntries(entries);
  };
}
