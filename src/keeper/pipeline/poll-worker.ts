import type { Job, Queue } from "bullmq";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import type { ConfiguredStrategy } from "../../config/load-config.js";
import { type Intent, intentKeys } from "../../core/intent.js";
import { formatUsd } from "../../core/money.js";
import { walletValueMicroUsd } from "../../core/position-value.js";
import type { Snapshot } from "../../core/snapshot.js";
import { redisScript } from "../../ops/redis-script.js";
import { BUILD_PRIORITY, type RedisKeys } from "../names.js";
import { isHeldBackByBreakers, type ProtectionsEvaluation, utcDayTag } from "../operator/circuit-breakers.js";
import type { PauseSwitch } from "../operator/pause.js";
import type { BreakerChange, Protections } from "../operator/protections.js";
import { enqueueBuild } from "../queues/enqueue.js";
import type { ActionJobData, PollJobData } from "../queues/queues.js";
import { type SnapshotSource, takeSnapshot } from "../reads/snapshot.js";
import { type HoldingsIndex, holdingsOf } from "../state/holdings.js";
import { type Ledger, type NotAdmittedReason, notAdmittedReason } from "../state/ledger.js";
import { openBesidesPositions, PollRecords } from "../state/poll-record.js";
import type { StrategyStateStore } from "../state/strategy-state.js";
import { ValueSeries } from "../state/value-series.js";
import { latestClose } from "./close-chain.js";
import { runStrategies } from "./run-strategies.js";

// Releases the wallet's poll lock only if it is still ours (KEYS: lock; ARGV: our token).
const releaseLockScript = redisScript<number>(
  "keeperPollReleaseLock",
  1,
  "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end",
);

/**
 * Records the wallet's successful poll at Redis's own second (KEYS: polled-at; ARGV: wallet). Scored
 * when the write lands, the set's scores grow in the order its writes land, whichever process, clock
 * or poll length: a refresh that reads from the newest second it has seen misses none (see
 * refreshPollTimes). A poll's start second would not: a poll that outlasts a later-started one lands a
 * lower score after a refresh has moved past it.
 */
const recordPolledScript = redisScript<number>(
  "keeperPollRecordPolled",
  1,
  "local now = redis.call('TIME') redis.call('ZADD', KEYS[1], now[1], ARGV[1]) return tonumber(now[1])",
);

export interface PollEvents {
  onPollSucceeded?(wallet: string, durationMs: number): void;
  onPollSkipped?(reason: "paused" | "poll_running"): void;
  onIntent?(intent: Intent, admitted: boolean): void;
  /** An intent the ledger did not admit, and why. */
  onIntentNotAdmitted?(intent: Intent, reason: NotAdmittedReason): void;
  onStrategyError?(strategy: string): void;
  /** A notice a strategy reported (see `StrategyNotice`); logged already. */
  onStrategyNotice?(strategy: string, code: string): void;
  /** The circuit breakers as this poll saw them (for the gauge). */
  onProtections?(evaluation: ProtectionsEvaluation): void;
  /** A breaker tripped or reset; reported to one poll only, across every replica. */
  onBreakerChange?(change: BreakerChange): void;
  /** An intent a tripped breaker held back. */
  onHeldBack?(intent: Intent): void;
  /** A claim recorded as left to the service's own free claim (once per position). */
  onLeftToService?(intent: Intent): void;
  /**
   * What the poll read, as soon as it is read (the recording for `keeper replay`). Called
   * synchronously: it must return at once; what it throws is logged and the poll goes on.
   */
  onSnapshot?(snapshot: Snapshot): void;
  /** An intent admitted by a poll the market watcher asked for: seconds since it saw the change. */
  onTargetedIntent?(trigger: NonNullable<PollJobData["target"]>["trigger"], seconds: number): void;
}

/** The strategy name protections' own intents (the close-all trigger) are recorded under. */
export const PROTECTIONS_STRATEGY = "protections";

export interface PollDeps {
  mode: "live" | "dry-run";
  strategies: readonly ConfiguredStrategy[];
  source: SnapshotSource;
  ledger: Ledger;
  states: StrategyStateStore;
  pause: PauseSwitch;
  redis: Redis;
  keys: RedisKeys;
  actions: Queue<ActionJobData>;
  logger: Logger;
  events?: PollEvents;
  now?: () => Date;
  /** How long a poll may hold its wallet's lock before it is presumed dead. */
  lockMs?: number;
  /** Mints whose balances go into each snapshot (the strategies' `needs`). */
  balanceMints?: readonly string[];
  /** Circuit breakers; without them (or with none configured) nothing is held back. */
  protections?: Protections;
  /**
   * The holdings index each poll rewrites for its wallet (for the market watcher), with the prices at
   * which the strategies would act (their `priceThresholds` hooks).
   */
  holdings?: { index: HoldingsIndex };
}

