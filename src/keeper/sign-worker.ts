import { DelayedError, type Job, type Queue, UnrecoverableError } from "bullmq";
import type { Logger } from "pino";
import { type Ledger, type LedgerRow, TERMINAL_STATUSES } from "./ledger.js";
import type { PauseSwitch } from "./pause.js";
import { enqueueBuild } from "./poll-worker.js";
import type { Protections } from "./protections.js";
import type { ActionJobData, SignJobData } from "./queues.js";

export type SignOutcome =
  | { outcome: "confirmed"; signature: string; slot: number; confirmationMs?: number }
  | { outcome: "failed"; signature?: string; error: string }
  | { outcome: "expired"; signature?: string }
  | { outcome: "refused"; reason: string; detail: string };

export interface SignEvents {
  onOutcome?(row: LedgerRow, outcome: SignOutcome): void;
}

export interface SignDeps {
  /** Checks, signs, sends and confirms the row's current transaction (the signer module). */
  signAndSubmit(row: LedgerRow): Promise<SignOutcome>;
  ledger: Ledger;
  actions: Queue<ActionJobData>;
  pause: PauseSwitch;
  /** Fresh transactions allowed after an expired one, per try. */
  maxRebuilds: number;
  logger: Logger;
  events?: SignEvents;
  pausedRetryMs?: number;
  /** Confirmed closes are counted by the circuit breakers. */
  protections?: Protections;
  /** Unix seconds (tests drive it). */
  nowSeconds?: () => number;
}

/**
 * The signer worker's job: one transaction of one intent to a final outcome. Only `expired` (the
 * blockhash passed and a last status check found nothing) leads to a fresh build, and only a bounded
 * number of times; anything else is final for this try.
 */
export async function processSign(
  job: Pick<Job<SignJobData>, "data" | "id"> & Partial<Pick<Job<SignJobData>, "moveToDelayed">>,
  deps: SignDeps,
  token?: string,
): Promise<SignOutcome | undefined> {
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
  return outcome;
}
