import { type Job, type Queue, UnrecoverableError } from "bullmq";
import type { Logger } from "pino";
import { PermanentApiError } from "../../api/errors.js";
import { closeMinimumMicroUsd, isRaw, lessTolerance } from "../../chain/inflow-rules.js";
import { DEFAULT_CLOSE_ALL_SLIPPAGE_BPS } from "../../config/schema.js";
import { PermanentError } from "../../core/errors.js";
import { type Intent, intentKeys } from "../../core/intent.js";
import { blockHeightOf, type Position } from "../../core/schemas/prediction.js";
import type { RedisAttemptStore } from "../../signer/attempt-store.js";
import { enqueueSign } from "../queues/enqueue.js";
import type { ActionJobData, SignJobData } from "../queues/queues.js";
import { type AdmitResult, type Ledger, type LedgerRow, TERMINAL_STATUSES } from "../state/ledger.js";
import {
  type BuildApi,
  buildTransaction,
  closeFeeMicroUsd,
  closeProceedsMicroUsd,
  executionRouteOf,
  isClaimItem,
  type PriorityFees,
} from "./build-transaction.js";
import { latestClose, RECLOSE_AFTER_SECONDS } from "./close-chain.js";
import { type CloseDropReason, closeStillDue, type ReadBeforeCloseDeps } from "./read-before-close.js";

export interface ActionDeps {
  api: BuildApi;
  ledger: Ledger;
  sign: Queue<SignJobData>;
  logger: Logger;
  /** The wallet's positions, for the cost basis of the closes a close-all fans out into. */
  positions?: (wallet: string) => Promise<Position[]>;
  /** minSellPriceSlippageBps of a close-all that names none (protections.closeAllSlippageBps). */
  closeAllSlippageBps?: number;
  /** Prices the builds that take a compute-unit price; without it the service picks. */
  priorityFees?: PriorityFees;
  /** Told each price Keeper asked for (for the metric). */
  onPriorityFee?: (kind: string, microLamports: number) => void;
  /** Told of each claim the service said needs no transaction (not required, or already claimed): ended `settled`. */
  onClaimSettled?: (intent: Intent) => void;
  /** Read before selling: a close is built only if the position, read now, still calls for it. */
  readBeforeClose?: ReadBeforeCloseDeps;
  /** Told each close dropped by that read (for the metric). */
  onCloseDropped?: (reason: CloseDropReason) => void;
  /** The signer's inflow tolerance (signer.inflowToleranceBps): a claim's payout may differ by this much. */
  claimPayoutToleranceBps?: number;
  /**
   * The signer's attempt records: a close-all that closes a position again under a key that failed
   * forgets the key's finished attempt first, as `keeper retry` does (one that may still land is kept).
   */
  attempts?: Pick<RedisAttemptStore, "clearFinished">;
  /** Unix seconds (tests drive it); the wall clock without it. */
  nowSeconds?: () => number;
}

/**
 * The builder: asks the service for the transaction of one intent and hands it to the signer.
 * A build is safe to repeat (nothing takes effect until it is signed), so transient API failures
 * are retried by BullMQ; a refusal by the service (4xx) fails the intent for good.
 */
