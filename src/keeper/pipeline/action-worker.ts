import { type Job, type Queue, UnrecoverableError } from "bullmq";
import type { Logger } from "pino";
import { PermanentApiError } from "../../api/errors.js";
import { closeMinimumMicroUsd, isRaw, lessTolerance } from "../../chain/inflow-rules.js";
import { DEFAULT_CLOSE_ALL_SLIPPAGE_BPS } from "../../config/schema.js";
import { PermanentError } from "../../core/errors.js";
import { type Intent, intentKeys } from "../../core/intent.js";
import { blockHeightOf, type Position } from "../../core/schemas/prediction.js";
import { enqueueSign } from "../queues/enqueue.js";
import type { ActionJobData, SignJobData } from "../queues/queues.js";
import { type Ledger, type LedgerRow, TERMINAL_STATUSES } from "../state/ledger.js";
import {
  type BuildApi,
  buildTransaction,
  closeFeeMicroUsd,
  closeProceedsMicroUsd,
  executionRouteOf,
  isClaimItem,
  type PriorityFees,
} from "./build-transaction.js";
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
 * position whose close or claim is already in flight (a strategy got there first) is left to that
 * one; one whose close is done but that the service still lists as open gets a close of its own,
 * keyed to this close-all. A re-run after a crash asks again: intents already recorded are refused by
 * the ledger, so nothing is closed or claimed twice by one close-all.
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
  let started = 0;
  const reason = `close-all (${intent.key})${intent.reason ? `: ${intent.reason}` : ""}`;
  for (const preview of previews) {
    if (isClaimItem(preview)) {
      const claim: Intent = {
        kind: "claim",
        key: intentKeys.claim(preview.position.positionPubkey),
        wallet: intent.wallet,
        strategy: intent.strategy,
        positionPubkey: preview.position.positionPubkey,
        reason,
        ...(/^\d+$/.test(preview.position.payoutAmountUsd)
          ? { expectedPayoutMicroUsd: preview.position.payoutAmountUsd }
          : {}),
      };
      const admitted = await deps.ledger.admit(claim);
      if (!admitted.admitted) {
        log.info({ claim: claim.key, status: admitted.status }, "close-all: position already claiming");
        continue;
      }
      await deps.ledger.update(claim.key, {
        status: "built",
        builds: 1,
        transaction: preview.transaction,
        lastValidBlockHeight: blockHeightOf(preview.txMeta.lastValidBlockHeight),
        amountMicroUsd: preview.position.payoutAmountUsd,
      });
      await enqueueSign(deps.sign, claim.key, { tries: admitted.tries ?? 1, recordId: admitted.recordId }, 1);
      started += 1;
      continue;
    }
    const positionPubkey = preview.order.positionPubkey;
    const cost = costs.get(positionPubkey);
    let child: Intent = {
      kind: "close",
      key: intentKeys.close(positionPubkey),
      wallet: intent.wallet,
      strategy: intent.strategy,
      positionPubkey,
      reason,
      exitRule: "close-all",
      ...(cost !== undefined && /^\d+$/.test(cost) ? { costBasisMicroUsd: cost } : {}),
      minSellPriceSlippageBps,
    };
    let admitted = await deps.ledger.admit(child);
    if (!admitted.admitted && (TERMINAL_STATUSES as readonly string[]).includes(admitted.status ?? "")) {
      // Its close is done, yet the service still lists the position as open (the sell order failed,
      // say): the kill switch closes it again, once per close-all, under a key of this close-all.
      child = { ...child, key: `${child.key}-by-${intent.key}` };
      admitted = await deps.ledger.admit(child);
      if (admitted.admitted)
        log.warn({ position: positionPubkey }, "close-all: closing again a position closed before");
    }
    if (!admitted.admitted) {
      log.info({ close: child.key, status: admitted.status }, "close-all: position already closing");
      continue;
    }
    await deps.ledger.update(child.key, {
      status: "built",
      builds: 1,
      transaction: preview.transaction,
      lastValidBlockHeight: blockHeightOf(preview.txMeta.lastValidBlockHeight),
      amountMicroUsd: closeProceedsMicroUsd(preview),
      feeMicroUsd: closeFeeMicroUsd(preview),
      minInflowRaw: closeMinimumMicroUsd(preview.order),
      execution: executionRouteOf(preview),
    });
    await enqueueSign(deps.sign, child.key, { tries: admitted.tries ?? 1, recordId: admitted.recordId }, 1);
    started += 1;
  }
  await deps.ledger.update(row.key, { status: "confirmed" });
  log.info({ positions: previews.length, started }, "close-all fanned out");
}
