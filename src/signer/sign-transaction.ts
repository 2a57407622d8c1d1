import { type Connection, PublicKey, type SignatureStatus, VersionedTransaction } from "@solana/web3.js";
import bs58 from "bs58";
import type { Logger } from "pino";
import { addressOf } from "../chain/address-text.js";
import { capLastValidBlockHeight } from "../chain/blockhash-lifetime.js";
import { decodeTransaction, type LookupTableLoader, type SignerView } from "../chain/decode.js";
import { verifyEd25519 } from "../chain/ed25519.js";
import { heldToSwapFloor, type InflowExpectation } from "../chain/inflow-rules.js";
import { checkTransaction, type PolicyConfig } from "../chain/policy.js";
import { rpcCall } from "../chain/rpc.js";
import {
  type SendAndConfirmInput,
  type SendOutcome,
  type SubmitReport,
  type SubmitSigned,
  sendAndConfirm,
  sendOnce,
} from "../chain/send-and-confirm.js";
import { describeTransactionError } from "../chain/tx-error.js";
import { messageOf, readWireTransaction, withSignature } from "../chain/wire-transaction.js";
import { PolicyRefusal, StaleTransaction } from "../core/errors.js";
import type { Intent } from "../core/intent.js";
import type { AttemptRecord, AttemptStore, SignedAttempt } from "./attempt-store.js";
import type { IntentGuard } from "./intent-guard.js";
import type { Signer } from "./signer.js";
import { describeFloor } from "./swap-floor.js";

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

/** A signed transaction recorded and sent once: whoever watches the attempt record finishes it. */
export interface SentAttempt {
  outcome: "sent";
  signature: string;
  attempt: number;
  /** Sent by an earlier run (found in flight), not by this one. */
  resumed: boolean;
  /** The attempt record as this run wrote it before the send (absent when found in flight). */
  record?: AttemptRecord;
}

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
  /** Whatever holds the keys (the local `Wallets`, or a remote signer): its `sign` is awaited. */
  wallets: Signer;
  connection: Connection;
  policyConfig: PolicyConfig;
  /** What the transaction must bring in (expectedInflow of the intent and its build). */
  inflow?: InflowExpectation;
  /**
   * The signer's own checks (its limits, a swap's floor), run before the policy; a swap's inflow is
   * then held to the floor. The keeper's sign worker always gives one.
   */
  guard?: IntentGuard;
  /** A swap's quote as its build recorded it on the ledger row (untrusted: checked by the guard). */
  swapQuote?: unknown;
  /** The order account the build named (the ledger row's `order`): its escrow must get the deposit. */
  order?: string;
  attempts: AttemptStore;
  logger: Logger;
  /** Execute endpoints (trigger, recurring, prediction); without one the RPC. */
  submit?: SubmitSigned;
  /**
   * A prediction transaction sent through the service's execute endpoint: a refusal of the request
   * (SubmitRefused: it never left through the endpoint), with nothing of it on the chain, fails it at
   * once. Any other answer, `Failed` included, may follow a broadcast: the attempt is watched like one
   * sent to the RPC (the confirm loop resends through the endpoint) until it confirms or expires.
   */
  submitAnswerDecides?: boolean;
  /**
   * The signers the build says it needs (`requiredSigners`): each must be the wallet or one of
   * `serviceSigners` (the signer's config), else the transaction is refused. With `submit`, those
   * service keys may sign after Keeper (at the execute endpoint); without, every signature is Keeper's.
   */
  requiredSigners?: readonly string[];
  serviceSigners?: readonly string[];
  /** Transactions allowed per intent in all, rebuilt ones included (default 3). */
  maxAttempts?: number;
  send?: SendOptions;
  /** Lookup tables come from the RPC unless a loader is given. */
  loadLookupTable?: LookupTableLoader;
  signal?: AbortSignal;
}

export const DEFAULT_MAX_ATTEMPTS = 3;

/**
 * The one way a transaction gets signed and seen through, in one call: signAndSend, then watchAttempt
 * on what it sent. The keeper's sign job runs the two apart (its signing slot ends at the first send,
 * its confirm loop finishes the attempt); the result is the same.
 */