export async function processAction(
  job: Pick<Job<ActionJobData>, "data" | "id">,
  deps: ActionDeps,
): Promise<void> {
  const { intentKey, build } = job.data;
  const log = deps.logger.child({ intent: intentKey, job: job.id });
  const row = await deps.ledger.get(intentKey);
  if (!row) throw new UnrecoverableError(`no ledger record for intent ${intentKey}`);
  if ((TERMINAL_STATUSES as readonly string[]).includes(row.status) || row.builds > build) {
    log.info({ status: row.status }, "build skipped: intent already past this build");
    return;
  }
  // A re-run of a build whose transaction was already handed over must not build a second one.
  if (row.builds === build && (row.status === "built" || row.status === "sending")) {
    await enqueueSign(deps.sign, intentKey, row, build);
    return;
  }
  // No "building" mark first: a build takes effect only when "built" records it (with its number),
  // and until then the record is pending or expired, which housekeeping re-enqueues the same way.
  if (row.intent.kind === "closeAll") {
    await fanOutCloseAll(row, row.intent, deps, log);
    return;
  }
  if (row.intent.kind === "close" && (await isDroppedByRead(row.intent, deps, log))) return;
  let built: Awaited<ReturnType<typeof buildTransaction>>;
  try {
    built = await buildTransaction(deps.api, row.intent, {
      build,
      ...(deps.priorityFees ? { priorityFees: deps.priorityFees } : {}),
    });
  } catch (error) {
    if (isNotSettledYet(error) && row.intent.kind === "claim") {
      // "Not yet", not a refusal: nothing was built; a later poll that still sees the position as
      // a candidate asks for it again (after the ledger's retry delay, without using up a try).
      await deps.ledger.defer(intentKey, "market_not_settled: the claim is asked again later");
      log.info({ position: row.intent.positionPubkey }, "claim not settled yet: asked again on a later poll");
      return;
    }
    if (row.intent.kind === "claim" && (await isSettledAsNotNeeded(row.intent, error, deps, log))) return;
    if (error instanceof PermanentError) {
      await deps.ledger.update(intentKey, { status: "failed", error: error.message });
      log.warn({ err: error.message }, "build refused");
      throw new UnrecoverableError(error.message);
    }
    throw error;
  }
  if (row.intent.kind === "claim" && (await isDeferredAsStale(row.intent, built.amountMicroUsd, deps, log)))
    return;
  await deps.ledger.update(intentKey, {
    status: "built",
    builds: build,
    transaction: built.transaction,
    lastValidBlockHeight: built.lastValidBlockHeight,
    requestId: built.requestId,
    amountMicroUsd: built.amountMicroUsd,
    feeMicroUsd: built.feeMicroUsd,
    minInflowRaw: built.minInflowRaw,
    swapQuote: built.swapQuote,
    order: built.order,
    // Written every build, null included: a rebuild never inherits the last build's route.
    execution: built.execution ?? null,
  });
  if (built.computeUnitPrice !== undefined) deps.onPriorityFee?.(row.kind, built.computeUnitPrice);
  log.info({ kind: row.kind, build, computeUnitPrice: built.computeUnitPrice }, "transaction built");
  await enqueueSign(deps.sign, intentKey, row, build);
}

/**
 * A claim the service says there is nothing to do for: the market pays its winners without a claim,
 * or the position was paid already (by hand, by the service's own claim, by a claim of Keeper's whose
 * record was lost). The intent's business is over and nothing failed: recorded `settled`, no retry,
 * no failure counted. True when settled.
 */
async function isSettledAsNotNeeded(
  intent: Extract<Intent, { kind: "claim" }>,
  error: unknown,
  deps: ActionDeps,
  log: Logger,
): Promise<boolean> {
  const notNeeded = claimNotNeeded(error);
  if (notNeeded === undefined) return false;
  await deps.ledger.update(intent.key, {
    status: "settled",
    error: `${notNeeded}: ${(error as Error).message}`,
  });
  deps.onClaimSettled?.(intent);
  log.info({ position: intent.positionPubkey, reason: notNeeded }, "claim not needed: settled");
  return true;
}

/**
 * A claim decided from the holdings index expects the payout its index entry showed, which is as old as
 * the wallet's last sweep: contracts sold since (by hand, or a late fill of a sell order) lower the
 * real payout. Such a build would be refused by the signer (it pays less than expected) and wait for a
 * person; instead it is deferred, nothing signed, and the wallet's next poll asks again with the payout
 * it reads then, which the signer checks as ever. True when deferred.
 */
async function isDeferredAsStale(
  intent: Extract<Intent, { kind: "claim" }>,
  builtPayout: string | undefined,
  deps: ActionDeps,
  log: Logger,
): Promise<boolean> {
  const expected = intent.expectedPayoutMicroUsd;
  if (intent.expectedPayoutFrom !== "index" || expected === undefined || !isRaw(builtPayout)) return false;
  const least = lessTolerance(BigInt(expected), deps.claimPayoutToleranceBps ?? 0);
  if (BigInt(builtPayout) >= least) return false;
  const detail = `the build pays ${builtPayout} micro-USD, the holdings index said ${expected}`;
  await deps.ledger.defer(
    intent.key,
    `${detail} (as of the wallet's last sweep): asked again on its next poll`,
  );
  log.warn(
    { position: intent.positionPubkey, builtPayout, indexPayout: expected },
    "index claim deferred: payout lower than the index said",
  );
  return true;
}

