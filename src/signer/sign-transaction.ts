import type { Connection } from "@solana/web3.js";
import { PublicKey, VersionedTransaction } from "@solana/web3.js";
import bs58 from "bs58";
import type { Logger } from "pino";
import { capLastValidBlockHeight } from "../chain/blockhash-lifetime.js";
import { decodeTransaction, type LookupTableLoader } from "../chain/decode.js";
import type { InflowExpectation } from "../chain/inflow-rules.js";
import { checkTransaction, type PolicyConfig } from "../chain/policy.js";
import { rpcCall } from "../chain/rpc.js";
import {
  type SendAndConfirmInput,
  type SendOutcome,
  type SubmitSigned,
  sendAndConfirm,
} from "../chain/send-and-confirm.js";
import { PolicyRefusal, StaleTransaction } from "../core/errors.js";
import type { Intent } from "../core/intent.js";
import type { AttemptRecord, AttemptStore } from "./attempt-store.js";
import type { Wallets } from "./keys.js";

export type SignOutcome =
  | {
      outcome: "confirmed";
      signature: string;
      slot: number;
      confirmationMs?: number;
      attempt: number;
      resumed: boolean;
    }
  | { outcome: "failed"; signature?: string; error: string; attempt: number; resumed: boolean }
  | { outcome: "expired"; signature?: string; attempt: number; resumed: boolean }
  | { outcome: "refused"; reason: string; detail: string; attempt: number; resumed: boolean };

export interface SendOptions {
  commitment?: "processed" | "confirmed" | "finalized";
  rebroadcastIntervalMs?: number;
  pollIntervalMs?: number;
  checkBlockhashWithRpc?: boolean;
  /** Extra RPC nodes every send and rebroadcast also goes to (`rpc.sendUrls`). */
  alsoSendTo?: readonly Connection[];
}

export interface SignAndSubmitInput {
  intent: Intent;
  /** The unsigned (or partially signed) transaction the service built, base64. */
  transactionBase64: string;
  /**
   * The block height after which the service's blockhash is no longer valid, as the service says;
   * believed only up to the node's height at signing + 151 (capLastValidBlockHeight).
   */
  lastValidBlockHeight: number;
  wallets: Wallets;
  connection: Connection;
  policyConfig: PolicyConfig;
  /** What the transaction must bring in (expectedInflow of the intent and its build). */
  inflow?: InflowExpectation;
  attempts: AttemptStore;
  logger: Logger;
  /** Trigger/recurring execute endpoints; claims and closes go straight to the RPC. */
  submit?: SubmitSigned;
  /** Transactions allowed per intent in all, rebuilt ones included (default 3). */
  maxAttempts?: number;
  send?: SendOptions;
  /** Lookup tables come from the RPC unless a loader is given. */
  loadLookupTable?: LookupTableLoader;
  signal?: AbortSignal;
}

export const DEFAULT_MAX_ATTEMPTS = 3;

/**
 * The one way a transaction gets signed: decode, check, sign, record the signature, then send and
 * confirm. A run that finds an attempt in flight resumes it (same bytes, same signature) instead of
 * signing anything new; only a finished attempt that did not confirm opens the next, bounded.
 * Returns `expired` when the caller may ask the service for a fresh transaction: one that was sent and
 * expired unseen, or one that was stale before it was signed (no signature then).
 */