export async function signAndSubmit(input: SignAndSubmitInput): Promise<SignOutcome> {
  const sent = await signAndSend(input);
  if (sent.outcome !== "sent") return sent;
  return watchAttempt({
    ...input,
    intentKey: input.intent.key,
    resumed: sent.resumed,
    ...(sent.record ? { record: sent.record } : {}),
  });
}

/**
 * Decode, check, sign, record the signature, then send once. A run that finds an attempt in flight
 * answers `sent` for it (same bytes, same signature) instead of signing anything new; only a finished
 * attempt that did not confirm opens the next, bounded. Returns `expired` when the caller may ask the
 * service for a fresh transaction: one whose recorded attempt expired unseen, or one that was stale
 * before it was signed (no signature then).
 */
export async function signAndSend(input: SignAndSubmitInput): Promise<SignOutcome | SentAttempt> {
  const { intent, attempts, wallets, connection } = input;
  const log = input.logger.child({ intentKey: intent.key, wallet: intent.wallet });
  const existing = await attempts.get(intent.key);
  if (existing?.status === "sent") return inFlight(existing, log);
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

  // One read serves both: the cap, and the policy's staleness check (the newest height is the strictest).
  const blockHeight = await blockHeightNow(input);
  const lastValidBlockHeight = believed(input.lastValidBlockHeight, blockHeight, log);
  let signed: { bytes: Uint8Array; signature: string; recentBlockhash: string };
  try {
    // The signer's own limits first: an intent it does not allow is refused before anything is read.
    const inflow = await guardedInflow(input);
    const laterSigners = serviceCoSigners(input);
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
      config: { ...input.policyConfig, laterSigners },
      lastValidBlockHeight,
      blockHeight,
      ...(inflow ? { inflow } : {}),
      ...(input.order !== undefined ? { order: input.order } : {}),
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
    // Counted before the key signs: a sign that fails after it leaves the day's tally high, never low.
    await input.guard?.count(intent);
    const slot = decoded.signers.findIndex((signer) => addressOf(signer.pubkey) === intent.wallet);
    if (slot < 0) throw new PolicyRefusal("foreign_signer", "the wallet is not a signer of the transaction");
    const isMissing = (signer: SignerView, i: number) =>
      i !== slot && !signer.isSigned && !laterSigners.includes(addressOf(signer.pubkey));
    // The policy refused these already (checkStatic); checked again where the bytes are signed.
    if (decoded.signers.some(isMissing)) {
      throw new PolicyRefusal("foreign_signer", "a signature other than the wallet's is missing");
    }
    const signature = await wallets.sign(intent.wallet, decoded.messageBytes);
    // A key holder that answers no signature (empty, short) leaves the wallet's own slot missing.
    if (signature.length !== 64 || signature.every((b) => b === 0)) {
      throw new PolicyRefusal("foreign_signer", "a signature is still missing after signing");
    }
    signed = {
      // The very bytes the policy checked, with the wallet's signature in its slot.
      bytes: withSignature(decoded.wire, slot, signature),
      signature: bs58.encode(signature),
      recentBlockhash: decoded.recentBlockhash,
    };
  } catch (error) {
    if (error instanceof StaleTransaction) return stale(error, attempt, lastValidBlockHeight, input, log);
    if (!(error instanceof PolicyRefusal)) throw error;
    const landed = await refusedButLanded(attempt, lastValidBlockHeight, input, log);
    if (landed) return landed;
    const recorded = await attempts.recordRefused(intent.key, attempt, error.reason, error.detail);
    log.warn({ reason: error.reason, detail: error.detail, attempt }, "transaction refused by policy");
    if (!recorded) {
      // Another run of the same intent recorded its own attempt meanwhile (this one stalled): that
      // attempt is the intent's, follow it.
      const winner = await attempts.get(intent.key);
      log.warn({ attempt, recorded: winner?.attempt }, "another run recorded this intent first");
      if (winner?.status === "sent") return inFlight(winner, log);
      if (winner) return fromRecord(winner);
    }
    return { outcome: "refused", reason: error.reason, detail: error.detail, attempt, resumed: false };
  }

  // The signature is on record before anything leaves the process: a crash from here on resumes it.
  const written = {
    attempt,
    signature: signed.signature,
    lastValidBlockHeight,
    recentBlockhash: signed.recentBlockhash,
    signedTransaction: Buffer.from(signed.bytes).toString("base64"),
  };
  const claimed = await attempts.recordSigned(intent.key, written);
  if (!claimed) {
    // Another run of the same intent got there first: follow its attempt, never send a second one.
    const winner = await attempts.get(intent.key);
    log.warn({ attempt, recorded: winner?.attempt }, "another run recorded this attempt first");
    if (winner?.status === "sent") return inFlight(winner, log);
    if (winner) return fromRecord(winner);
    throw new Error(`attempt record of ${intent.key} vanished`);
  }
  log.info({ signature: signed.signature, attempt }, "transaction signed and recorded");
  const report = await sendOnce({
    ...sendInput(input, log),
    signedTransaction: signed.bytes,
    signature: signed.signature,
    recentBlockhash: signed.recentBlockhash,
    lastValidBlockHeight,
    ...(input.submit ? { submit: input.submit } : {}),
  });
  const refusal = input.submitAnswerDecides ? refusedBeforeSending(report) : undefined;
  if (refusal !== undefined && !(await seenOnChain(input, signed.signature))) {
    await attempts.finish(intent.key, signed.signature, { status: "failed", error: refusal });
    log.warn({ signature: signed.signature, error: refusal }, "execute endpoint refused the transaction");
    return { outcome: "failed", signature: signed.signature, error: refusal, attempt, resumed: false };
  }
  const now = Date.now();
  const record: AttemptRecord = {
    intentKey: intent.key,
    status: "sent",
    ...written,
    createdAt: now,
    updatedAt: now,
  };
  return { outcome: "sent", signature: signed.signature, attempt, resumed: false, record };
}