/**
 * Read before selling (read-before-close.ts): true when the close was dropped, recorded `deferred`
 * with the reason (not a failure: nothing was built) and counted. A later poll that still finds the
 * rule met asks again. A read the service refuses fails the intent as a refused build does.
 */
async function isDroppedByRead(
  intent: Extract<Intent, { kind: "close" }>,
  deps: ActionDeps,
  log: Logger,
): Promise<boolean> {
  if (!deps.readBeforeClose) return false;
  let verdict: Awaited<ReturnType<typeof closeStillDue>>;
  try {
    verdict = await closeStillDue(intent, deps.readBeforeClose);
  } catch (error) {
    if (!(error instanceof PermanentError)) throw error;
    await deps.ledger.update(intent.key, { status: "failed", error: error.message });
    log.warn({ err: error.message }, "read before selling refused");
    throw new UnrecoverableError(error.message);
  }
  if (verdict.isDue) return false;
  await deps.ledger.defer(intent.key, `read before selling: dropped, ${verdict.detail}`);
  deps.onCloseDropped?.(verdict.reason);
  log.info({ reason: verdict.reason, detail: verdict.detail }, "close dropped: read before selling");
  return true;
}

/** The service's answer to a claim asked before its market is settled (400 market_not_settled). */
export function isNotSettledYet(error: unknown): boolean {
  return error instanceof PermanentApiError && error.code === "market_not_settled";
}

/** Why the service's refusal of a claim means there is nothing to claim (the claim ends `settled`). */
export function claimNotNeeded(error: unknown): "no claim required" | "already claimed" | undefined {
  if (isNoClaimRequired(error)) return "no claim required";
  if (isAlreadyClaimed(error)) return "already claimed";
  return undefined;
}

/** The service's answer to a claim of a position already paid (400 already_claimed). */
function isAlreadyClaimed(error: unknown): boolean {
  return error instanceof PermanentApiError && error.code === "already_claimed";
}

/** Codes the service answers a claim that is not needed with (the live code is not documented). */
const NO_CLAIM_CODES: ReadonlySet<string> = new Set(["no_claim_required", "claim_not_required"]);

/**
 * The service's answer to a claim of a market that settles without one: 400 with a code of
 * NO_CLAIM_CODES, or (the live service's code being unknown) a message saying no claim is required.
 */
export function isNoClaimRequired(error: unknown): boolean {
  if (!(error instanceof PermanentApiError)) return false;
  if (error.code !== undefined && NO_CLAIM_CODES.has(error.code)) return true;
  return /\bno claim (is )?(required|needed)\b|\bclaim (is )?not (required|needed)\b/i.test(
    error.serviceMessage,
  );
}

/**
 * A close-all is built through DELETE /positions, which answers one close transaction per open
 * position and one claim transaction per winning position (a winner is claimed, not sold). Each
 * becomes a `close-<position>` or `claim-<position>` intent of its own, recorded as built and handed
 * to the signer like any other (a claim is checked against a claim's allowance, not a close's); a
 * position whose claim is already in flight is left to that one, and so is a position with a close
 * of Keeper's that may still sell (see closeToStart). A re-run after a crash asks again: intents
 * already recorded are refused by the ledger, so nothing is closed or claimed twice by one close-all.
 */
