import { DelayedError, type Job, type Queue, UnrecoverableError } from "bullmq";
import type { Logger } from "pino";
import type { PauseSwitch } from "../operator/pause.js";
import type { Protections } from "../operator/protections.js";
import { enqueueBuild, enqueueConfirm } from "../queues/enqueue.js";
import type { ActionJobData, ConfirmJobData, SignJobData } from "../queues/queues.js";
import { type Ledger, type LedgerRow, TERMINAL_STATUSES } from "../state/ledger.js";

/** Recorded and sent once: the confirm loop (confirm queue) owns the attempt from here. */
export interface SentOutcome {
  outcome: "sent";
  signature: string;
  attempt: number;
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

export interface SignDeps extends OutcomeDeps {
  /**
   * Checks, signs and sends the row's current transaction (the signer module). Answers `sent` once the
   * signature is recorded and sent (the confirm loop takes over), or an outcome reached without watching.
   */
  signAndSubmit(row: LedgerRow): Promise<SignOutcome | SentOutcome>;
  /** The confirm loop's queue: a `sent` attempt is handed to it, and the signing slot is free. */
  confirm?: Queue<ConfirmJobData>;
  pause: PauseSwitch;
  pausedRetryMs?: number;
}

/**
 * The signer worker's job: one transaction of one intent checked, signed and sent once. A sent attempt
 * goes to the confirm loop (the confirm queue) and the job ends, freeing its slot; an outcome reached
 * without sending (refused, stale, an attempt that already finished) is applied here.
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
  if (await deps.pause.isPaused()) {
    // A transaction already sent keeps being watched by the re-run; a new one waits for resume.
    if (job.moveToDelayed && token) {
      await job.moveToDelayed(Date.now() + (deps.pausedRetryMs ?? 5_000), token);
      throw new DelayedError();
    }
    throw new Error("paused");
  }
  await deps.ledger.update(intentKey, { status: "sending" });
  const outcome = await deps.signAndSubmit(row);
  if (outcome.outcome === "sent") {
    if (!deps.confirm) throw new Error("a sent transaction needs the confirm queue to be watched");
    await enqueueConfirm(deps.confirm, intentKey, build, outcome.attempt, String(job.id ?? ""));
    log.info(
      { signature: outcome.signature, attempt: outcome.attempt },
      "transaction sent; the confirm loop has it",
    );
    return outcome;
  }
  await applyOutcome(row, build, outcome, deps);
  return outcome;
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
        await enqueueBuild(deps.actions, intentKey, row.tries, build + 1);
      }
      break;
  }
}