/**
 * The keys that may sign after Keeper: the build's required signers other than the wallet, when the
 * transaction goes to the service's execute endpoint. A required signer that is neither the wallet
 * nor a configured service signer is refused, whichever the path.
 */
function serviceCoSigners(input: SignAndSubmitInput): string[] {
  const others = (input.requiredSigners ?? []).filter((key) => key !== input.intent.wallet);
  const allowed = input.serviceSigners ?? [];
  for (const key of others)
    if (!allowed.includes(key))
      throw new PolicyRefusal(
        "foreign_signer",
        `the build names ${key} as a required signer: neither the wallet nor one of signer.serviceSigners`,
      );
  return input.submit ? others : [];
}

/**
 * The execute endpoint's proof that the transaction never left through it: a refusal of the request.
 * Not `Failed`: the service may have broadcast the bytes first, and they may land until their blockhash
 * expires, so only the watch may call that attempt over (a fresh build beside it would act twice).
 */
function refusedBeforeSending(report: SubmitReport | undefined): string | undefined {
  if (report?.refused === true) return `execute refused: ${report.error ?? "no reason given"}`;
  return undefined;
}

/** Whether the chain knows the signature (landed, or failed there): then the chain's word decides. */
async function seenOnChain(input: SignAndSubmitInput, signature: string): Promise<boolean> {
  return (await statusOnChain(input, signature)) !== null;
}

/** The chain's status of the signature, history included; null when it knows none. RPC errors throw. */
async function statusOnChain(input: SignAndSubmitInput, signature: string): Promise<SignatureStatus | null> {
  const { value } = await rpcCall("getSignatureStatuses", () =>
    input.connection.getSignatureStatuses([signature], { searchTransactionHistory: true }),
  );
  return value[0] ?? null;
}

/**
 * The guard's checks of the intent (refusing what its limits do not allow), and what the transaction
 * must bring in: a swap's expectation held to Keeper's floor.
 */
async function guardedInflow(input: SignAndSubmitInput): Promise<InflowExpectation | undefined> {
  if (!input.guard) return input.inflow;
  const { swapFloor } = await input.guard.check(input.intent, input.swapQuote);
  if (!swapFloor || input.intent.kind !== "swap") return input.inflow;
  return heldToSwapFloor(input.inflow, {
    outputMint: input.intent.outputMint,
    minRaw: swapFloor.minRaw,
    what: `swap output (${describeFloor(swapFloor)})`,
  });
}

