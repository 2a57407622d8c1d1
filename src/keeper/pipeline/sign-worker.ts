import { DelayedError, type Job, type Queue, UnrecoverableError } from "bullmq";
import type { Logger } from "pino";
import type { AttemptRecord } from "../../signer/attempt-store.js";
import type { PauseSwitch } from "../operator/pause.js";
import type { Protections } from "../operator/protections.js";
import { enqueueBuild } from "../queues/enqueue.js";
import type { ActionJobData, SignJobData } from "../queues/queues.js";
import { type Ledger, type LedgerRow, TERMINAL_STATUSES } from "../state/ledger.js";

/** Recorded and sent once: the watch (the confirm loop) takes the attempt from here to its outcome. */
export interface SentOutcome {
  outcome: "sent";
  signature: string;
  attempt: number;
  /** Sent by an earlier run (found in flight), not by this one. */
  resumed?: boolean;
  /** The attempt record as this run wrote it before the send: the watch need not read it again. */
  record?: AttemptRecord;
}

export type SignOutcome =
  | { outcome: "confirmed"; signature: string; slot: number; confirmationMs?: number }
  | { outcome: "failed"; signature?: string; error: string }
  | { outcome: "expired"; signature?: string }
  | { outcome: "refused"; reason: string; detail: string };

export interface SignEvents {
  onOutcome?(row: LedgerRow, outcome: SignOutcome): void;
}

/** What turns an outcome into the ledger's, metrics', webhook's and a rebuild (sign and confirm workers). */
export interface OutcomeDeps {
  ledger: Ledger;
  actions: Queue<ActionJobData>;
  /** Fresh transactions allowed after an expired one, per try. */
  maxRebuilds: number;
  logger: Logger;
  events?: SignEvents;
  /** Confirmed closes are counted by the circuit breakers. */
  protections?: Protections;
  /** Unix seconds (tests drive it). */
  nowSeconds?: () => number;
}

/** The confirm loop: a sent attempt seen to its outcome, by whichever job holds it. */
export interface WatchDeps {
  /**
   * Sees the intent's recorded attempt to its outcome (watchAttempt: rebroadcast, status, expiry) and
   * records it. Needs the RPC and the attempt records, never a key. `resumed`: an earlier run of this
   * watch was lost (a crash, a stalled lock) or failed. `record`: the attempt as the caller just wrote it.
   */
  watch(intentKey: string, resumed: boolean, row: LedgerRow, record?: AttemptRecord): Promise<SignOutcome>;
  /** Told when a watch starts and ends (the keeper_attempts_watched gauge). */
  onWatching?(change: 1 | -1): void;
}

export interface SignDeps extends OutcomeDeps, WatchDeps {
  /**
   * Checks, signs and sends the row's current transaction (the signer module), in a signing slot.
   * Answers `sent` once the signature is recorded and sent (the watch takes over, outside the slot),
   * or an outcome reached without watching.
   */
  signAndSubmit(row: LedgerRow): Promise<SignOutcome | SentOutcome>;
  /** The intent's attempt in flight (recorded, sent, not finished), if any: watched even while paused. */
  sentAttempt(intentKey: string): Promise<AttemptRecord | undefined>;
  /**
   * The process's watch slots (signer.watchConcurrency). When all are taken, a sent attempt goes to
   * the confirm queue instead (`handOff`) and the job ends: a burst's watches never hold back the next
   * sends. Without them every attempt is watched in its job.
   */
  watchSlots?: WatchSlots;
  /** Hands a sent attempt to the confirm queue (enqueueConfirm). */
  handOff?(intentKey: string, build: number, attempt: number, signJobId: string): Promise<void>;
  pause: PauseSwitch;
  pausedRetryMs?: number;
}

/** A bound on the watches run in sign jobs at once. */
export class WatchSlots {
  #taken = 0;
  constructor(readonly size: number) {}