export async function signAndSubmit(input: SignAndSubmitInput): Promise<SignOutcome> {
  const { intent, attempts, wallets, connection } = input;
  const log = input.logger.child({ intentKey: intent.key, wallet: intent.wallet });
  const existing = await attempts.get(intent.key);
  if (existing?.status === "sent") return resume(existing, input, log);
  if (existing?.status === "confirmed") return fromRecord(existing);
  if (
    (existing?.status === "expired" || existing?.status === "failed") &&
    sameMessage(existing.signedTransaction, input.transactionBase64)
  ) {
    // The very transaction that already ran out (a crash before the caller heard of it): its outcome
    // stands. Checking it again would only find its blockhash gone and call it refused.
    log.info({ attempt: existing.attempt, status: existing.status }, "this transaction already finished");
    return fromRecord(existing);
  }

  const attempt = (existing?.attempt ?? 0) + 1;
  const maxAttempts = input.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  if (attempt > maxAttempts) {
    // Not a refusal: nothing is wrong with this transaction, the intent used up its transactions.
    const error = `${existing?.attempt ?? 0} transactions tried, at most ${maxAttempts}`;
    log.warn({ attempt, maxAttempts }, "no attempts left for this intent");
    return { outcome: "failed", error, attempt: attempt - 1, resumed: false };
  }

  const lastValidBlockHeight = await believedLastValidBlockHeight(input.lastValidBlockHeight, input, log);
  let signed: { bytes: Uint8Array; signature: string; recentBlockhash: string };
  try {
    const decoded = await decodeTransaction(
      input.transactionBase64,
      input.loadLookupTable ??
        ((address) =>
          rpcCall(
            "getAddressLookupTable",
            async () => (await connection.getAddressLookupTable(address)).value,
          )),
    );
    const report = await checkTransaction({
      decoded,
      intent,
      wallets,
      connection,
      config: input.policyConfig,
      lastValidBlockHeight,
      ...(input.inflow ? { inflow: input.inflow } : {}),
    });
    log.debug(
      {
        feeLamports: report.feeLamports.toString(),
        lamportsOut: report.lamportsOut.toString(),
        tokensOut: report.tokensOut,
        innerPrograms: report.innerPrograms,
      },
      "transaction passed the policy",
    );
    const signature = wallets.sign(intent.wallet, decoded.messageBytes);
    decoded.transaction.addSignature(new PublicKey(intent.wallet), signature);
    if (decoded.transaction.signatures.some((s) => s.every((b) => b === 0))) {
      throw new PolicyRefusal("foreign_signer", "a signature is still missing after signing");
    }
    signed = {
      bytes: decoded.transaction.serialize(),
      signature: bs58.encode(signature),
      recentBlockhash: decoded.recentBlockhash,
    };
  } catch (error) {
    if (error instanceof StaleTransaction) return stale(error, attempt, input, log);
    if (!(error instanceof PolicyRefusal)) throw error;
    const recorded = await attempts.recordRefused(intent.key, attempt, error.reason, error.detail);
    log.warn({ reason: error.reason, detail: error.detail, attempt }, "transaction refused by policy");
    if (!recorded) {
      // Another run of the same intent recorded its own attempt meanwhile (this one stalled): that
      // attempt is the intent's, follow it.
      const winner = await attempts.get(intent.key);
      log.warn({ attempt, recorded: winner?.attempt }, "another run recorded this intent first");
      if (winner?.status === "sent") return resume(winner, input, log);
      if (winner) return fromRecord(winner);
    }
    return { outcome: "refused", reason: error.reason, detail: error.detail, attempt, resumed: false };
  }

  // The signature is on record before anything leaves the process: a crash from here on resumes it.
  const claimed = await attempts.recordSigned(intent.key, {
    attempt,
    signature: signed.signature,
    lastValidBlockHeight,
    recentBlockhash: signed.recentBlockhash,
    signedTransaction: Buffer.from(signed.bytes).toString("base64"),
  });
  if (!claimed) {
    // Another run of the same intent got there first: follow its attempt, never send a second one.
    const winner = await attempts.get(intent.key);
    log.warn({ attempt, recorded: winner?.attempt }, "another run recorded this attempt first");
    if (winner?.status === "sent") return resume(winner, input, log);
    if (winner) return fromRecord(winner);
    throw new Error(`attempt record of ${intent.key} vanished`);
  }
  log.info({ signature: signed.signature, attempt }, "transaction signed and recorded");
  const outcome = await sendAndConfirm({
    ...sendInput(input, log),
    signedTransaction: signed.bytes,
    signature: signed.signature,
    recentBlockhash: signed.recentBlockhash,
    lastValidBlockHeight,
    ...(input.submit ? { submit: input.submit } : {}),
  });
  return finish(intent.key, attempt, outcome, false, input, log);
}

/**
 * The transaction cannot land as built (its blockhash is gone or unknown to the node). Nothing was
 * signed, so nothing is recorded: the caller asks the service for a fresh one. Unless another run of
 * the intent recorded an attempt meanwhile (this one stalled): that attempt is the intent's, follow it.
 */
async function stale(
  error: StaleTransaction,
  attempt: number,
  input: SignAndSubmitInput,
  log: Logger,
): Promise<SignOutcome> {
  const current = await input.attempts.get(input.intent.key);
  if (current !== undefined && current.attempt >= attempt) {
    log.warn({ attempt, recorded: current.attempt }, "another run recorded this intent first");
    return current.status === "sent" ? resume(current, input, log) : fromRecord(current);
  }
  log.info({ attempt, detail: error.detail }, "transaction stale before signing; asking for a fresh one");
  return { outcome: "expired", attempt, resumed: false };
}