/**
 * The transaction cannot land as built (its blockhash is gone or unknown to the node). Unless the chain
 * has it (below), nothing was signed, so nothing is recorded: the caller asks the service for a fresh
 * one. Unless another run of the intent recorded an attempt meanwhile (this one stalled): that attempt
 * is the intent's, follow it.
 */
async function stale(
  error: StaleTransaction,
  attempt: number,
  lastValidBlockHeight: number,
  input: SignAndSubmitInput,
  log: Logger,
): Promise<SignOutcome | SentAttempt> {
  const { attempts, intent } = input;
  const current = await attempts.get(intent.key);
  if (current !== undefined && current.attempt >= attempt) {
    log.warn({ attempt, recorded: current.attempt }, "another run recorded this intent first");
    return current.status === "sent" ? inFlight(current, log) : fromRecord(current);
  }
  // No record of these bytes, yet a run whose record Redis lost (a snapshot, a failover) may have
  // signed and landed them: a rebuild would then act twice. Ed25519 is deterministic, so signing them
  // again gives the signature they would carry, and with their blockhash gone it can no longer land.
  // The chain's word decides; an RPC error throws (the job retries), never reads as "not found".
  const signed = await signedAgain(input);
  const found = signed && (await statusOnChain(input, signed.signature));
  if (signed && found) {
    log.warn(
      { signature: signed.signature, attempt, slot: found.slot },
      "a stale transaction of this intent is on chain, unrecorded",
    );
    return recordLanded(signed, found, { attempt, lastValidBlockHeight }, input, log);
  }
  log.info({ attempt, detail: error.detail }, "transaction stale before signing; asking for a fresh one");
  return { outcome: "expired", attempt, resumed: false };
}

/**
 * How many of the wallet's newest transactions are searched for refused bytes that landed: a previous
 * run sent them within their blockhash's minute or two, and each one searched costs a read.
 */
const RECENT_TRANSACTIONS = 25;

/**
 * Refused bytes that landed all the same: a run whose attempt record Redis lost (a snapshot, a
 * failover) signed and sent them while the chain still let them pass, and now they no longer simulate
 * (a claim already paid). Recording a refusal would invite a person's `keeper retry`, and a retried swap
 * or order would then act twice. Nothing is signed to find them: the wallet's newest transactions are
 * read and compared with these bytes' message, and the wallet's signature on a match verified. None
 * when the chain has none of them, or cannot be asked (the refusal then stands, and waits for a person).
 */
async function refusedButLanded(
  attempt: number,
  lastValidBlockHeight: number,
  input: SignAndSubmitInput,
  log: Logger,
): Promise<SignOutcome | SentAttempt | undefined> {
  let message: Uint8Array;
  try {
    message = messageOf(readWireTransaction(Buffer.from(input.transactionBase64, "base64")));
  } catch {
    return undefined; // bytes that are no transaction never landed
  }
  let landed: Awaited<ReturnType<typeof landedWithMessage>>;
  try {
    landed = await landedWithMessage(input, message);
  } catch (error) {
    log.warn({ err: (error as Error).message }, "could not ask the chain whether refused bytes landed");
    return undefined;
  }
  if (!landed) return undefined;
  log.warn(
    { signature: landed.signed.signature, attempt, slot: landed.found.slot },
    "a refused transaction of this intent is on chain, unrecorded",
  );
  return recordLanded(landed.signed, landed.found, { attempt, lastValidBlockHeight }, input, log);
}