export interface PollResult {
  skipped?: "paused" | "poll_running";
  intents: number;
  admitted: number;
  /** Intents a tripped circuit breaker held back. */
  heldBack?: number;
}

/**
 * One poll of one wallet: snapshot, strategies, intents into the ledger and the actions queue.
 * In dry-run the intents are recorded as `dry-run` and nothing is queued for building or signing.
 *
 * Its Redis work goes in four steps besides the request and the admissions, each step's commands
 * issued together (one socket write on Keeper's connection: coalesceWrites): the pause and the lock;
 * what the strategies and breakers need; what the poll saw; the strategies' states, the poll's time
 * and the lock's release.
 */
export async function processPoll(
  job: Pick<Job<PollJobData>, "data" | "id">,
  deps: PollDeps,
): Promise<PollResult> {
  const { wallet, kind } = job.data;
  const now = deps.now?.() ?? new Date();
  const nowSeconds = Math.floor(now.getTime() / 1000);
  const log = deps.logger.child({ wallet, job: job.id });
  const lockKey = deps.keys.pollLock(wallet);
  const token = `${job.id ?? "poll"}-${now.getTime()}`;
  const skipped = await lockUnlessPaused(lockKey, token, deps);
  if (skipped) {
    deps.events?.onPollSkipped?.(skipped);
    return { skipped, intents: 0, admitted: 0 };
  }
  const started = performance.now();
  let released = false;
  try {
    const { inFlight, triggerOrders, loaded, protections } = await readBeforePoll(wallet, nowSeconds, deps);
    const snapshot = await takeSnapshot({
      wallet,
      withOrders: kind === "orders",
      source: deps.source,
      inFlight,
      nowSeconds,
      triggerOrders,
      ...(deps.balanceMints ? { balanceMints: deps.balanceMints } : {}),
    });
    tellSnapshot(snapshot, deps, log);
    await Promise.all([
      indexHoldings(wallet, snapshot, deps, log),
      recordWhatWasSeen(wallet, snapshot, kind === "orders", deps, log),
    ]);
    const report = runStrategies({
      snapshot,
      strategies: deps.strategies,
      states: loaded.states,
      now,
      logger: log,
      onStrategyError: (s) => deps.events?.onStrategyError?.(s),
      onStrategyNotice: (s, code) => deps.events?.onStrategyNotice?.(s, code),
    });
    const { intents, heldBack, heldBackStrategies } = await applyProtections(report.intents, {
      wallet,
      nowSeconds,
      deps,
      log,
      inFlightKeys: new Set(inFlight.map((row) => row.key)),
      ...(protections ? { evaluation: protections } : {}),
    });

    let admitted = 0;
    for (const candidate of intents) {
      const intent =
        candidate.kind === "close"
          ? await closeAgainIfStillOpen(candidate, deps, nowSeconds, log)
          : candidate;
      const result = await deps.ledger.admit(intent, admissionStatus(intent, deps.mode));
      deps.events?.onIntent?.(intent, result.admitted);
      if (!result.admitted) {
        const owner = result.owner;
        const reason = notAdmittedReason(result.status, owner !== undefined && owner !== wallet);
        log.debug(
          { intent: intent.key, kind: intent.kind, strategy: intent.strategy, status: result.status, reason },
          "intent not admitted",
        );
        deps.events?.onIntentNotAdmitted?.(intent, reason);
        continue;
      }
      admitted += 1;
      if (isLeftToService(intent)) {
        // A record, not an action: the service's own claim pays it; nothing is built or signed.
        if (intent.expectedPayoutMicroUsd !== undefined)
          await deps.ledger.update(intent.key, { amountMicroUsd: intent.expectedPayoutMicroUsd });
        deps.events?.onLeftToService?.(intent);
        log.info(
          {
            intent: intent.key,
            position: intent.positionPubkey,
            strategy: intent.strategy,
            reason: intent.reason,
          },
          "claim left to the service's free claim",
        );
        continue;
      }
      const target = job.data.target;
      if (target) deps.events?.onTargetedIntent?.(target.trigger, (Date.now() - target.seenAtMs) / 1000);
      log.info(
        { intent: intent.key, kind: intent.kind, strategy: intent.strategy, mode: deps.mode },
        "intent recorded",
      );
      if (deps.mode === "live")
        await enqueueBuild(
          deps.actions,
          intent.key,
          { tries: result.tries ?? 1, recordId: result.recordId },
          1,
          job.data.target ? BUILD_PRIORITY.first : BUILD_PRIORITY.sweep,
        );
    }
    // The states go after the intents: a crash between the two asks for the same intents again (the
    // ledger admits a key once), where the other way round it would lose them. A strategy whose
    // intent a breaker held back keeps its previous state: its new state would say the order was
    // placed (a DCA round, a limit order's start), and the order would never be asked for again
    // once the breaker resets.
    released = true;
    await Promise.all([
      deps.states.saveChanged(
        wallet,
        [...report.states].filter(([name]) => !heldBackStrategies.has(name)),
        loaded,
      ),
      recordPolledScript(deps.redis, deps.keys.lastPolls, wallet),
      releaseLockScript(deps.redis, lockKey, token),
    ]);
    deps.events?.onPollSucceeded?.(wallet, performance.now() - started);
    return { intents: intents.length, admitted, heldBack };
  } finally {
    // Release only our own lock: a poll that outlived its lock must not free the next one's.
    if (!released) await releaseLockScript(deps.redis, lockKey, token);
  }
}