  /** Takes a slot if one is free. */
  take(): boolean {
    if (this.#taken >= this.size) return false;
    this.#taken += 1;
    return true;
  }

  release(): void {
    this.#taken = Math.max(0, this.#taken - 1);
  }
}

/**
 * The signer worker's job: one transaction of one intent checked, signed and sent once, then watched to
 * its outcome in the same job (the confirm loop), or, with every watch slot taken, handed to the
 * confirm queue. The signing slot (signer.concurrency) is held only until the first send; a crash
 * during the watch leaves the job to BullMQ's stalled check, and the re-run finds the recorded attempt
 * in flight and watches the same bytes: it never signs anew. An outcome reached without sending
 * (refused, stale, an attempt that already finished) is applied at once.
 */
export async function processSign(
  job: Pick<Job<SignJobData>, "data" | "id"> & Partial<Pick<Job<SignJobData>, "moveToDelayed">>,
  deps: SignDeps,
  token?: string,
): Promise<SignOutcome | SentOutcome | undefined> {
  const { intentKey, build } = job.data;
  const log = deps.logger.child({ intent: intentKey, job: job.id });
  const row = await deps.ledger.get(intentKey);
  if (!row) throw new UnrecoverableError(`no ledger record for intent ${intentKey}`);
  if ((TERMINAL_STATUSES as readonly string[]).includes(row.status) || row.builds !== build) {
    log.info({ status: row.status, builds: row.builds }, "sign skipped: intent already past this build");
    return undefined;
  }
  if (!row.transaction) throw new UnrecoverableError(`intent ${intentKey} has no built transaction`);
  // While paused nothing is signed: a transaction already sent is watched, a new one waits for resume.
  const paused = await deps.pause.isPaused();
  const inFlight = paused && row.status === "sending" ? await deps.sentAttempt(intentKey) : undefined;
  if (paused && inFlight?.signature === undefined) {
    if (job.moveToDelayed && token) {
      await job.moveToDelayed(Date.now() + (deps.pausedRetryMs ?? 5_000), token);
      throw new DelayedError();
    }
    throw new Error("paused");
  }
  await deps.ledger.update(intentKey, { status: "sending" });
  const sent: SignOutcome | SentOutcome =
    inFlight?.signature !== undefined
      ? { outcome: "sent", signature: inFlight.signature, attempt: inFlight.attempt, resumed: true }
      : await deps.signAndSubmit(row);
  if (sent.outcome !== "sent") {
    await applyOutcome(row, build, sent, deps);
    return sent;
  }
  if (deps.watchSlots && !deps.watchSlots.take()) {
    if (!deps.handOff) throw new Error("a sent transaction past the watch slots needs the confirm queue");
    await deps.handOff(intentKey, build, sent.attempt, String(job.id ?? ""));
    log.info(
      { signature: sent.signature, attempt: sent.attempt },
      "transaction sent; every watch slot taken, the confirm queue has it",
    );
    return sent;
  }
  try {
    const outcome = await watchSent(row, sent, deps, log);
    await applyOutcome(row, build, outcome, deps);
    return outcome;
  } finally {
    deps.watchSlots?.release();
  }
}

/** The watch of what this job (or an earlier run of it) sent: outside the signing slot. */
async function watchSent(
  row: LedgerRow,
  sent: SentOutcome,
  deps: WatchDeps,
  log: Logger,
): Promise<SignOutcome> {
  log.info({ signature: sent.signature, attempt: sent.attempt }, "transaction sent; watching it");
  deps.onWatching?.(1);
  try {
    return await deps.watch(row.key, sent.resumed === true, row, sent.record);
  } finally {
    deps.onWatching?.(-1);
  }
}

/**
 * An outcome to the ledger, the circuit breakers, metrics and the webhook (events). Only `expired` (the
 * blockhash passed and a last status check found nothing) leads to a fresh build, and only a bounded
 * number of times; anything else is final for this try.
 */
export async function applyOutcome(
  row: LedgerRow,
  build: number,
  outcome: SignOutcome,
  deps: OutcomeDeps,
): Promise<void> {
  const intentKey = row.key;
  const log = deps.logger.child({ intent: intentKey });
  deps.events?.onOutcome?.(row, outcome);
  switch (outcome.outcome) {
    case "confirmed":
      // Counted before the ledger moves on: a re-run after a crash counts it again, under the same key.
      if (row.kind === "close" && deps.protections)
        await deps.protections.recordExit(row, deps.nowSeconds?.() ?? Math.floor(Date.now() / 1000));
      await deps.ledger.update(intentKey, {
        status: "confirmed",
        signature: outcome.signature,
        slot: outcome.slot,
      });
      log.info({ signature: outcome.signature, slot: outcome.slot }, "transaction confirmed");
      break;
    case "failed":
      await deps.ledger.update(intentKey, {
        status: "failed",
        signature: outcome.signature,
        error: outcome.error,
      });
      log.warn({ signature: outcome.signature, err: outcome.error }, "transaction failed on chain");
      break;
    case "refused":
      await deps.ledger.update(intentKey, {
        status: "refused",
        reason: outcome.reason,
        error: outcome.detail,
      });
      // An error, not a warning: Keeper never tries a refused intent again by itself, so whatever it
      // was for (a claim, a close) waits for a person.
      log.error(
        { intentKey, kind: row.kind, wallet: row.wallet, reason: outcome.reason, detail: outcome.detail },
        `transaction refused by policy, nothing signed; after a look, \`keeper retry ${intentKey}\` admits it again`,
      );
      break;
    case "expired":
      if (build > deps.maxRebuilds) {
        await deps.ledger.update(intentKey, {
          status: "failed",
          signature: outcome.signature,
          error: `expired ${build} times; giving up on this try`,
        });
        log.warn({ build }, "transaction expired too often");
      } else {
        await deps.ledger.update(intentKey, { status: "expired", signature: outcome.signature });
        log.info({ build }, "transaction expired; asking for a fresh one");
        await enqueueBuild(deps.actions, intentKey, row, build + 1);
      }
      break;
  }
}