/** The wallet's landed transaction with this message and the wallet's valid signature, if one is recent. */
async function landedWithMessage(input: SignAndSubmitInput, message: Uint8Array) {
  const wallet = new PublicKey(input.intent.wallet);
  const listed = await rpcCall("getSignaturesForAddress", () =>
    input.connection.getSignaturesForAddress(wallet, { limit: RECENT_TRANSACTIONS }, "confirmed"),
  );
  for (const entry of listed) {
    const response = await rpcCall("getTransaction", () =>
      input.connection.getTransaction(entry.signature, {
        commitment: "confirmed",
        maxSupportedTransactionVersion: 0,
      }),
    );
    if (!response) continue;
    const { message: landedMessage, signatures } = response.transaction;
    if (!Buffer.from(landedMessage.serialize()).equals(message)) continue;
    const slot = landedMessage.staticAccountKeys.findIndex((key) => key.equals(wallet));
    const walletSignature = slot >= 0 ? signatures[slot] : undefined;
    if (
      walletSignature === undefined ||
      !verifyEd25519(wallet.toBytes(), message, bs58.decode(walletSignature))
    )
      continue;
    const bytes = new VersionedTransaction(
      landedMessage,
      signatures.map((s) => bs58.decode(s)),
    ).serialize();
    return {
      signed: {
        signature: entry.signature,
        recentBlockhash: landedMessage.recentBlockhash,
        signedTransaction: Buffer.from(bytes).toString("base64"),
      },
      found: { slot: entry.slot, err: entry.err },
    };
  }
  return undefined;
}

/**
 * Bytes of the intent found on chain with no attempt record: recorded as signed, then finished with the
 * chain's word. A run that recorded the intent meanwhile wins, as everywhere.
 */
async function recordLanded(
  signed: NonNullable<Awaited<ReturnType<typeof signedAgain>>>,
  found: { slot: number; err: SignatureStatus["err"] },
  at: { attempt: number; lastValidBlockHeight: number },
  input: SignAndSubmitInput,
  log: Logger,
): Promise<SignOutcome | SentAttempt> {
  const { attempts, intent } = input;
  const { attempt } = at;
  if (!(await attempts.recordSigned(intent.key, { ...at, ...signed }))) {
    const winner = await attempts.get(intent.key);
    log.warn({ attempt, recorded: winner?.attempt }, "another run recorded this intent first");
    if (winner?.status === "sent") return inFlight(winner, log);
    if (winner) return fromRecord(winner);
    throw new Error(`attempt record of ${intent.key} vanished`);
  }
  const { signature } = signed;
  if (found.err) {
    const failed = describeTransactionError(found.err);
    await attempts.finish(intent.key, signature, { status: "failed", error: failed });
    return { outcome: "failed", signature, error: failed, attempt, resumed: true };
  }
  await attempts.finish(intent.key, signature, { status: "confirmed", slot: found.slot });
  return { outcome: "confirmed", signature, slot: found.slot, attempt, resumed: true };
}

/** The transaction as the wallet signs it (never sent from here); none when the wallet is no signer. */
async function signedAgain(
  input: SignAndSubmitInput,
): Promise<Omit<SignedAttempt, "attempt" | "lastValidBlockHeight"> | undefined> {
  const wire = readWireTransaction(Buffer.from(input.transactionBase64, "base64"));
  const signers = wire.staticKeys.slice(0, wire.signatures.length);
  const slot = signers.findIndex((key) => bs58.encode(key) === input.intent.wallet);
  if (slot < 0) return undefined;
  const signature = await input.wallets.sign(input.intent.wallet, messageOf(wire));
  return {
    signature: bs58.encode(signature),
    recentBlockhash: bs58.encode(wire.recentBlockhash),
    signedTransaction: Buffer.from(withSignature(wire, slot, signature)).toString("base64"),
  };
}

function inFlight(record: AttemptRecord, log: Logger): SentAttempt {
  if (!record.signature) throw new Error(`attempt record of ${record.intentKey} is in flight but incomplete`);
  log.info(
    { signature: record.signature, attempt: record.attempt },
    "an attempt of this intent is in flight",
  );
  return { outcome: "sent", signature: record.signature, attempt: record.attempt, resumed: true };
}

/** What the confirm loop needs: the RPC and the attempt records, no keys. */
export type WatchAttemptInput = Pick<
  SignAndSubmitInput,
  "connection" | "attempts" | "logger" | "send" | "signal"