async function fanOutCloseAll(
  row: LedgerRow,
  intent: Extract<Intent, { kind: "closeAll" }>,
  deps: ActionDeps,
  log: Logger,
): Promise<void> {
  if (!deps.api.closeAllPositions)
    throw new UnrecoverableError("close-all needs DELETE /positions (closeAllPositions) in the build API");
  // The live service requires the slippage: the intent's, or the configured default.
  const minSellPriceSlippageBps =
    intent.minSellPriceSlippageBps ?? deps.closeAllSlippageBps ?? DEFAULT_CLOSE_ALL_SLIPPAGE_BPS;
  let previews: Awaited<ReturnType<NonNullable<BuildApi["closeAllPositions"]>>>["data"];
  try {
    previews = (await deps.api.closeAllPositions({ ownerPubkey: intent.wallet, minSellPriceSlippageBps }))
      .data;
  } catch (error) {
    if (error instanceof PermanentError) {
      await deps.ledger.update(row.key, { status: "failed", error: error.message });
      throw new UnrecoverableError(error.message);
    }
    throw error;
  }
  const costs = new Map<string, string>();
  if (deps.positions && previews.length > 0)
    for (const p of await deps.positions(intent.wallet)) costs.set(p.pubkey, p.totalCostUsd);
  const fanOut: FanOut = {
    intent,
    reason: `close-all (${intent.key})${intent.reason ? `: ${intent.reason}` : ""}`,
    minSellPriceSlippageBps,
    costs,
    closing: await positionsClosing(intent.wallet, deps),
  };
  let started = 0;
  for (const preview of previews) {
    const isStarted = isClaimItem(preview)
      ? await startClaim(preview, fanOut, deps, log)
      : await startClose(preview, fanOut, deps, log);
    if (isStarted) started += 1;
  }
  await deps.ledger.update(row.key, { status: "confirmed" });
  log.info({ positions: previews.length, started }, "close-all fanned out");
}

type CloseAllItem = Awaited<ReturnType<NonNullable<BuildApi["closeAllPositions"]>>>["data"][number];

/** What every item of one close-all shares. */
interface FanOut {
  intent: Extract<Intent, { kind: "closeAll" }>;
  reason: string;
  minSellPriceSlippageBps: number;
  /** Each position's cost basis (totalCostUsd), by position. */
  costs: ReadonlyMap<string, string>;
  /** The positions with a close in flight, under whatever key (a strategy's, a close-all's). */
  closing: ReadonlySet<string>;
}

async function positionsClosing(wallet: string, deps: ActionDeps): Promise<Set<string>> {
  const rows = await deps.ledger.inFlight(wallet);
  return new Set(rows.flatMap((r) => (r.intent.kind === "close" ? [r.intent.positionPubkey] : [])));
}

/** A claim item recorded as `claim-<position>`, built, and handed to the signer; false when already claiming. */
async function startClaim(
  preview: Extract<CloseAllItem, { position: unknown }>,
  fanOut: FanOut,
  deps: ActionDeps,
  log: Logger,
): Promise<boolean> {
  const claim: Intent = {
    kind: "claim",
    key: intentKeys.claim(preview.position.positionPubkey),
    wallet: fanOut.intent.wallet,
    strategy: fanOut.intent.strategy,
    positionPubkey: preview.position.positionPubkey,
    reason: fanOut.reason,
    ...(/^\d+$/.test(preview.position.payoutAmountUsd)
      ? { expectedPayoutMicroUsd: preview.position.payoutAmountUsd }
      : {}),
  };
  const admitted = await deps.ledger.admit(claim);
  if (!admitted.admitted) {
    log.info({ claim: claim.key, status: admitted.status }, "close-all: position already claiming");
    return false;
  }
  await deps.ledger.update(claim.key, {
    status: "built",
    builds: 1,
    transaction: preview.transaction,
    lastValidBlockHeight: blockHeightOf(preview.txMeta.lastValidBlockHeight),
    amountMicroUsd: preview.position.payoutAmountUsd,
  });
  await enqueueSign(deps.sign, claim.key, { tries: admitted.tries ?? 1, recordId: admitted.recordId }, 1);
  return true;
}