/**
 * Takes the wallet's poll lock unless Keeper is paused (both asked in one round trip); says why the
 * poll does not run, if it does not. A lock taken while paused is given back at once.
 */
async function lockUnlessPaused(
  lockKey: string,
  token: string,
  deps: PollDeps,
): Promise<"paused" | "poll_running" | undefined> {
  const [isPaused, lock] = await Promise.all([
    deps.pause.isPaused(),
    deps.redis.set(lockKey, token, "PX", deps.lockMs ?? 120_000, "NX"),
  ]);
  if (isPaused) {
    if (lock === "OK") await releaseLockScript(deps.redis, lockKey, token);
    return "paused";
  }
  return lock === "OK" ? undefined : "poll_running";
}

/** What the strategies and the breakers need besides the service's answer, in one round trip. */
async function readBeforePoll(wallet: string, nowSeconds: number, deps: PollDeps) {
  const [inFlight, triggerOrders, loaded, protections] = await Promise.all([
    deps.ledger.inFlight(wallet),
    deps.ledger.triggerOrders(wallet),
    deps.states.loadAll(
      wallet,
      deps.strategies.map(({ name }) => name),
    ),
    deps.protections?.isOff ? undefined : deps.protections?.evaluate(nowSeconds),
  ]);
  return { inFlight, triggerOrders, loaded, protections };
}

/** A claim not made: its payout is left to the service's free claim (see the claim intent). */
export function isLeftToService(intent: Intent): intent is Extract<Intent, { kind: "claim" }> {
  return intent.kind === "claim" && intent.leaveToService === true;
}

/** How the ledger records an intent it admits: done at once when nothing is to be built. */
export function admissionStatus(
  intent: Intent,
  mode: PollDeps["mode"],
): "pending" | "dry-run" | "left_to_service" {
  if (isLeftToService(intent)) return "left_to_service";
  return mode === "dry-run" ? "dry-run" : "pending";
}

/** The snapshot to whoever listens (the recording); its failure is never the poll's. */
function tellSnapshot(snapshot: Snapshot, deps: PollDeps, log: Logger): void {
  try {
    deps.events?.onSnapshot?.(snapshot);
  } catch (error) {
    log.warn({ err: (error as Error).message }, "snapshot listener failed");
  }
}

/**
 * Every poll reads all of the wallet's positions, so it rewrites the wallet's holdings. A failure is
 * logged, not fatal: the poll's own work goes on and the next poll writes them again.
 */
async function indexHoldings(
  wallet: string,
  snapshot: Awaited<ReturnType<typeof takeSnapshot>>,
  deps: PollDeps,
  log: Logger,
): Promise<void> {
  if (!deps.holdings) return;
  try {
    const holdings = holdingsOf(wallet, snapshot.positions, {
      strategies: deps.strategies,
      ...(snapshot.events ? { events: snapshot.events } : {}),
      nowSeconds: snapshot.takenAt,
      onHookError: (strategy, error) => {
        log.warn({ strategy, err: error }, "strategy thresholds left out of the holdings index");
        deps.events?.onStrategyError?.(strategy);
      },
    });
    await deps.holdings.index.replaceWallet(wallet, holdings);
  } catch (error) {
    log.warn({ err: (error as Error).message }, "holdings index not updated");
  }
}