async function resume(record: AttemptRecord, input: SignAndSubmitInput, log: Logger): Promise<SignOutcome> {
  const { signature, signedTransaction, recentBlockhash } = record;
  if (!signature || !signedTransaction || record.lastValidBlockHeight === undefined || !recentBlockhash) {
    throw new Error(`attempt record of ${record.intentKey} is in flight but incomplete`);
  }
  log.info({ signature, attempt: record.attempt }, "resuming a recorded transaction");
  // Capped again: a record written before heights were capped may hold the service's far-off one, and
  // the blockhash, older than the record, cannot outlive the node's height now + 151 either.
  const lastValidBlockHeight = await believedLastValidBlockHeight(record.lastValidBlockHeight, input, log);
  // Same bytes, same signature: rebroadcasting cannot make a second payment.
  const outcome = await sendAndConfirm({
    ...sendInput(input, log),
    signedTransaction: Buffer.from(signedTransaction, "base64"),
    signature,
    recentBlockhash,
    lastValidBlockHeight,
  });
  return finish(record.intentKey, record.attempt, outcome, true, input, log);
}

/** `lastValidBlockHeight`, capped at the node's block height now + 151; a cap is logged. */
async function believedLastValidBlockHeight(
  lastValidBlockHeight: number,
  input: SignAndSubmitInput,
  log: Logger,
): Promise<number> {
  // Processed: the node's newest height, so the highest cap (past it the node's word decides anyway).
  const height = await rpcCall("getBlockHeight", () => input.connection.getBlockHeight("processed"), {
    signal: input.signal,
  });
  const capped = capLastValidBlockHeight(lastValidBlockHeight, height);
  if (capped < lastValidBlockHeight) {
    log.warn(
      { lastValidBlockHeight, capped, blockHeight: height },
      "lastValidBlockHeight is beyond any blockhash's lifetime; waiting only up to the capped height",
    );
  }
  return capped;
}

function sendInput(
  input: SignAndSubmitInput,
  log: Logger,
): Omit<SendAndConfirmInput, "signedTransaction" | "signature" | "recentBlockhash" | "lastValidBlockHeight"> {
  const base: Omit<
    SendAndConfirmInput,
    "signedTransaction" | "signature" | "recentBlockhash" | "lastValidBlockHeight"
  > = {
    connection: input.connection,
    logger: log,
    ...input.send,
  };
  if (input.signal) base.signal = input.signal;
  return base;
}

async function finish(
  intentKey: string,
  attempt: number,
  outcome: SendOutcome,
  resumed: boolean,
  input: SignAndSubmitInput,
  log: Logger,
): Promise<SignOutcome> {
  switch (outcome.outcome) {
    case "confirmed":
      await input.attempts.finish(intentKey, outcome.signature, { status: "confirmed", slot: outcome.slot });
      log.info(
        { signature: outcome.signature, slot: outcome.slot, ms: outcome.confirmationMs },
        "transaction confirmed",
      );
      return { ...outcome, attempt, resumed };
    case "failed":
      await input.attempts.finish(intentKey, outcome.signature, { status: "failed", error: outcome.error });
      log.warn({ signature: outcome.signature, error: outcome.error }, "transaction failed on chain");
      return { ...outcome, attempt, resumed };
    case "expired":
      await input.attempts.finish(intentKey, outcome.signature, { status: "expired" });
      log.info({ signature: outcome.signature, attempt }, "transaction expired unseen");
      return { ...outcome, attempt, resumed };
  }
}

/** Whether a recorded signed transaction carries the same message as these (unsigned) bytes. */
function sameMessage(recorded: string | undefined, transactionBase64: string): boolean {
  if (!recorded) return false;
  try {
    const a = VersionedTransaction.deserialize(Buffer.from(recorded, "base64")).message.serialize();
    const b = VersionedTransaction.deserialize(Buffer.from(transactionBase64, "base64")).message.serialize();
    return Buffer.from(a).equals(Buffer.from(b));
  } catch {
    return false; // not a transaction: the policy says so with its reason
  }
}

function fromRecord(record: AttemptRecord): SignOutcome {
  const base = { attempt: record.attempt, resumed: true };
  switch (record.status) {
    case "confirmed":
      return { outcome: "confirmed", signature: record.signature ?? "", slot: record.slot ?? 0, ...base };
    case "failed":
      return { outcome: "failed", signature: record.signature, error: record.error ?? "failed", ...base };
    case "expired":
      return { outcome: "expired", signature: record.signature, ...base };
    case "refused":
      return { outcome: "refused", reason: record.reason ?? "refused", detail: record.error ?? "", ...base };
    case "sent":
      throw new Error("an attempt in flight has no outcome yet");
  }
}