> & {
  intentKey: string;
  /** Rebroadcasts go here instead of the RPC: a transaction the service completes at execute. */
  resubmit?: SubmitSigned;
  /** Reported in the outcome: the attempt was sent by an earlier run. */
  resumed?: boolean;
  /**
   * The record the caller itself just wrote before sending (SentAttempt.record): watched as it is,
   * neither read again nor capped again (its height was capped when it was signed).
   */
  record?: AttemptRecord;
};

/**
 * Sees the intent's recorded attempt through: rebroadcasts the recorded bytes until they confirm,
 * fail, or provably expire, then records the outcome. An attempt already finished answers its
 * outcome. Needs no key: it never signs, so a watch lost to a crash is simply run again.
 */
export async function watchAttempt(input: WatchAttemptInput): Promise<SignOutcome> {
  const log = input.logger.child({ intentKey: input.intentKey });
  const record = input.record ?? (await input.attempts.get(input.intentKey));
  if (!record) throw new Error(`no attempt record of ${input.intentKey} to watch`);
  if (record.status !== "sent") return fromRecord(record);
  const { signature, signedTransaction, recentBlockhash } = record;
  if (!signature || !signedTransaction || record.lastValidBlockHeight === undefined || !recentBlockhash) {
    throw new Error(`attempt record of ${record.intentKey} is in flight but incomplete`);
  }
  const resumed = input.resumed ?? true;
  // A watch of what this run just sent is the caller's to say (the sign job logs "sent; watching it");
  // a resumed one is news, said at info.
  const watchLine = { signature, attempt: record.attempt };
  if (resumed) log.info(watchLine, "resuming a recorded transaction");
  else log.debug(watchLine, "watching a recorded transaction");
  // Capped again: a record written before heights were capped may hold the service's far-off one, and
  // the blockhash, older than the record, cannot outlive the node's height now + 151 either.
  const lastValidBlockHeight =
    input.record !== undefined
      ? record.lastValidBlockHeight
      : believed(record.lastValidBlockHeight, await blockHeightNow(input), log);
  // Same bytes, same signature: rebroadcasting cannot make a second payment.
  const outcome = await sendAndConfirm({
    ...sendInput(input, log),
    signedTransaction: Buffer.from(signedTransaction, "base64"),
    signature,
    recentBlockhash,
    lastValidBlockHeight,
    alreadySent: true,
    ...(input.resubmit ? { resubmit: input.resubmit } : {}),
  });
  return finish(record.intentKey, record.attempt, outcome, resumed, input, log);
}

/** The node's newest block height (processed): the highest cap, past it the node's word decides anyway. */
async function blockHeightNow(input: Pick<SignAndSubmitInput, "connection" | "signal">): Promise<number> {
  return rpcCall("getBlockHeight", () => input.connection.getBlockHeight("processed"), {
    signal: input.signal,
  });
}

/** `lastValidBlockHeight`, capped at `height` + 151; a cap is logged. */
function believed(lastValidBlockHeight: number, height: number, log: Logger): number {
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
  input: Pick<SignAndSubmitInput, "connection" | "send" | "signal">,
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
  // Stryker disable next-line ConditionalExpression: a signal set to undefined is read as no signal
  if (input.signal) base.signal = input.signal;
  return base;
}

async function finish(
  intentKey: string,
  attempt: number,
  outcome: SendOutcome,
  resumed: boolean,
  input: Pick<SignAndSubmitInput, "attempts">,
  log: Logger,
): Promise<SignOutcome> {
  switch (outcome.outcome) {
    case "confirmed":
      await input.attempts.finish(intentKey, outcome.signature, { status: "confirmed", slot: outcome.slot });
      // Debug: whoever watches records the outcome and says it at info (the sign and confirm jobs'
      // "transaction confirmed", with the intent), once a claim at the default level, not twice.
      log.debug(
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
  // Stryker disable next-line ConditionalExpression: without it Buffer.from(undefined) throws, and the catch answers false
  if (!recorded) return false;
  try {
    const a = messageOf(readWireTransaction(Buffer.from(recorded, "base64")));
    const b = messageOf(readWireTransaction(Buffer.from(transactionBase64, "base64")));
    return Buffer.from(a).equals(b);
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