/** A close item recorded under the key closeToStart gives, built, and handed to the signer; false when left. */
async function startClose(
  preview: Extract<CloseAllItem, { order: unknown }>,
  fanOut: FanOut,
  deps: ActionDeps,
  log: Logger,
): Promise<boolean> {
  const positionPubkey = preview.order.positionPubkey;
  if (fanOut.closing.has(positionPubkey)) {
    log.info({ position: positionPubkey, why: "in flight" }, "close-all: position already closing");
    return false;
  }
  const cost = fanOut.costs.get(positionPubkey);
  const started = await closeToStart(
    {
      kind: "close",
      key: intentKeys.close(positionPubkey),
      wallet: fanOut.intent.wallet,
      strategy: fanOut.intent.strategy,
      positionPubkey,
      reason: fanOut.reason,
      exitRule: "close-all",
      ...(cost !== undefined && /^\d+$/.test(cost) ? { costBasisMicroUsd: cost } : {}),
      minSellPriceSlippageBps: fanOut.minSellPriceSlippageBps,
    },
    deps,
  );
  if ("left" in started) {
    const { key, status, left } = started;
    log.info(
      { position: positionPubkey, close: key, status, why: left },
      "close-all: position already closing",
    );
    return false;
  }
  if (started.key !== intentKeys.close(positionPubkey) || started.admitted.tries !== 1)
    log.warn(
      { position: positionPubkey, close: started.key },
      "close-all: closing again a position closed before",
    );
  await deps.ledger.update(started.key, {
    status: "built",
    builds: 1,
    transaction: preview.transaction,
    lastValidBlockHeight: blockHeightOf(preview.txMeta.lastValidBlockHeight),
    amountMicroUsd: closeProceedsMicroUsd(preview),
    feeMicroUsd: closeFeeMicroUsd(preview),
    minInflowRaw: closeMinimumMicroUsd(preview.order),
    execution: executionRouteOf(preview),
  });
  const { tries, recordId } = started.admitted;
  await enqueueSign(deps.sign, started.key, { tries: tries ?? 1, recordId }, 1);
  return true;
}

/** A close a close-all started (admitted under `key`), or why it left the position (`left`). */
type CloseStart = { key: string; admitted: AdmitResult } | { key: string; status?: string; left: string };

/**
 * The close a close-all starts for a position the service lists as open, or why it leaves the
 * position to a close of Keeper's that may still sell it. Never two sells at once:
 * - no close yet, or the latest confirmed more than RECLOSE_AFTER_SECONDS ago and the position is
 *   still listed (its sell failed): the next key of the position's closes (close-chain.ts);
 * - the latest confirmed less than RECLOSE_AFTER_SECONDS ago (or at a time not recorded): left. The
 *   service lists the position as open until the sell order that close created fills, so the
 *   listing says nothing yet; a close-all after that time closes it if it is still listed;
 * - in flight: left;
 * - failed, refused or deferred: admitted again under its own key (reopen).
 */
async function closeToStart(
  child: Extract<Intent, { kind: "close" }>,
  deps: ActionDeps,
): Promise<CloseStart> {
  const nowSeconds = deps.nowSeconds?.() ?? Math.floor(Date.now() / 1000);
  const { key, row } = await latestClose(deps.ledger, child.key, nowSeconds);
  if (row === undefined) {
    const admitted = await deps.ledger.admit({ ...child, key });
    return admitted.admitted ? { key, admitted } : { key, left: "recorded meanwhile" };
  }
  if (REOPENED.has(row.status)) return reopen(row, deps);
  if (row.status !== "confirmed") return { key, status: row.status, left: "in flight or done" };
  const isOld = row.confirmedAt !== undefined && row.confirmedAt <= nowSeconds - RECLOSE_AFTER_SECONDS;
  return {
    key,
    status: row.status,
    left: isOld
      ? "closed again as many times as a position is"
      : `confirmed less than ${RECLOSE_AFTER_SECONDS} s ago: its sell order may still be pending`,
  };
}

/**
 * A failed, refused or deferred close admitted again under its own key, as `keeper retry` does.
 * Under that key the signer resumes a transaction of it that may still land (a sign job that ran out
 * of attempts during an RPC outage fails its close while its transaction is out there) rather than
 * signing a second one. Its finished attempt is forgotten, so the close gets a whole bound of
 * attempts again; one the signer's record shows confirmed sold: the position is left.
 */
async function reopen(row: LedgerRow, deps: ActionDeps): Promise<CloseStart> {
  const cleared = await deps.attempts?.clearFinished(row.key);
  if (cleared?.status === "confirmed")
    return { key: row.key, status: row.status, left: "its transaction confirmed on the signer's record" };
  const admitted = await deps.ledger.readmit(row);
  return admitted.admitted
    ? { key: row.key, admitted }
    : { key: row.key, status: row.status, left: "recorded meanwhile" };
}

/** Ends of a close that a close-all runs again under its own key (the signer's record of it decides). */
const REOPENED: ReadonlySet<string> = new Set(["failed", "refused", "deferred"]);