/**
 * What the poll saw, for the status page (which reads no service). A failure is logged, not fatal:
 * the page shows the previous record with its time, and the next poll writes it again.
 */
async function recordWhatWasSeen(
  wallet: string,
  snapshot: Awaited<ReturnType<typeof takeSnapshot>>,
  withOrders: boolean,
  deps: Pick<PollDeps, "redis" | "keys">,
  log: Logger,
): Promise<void> {
  try {
    await Promise.all([
      new PollRecords(deps.redis, deps.keys).record(
        wallet,
        {
          positions: snapshot.positions,
          otherOpen: openBesidesPositions(snapshot),
          ...(withOrders ? { orders: snapshot.openOrders } : {}),
        },
        snapshot.takenAt,
      ),
      // The fleet value chart's sample, from the positions just read (the page reads no service).
      new ValueSeries(deps.redis, deps.keys).record(
        wallet,
        walletValueMicroUsd(snapshot.positions),
        snapshot.takenAt,
      ),
    ]);
  } catch (error) {
    log.warn({ err: (error as Error).message }, "poll record for the status page not written");
  }
}

/**
 * Circuit breakers: while one is tripped, intents that open exposure are held back (not recorded,
 * so they are asked for again once it resets); when the day's loss reaches the close-all limit, one
 * close-all of the wallet is added (keyed per UTC day, so once a day). Returns what goes on, and the
 * strategies an intent of which was held back.
 */
async function applyProtections(
  candidates: readonly Intent[],
  ctx: {
    wallet: string;
    nowSeconds: number;
    deps: PollDeps;
    log: Logger;
    inFlightKeys: ReadonlySet<string>;
    /** The breakers as read with the poll's other reads; none when none is configured (readBeforePoll). */
    evaluation?: ProtectionsEvaluation;
  },
): Promise<{ intents: Intent[]; heldBack: number; heldBackStrategies: Set<string> }> {
  const { deps, log, evaluation } = ctx;
  const heldBackStrategies = new Set<string>();
  if (!deps.protections || !evaluation) return { intents: [...candidates], heldBack: 0, heldBackStrategies };
  deps.events?.onProtections?.(evaluation);
  for (const change of await deps.protections.changes(evaluation)) {
    log.warn(
      { breaker: change.breaker, tripped: change.isTripped, detail: change.detail },
      change.isTripped ? "circuit breaker tripped" : "circuit breaker reset",
    );
    deps.events?.onBreakerChange?.(change);
  }
  const intents: Intent[] = [];
  let heldBack = 0;
  for (const intent of candidates) {
    if (evaluation.tripped.length > 0 && isHeldBackByBreakers(intent.kind)) {
      heldBack += 1;
      heldBackStrategies.add(intent.strategy);
      deps.events?.onHeldBack?.(intent);
      log.info(
        { intent: intent.key, kind: intent.kind, strategy: intent.strategy, breakers: evaluation.tripped },
        "intent held back by a circuit breaker",
      );
      continue;
    }
    intents.push(intent);
  }
  if (evaluation.isCloseAllDue) {
    const key = intentKeys.closeAll(ctx.wallet, utcDayTag(ctx.nowSeconds));
    if (!ctx.inFlightKeys.has(key))
      intents.push({
        kind: "closeAll",
        key,
        wallet: ctx.wallet,
        strategy: PROTECTIONS_STRATEGY,
        reason: `close-all: realized loss today $${formatUsd(evaluation.dailyLossMicroUsd)} reached protections.closeAllOnDailyLossUsd`,
      });
  }
  return { intents, heldBack, heldBackStrategies };
}

/**
 * A strategy asks for `close-<position>` again only while the position is still listed open with no
 * order on it; a close of it that did not take is asked for again under the next key of the
 * position's closes (close-chain.ts). Anything else keeps its key, and the ledger decides as always
 * (in flight, recently confirmed, refused: not admitted).
 */
async function closeAgainIfStillOpen(
  intent: Extract<Intent, { kind: "close" }>,
  deps: PollDeps,
  nowSeconds: number,
  log: Logger,
): Promise<Intent> {
  const { key, row } = await latestClose(deps.ledger, intent.key, nowSeconds);
  // The latest close confirmed too recently to say it did not take: the ledger's "done".
  if (key === intent.key || row?.status === "confirmed") return intent;
  log.warn(
    { intent: key, closed: intent.key },
    "position still open after its close confirmed: closing again",
  );
  return { ...intent, key };
}
