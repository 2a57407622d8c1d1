import { setTimeout as sleep } from "node:timers/promises";
import type { Connection, SignatureStatus, TransactionConfirmationStatus } from "@solana/web3.js";
import type { Logger } from "pino";
import { PermanentError, SubmitRefused } from "../core/errors.js";
import { rpcCall } from "./rpc.js";
import { describeTransactionError } from "./tx-error.js";

export type SendOutcome =
  | { outcome: "confirmed"; signature: string; slot: number; confirmationMs: number }
  | { outcome: "failed"; signature: string; error: string }
  | { outcome: "expired"; signature: string };

/**
 * Hands the signed transaction to someone else first (the trigger/recurring execute endpoints). Their
 * answer is a report, not the outcome: `status: "Failed"` is logged, the chain's status decides.
 */
export type SubmitSigned = (
  signedBase64: string,
) => Promise<{ signature: string; status?: string; error?: string | null }>;

export interface SendAndConfirmInput {
  connection: Connection;
  /** The signed wire bytes; every (re)broadcast sends exactly these. */
  signedTransaction: Uint8Array;
  signature: string;
  recentBlockhash: string;
  /**
   * Past this height the node is asked whether it still accepts the blockhash. The caller caps what
   * the service said (capLastValidBlockHeight): a far-off value would keep this waiting that long.
   */
  lastValidBlockHeight: number;
  /** Wanted commitment (default confirmed). */
  commitment?: "processed" | "confirmed" | "finalized";
  /** Rebroadcast the same bytes this often while nothing is seen (default 2 s). */
  rebroadcastIntervalMs?: number;
  /** Status polling interval (default 400 ms). */
  pollIntervalMs?: number;
  /** First send through this instead of the RPC; rebroadcasts still go to the RPC unless `resubmit`. */
  submit?: SubmitSigned;
  /**
   * Rebroadcasts through this instead of the RPC: a transaction only the service can complete (it
   * co-signs at its execute endpoint) cannot land from the RPC. The same bytes again are idempotent.
   */
  resubmit?: SubmitSigned;
  /**
   * The first send already happened (sendOnce, by the signer): only watch, and rebroadcast once the
   * interval has passed since now.
   */
  alreadySent?: boolean;
  /**
   * More RPC nodes every RPC send and rebroadcast also goes to, in parallel (`rpc.sendUrls`): more
   * leaders hear of the transaction under congestion. Reads and status checks stay on `connection`.
   */
  alsoSendTo?: readonly Connection[];
  /**
   * Past lastValidBlockHeight, ask the node whether the blockhash is gone before declaring `expired`
   * (default true). Off: `expired` as soon as the height passes and a last status check finds nothing.
   */
  checkBlockhashWithRpc?: boolean;
  logger: Logger;
  signal?: AbortSignal;
}

const RANK: Record<TransactionConfirmationStatus, number> = { processed: 0, confirmed: 1, finalized: 2 };

function reached(status: SignatureStatus, wanted: TransactionConfirmationStatus): boolean {
  // Old nodes leave confirmationStatus out; `confirmations: null` means rooted (finalized).
  const level: TransactionConfirmationStatus =
    status.confirmationStatus ?? (status.confirmations === null ? "finalized" : "processed");
  return RANK[level] >= RANK[wanted];
}

/**
 * Sends with `maxRetries: 0` (preflight skipped: our own simulation ran) and rebroadcasts the same
 * bytes until the wanted commitment, or until the block height passes `lastValidBlockHeight`, the
 * node no longer accepts the blockhash and one last status check, history included, finds nothing:
 * only then is the transaction `expired`, because only then can a fresh transaction not land beside
 * this one. While the node still accepts the blockhash the wait goes on, past the height too: the
 * height comes from the service (capped by the caller), the node's answer is the chain's. RPC
 * failures that outlast the retries are thrown (TransientError / PermanentError); the caller resumes
 * from the recorded signature.
 */
export async function sendAndConfirm(input: SendAndConfirmInput): Promise<SendOutcome> {
  const { connection, signature, logger } = input;
  const wanted = input.commitment ?? "confirmed";
  const rebroadcastMs = input.rebroadcastIntervalMs ?? 2_000;
  const pollMs = input.pollIntervalMs ?? 400;
  const log = logger.child({ signature });
  const startedAt = performance.now();
  let lastSendAt = Number.NEGATIVE_INFINITY;
  let sends = 0;

  const send = async () => {
    lastSendAt = performance.now();
    sends += 1;
    await broadcast(input, log, sends);
  };

  const status = async (searchTransactionHistory: boolean) =>
    (
      await rpcCall(
        "getSignatureStatuses",
        () => connection.getSignatureStatuses([signature], { searchTransactionHistory }),
        { signal: input.signal },
      )
    ).value[0] ?? null;

  const settle = (found: SignatureStatus): SendOutcome | undefined => {
    if (found.err) return { outcome: "failed", signature, error: describeTransactionError(found.err) };
    if (reached(found, wanted)) {
      return {
        outcome: "confirmed",
        signature,
        slot: found.slot,
        confirmationMs: Math.round(performance.now() - startedAt),
      };
    }
    return undefined;
  };

  if (input.alreadySent) {
    lastSendAt = performance.now();
    sends = 1;
  } else await send();
  for (;;) {
    input.signal?.throwIfAborted();
    const found = await status(false);
    if (found) {
      const done = settle(found);
      if (done) return done;
    }
    const height = await rpcCall(
      "getBlockHeight",
      () => connection.getBlockHeight(wanted === "processed" ? "confirmed" : wanted),
      {
        signal: input.signal,
      },
    );
    // Blockhash first, status after: once the node refuses the blockhash the transaction cannot land
    // any more, so a status check after that answer is the last word.
    if (!found && height > input.lastValidBlockHeight && !(await blockhashStillValid(input))) {
      const last = await status(true);
      if (!last) {
        log.info({ height, lastValidBlockHeight: input.lastValidBlockHeight, sends }, "transaction expired");
        return { outcome: "expired", signature };
      }
      const done = settle(last);
      if (done) return done;
    }
    if (!found && performance.now() - lastSendAt >= rebroadcastMs) await send();
    await sleep(pollMs, undefined, { signal: input.signal });
  }
}

/** What an execute endpoint said of the first send: its answer, or that it refused the request. */
export interface SubmitReport {
  status?: string;
  error?: string | null;
  /**
   * The endpoint refused the request before acting on it (SubmitRefused): the transaction did not go
   * out through it. Not set for `Failed`, an answer outside its schema or a lost call: those may
   * follow a broadcast.
   */
  refused?: boolean;
}

/**
 * The first send of a signed transaction, nothing more: the execute endpoint when one is given, else
 * every RPC node. Whoever watches the signature afterwards (sendAndConfirm) rebroadcasts the same bytes.
 * Answers the execute endpoint's report, if it was one (undefined after a lost call or an RPC send).
 */
export async function sendOnce(input: SendAndConfirmInput): Promise<SubmitReport | undefined> {
  return broadcast(input, input.logger.child({ signature: input.signature }), 1);
}

/** Send number `sends`; a refused or lost send is only logged: the signature's status decides. */
async function broadcast(
  input: SendAndConfirmInput,
  log: Logger,
  sends: number,
): Promise<SubmitReport | undefined> {
  const { signature } = input;
  const via = sends === 1 ? input.submit : input.resubmit;
  try {
    if (via) {
      const answer = await via(Buffer.from(input.signedTransaction).toString("base64"));
      // A failure answers no signature (null): only a different one is news.
      if (answer.signature && answer.signature !== signature) {
        log.warn(
          { reported: answer.signature },
          "execute endpoint reported another signature; tracking ours",
        );
      }
      // Said once at warn: a watch resending the same bytes may hear the same `Failed` until they expire.
      if (answer.status === "Failed")
        log[sends === 1 ? "warn" : "debug"](
          { error: answer.error ?? undefined, sends },
          "execute endpoint reported the transaction failed",
        );
      return {
        ...(answer.status !== undefined ? { status: answer.status } : {}),
        error: answer.error ?? null,
      };
    }
    await sendToEvery(input, log, sends);
  } catch (error) {
    // A refused or lost send changes nothing: the status decides, and the next rebroadcast retries.
    // The execute endpoint's failure is said out loud, though: a refusal or an answer outside its
    // schema (a PermanentError) means the service and Keeper disagree, which an operator must see.
    if (via)
      log[error instanceof PermanentError ? "error" : "warn"](
        { err: error, sends },
        "execute endpoint failed or answered outside its schema; tracking the signature on the chain",
      );
    else log.debug({ err: error, sends }, "send failed; will rebroadcast");
    if (via && error instanceof SubmitRefused) return { refused: true, error: error.message };
  }
  return undefined;
}

/**
 * The same bytes to the main node and to every extra one at once. One acceptance is enough; an extra
 * node's failure is only logged at debug (by its place in `rpc.sendUrls`: its URL may hold a key).
 * When every node failed, the main node's error is thrown, as when there was only the main node.
 */
async function sendToEvery(input: SendAndConfirmInput, log: Logger, sends: number): Promise<void> {
  const nodes = [input.connection, ...(input.alsoSendTo ?? [])];
  const results = await Promise.allSettled(
    nodes.map((node) =>
      rpcCall(
        "sendTransaction",
        () => node.sendRawTransaction(input.signedTransaction, { skipPreflight: true, maxRetries: 0 }),
        { retries: 1, signal: input.signal },
      ),
    ),
  );
  results.forEach((result, index) => {
    if (index > 0 && result.status === "rejected")
      log.debug({ err: result.reason, sendUrl: index - 1, sends }, "send to an extra RPC failed");
  });
  const [main] = results;
  // Stryker disable next-line OptionalChaining: `nodes` always holds the main node, so `main` is never undefined
  if (main?.status === "rejected" && results.every((r) => r.status === "rejected")) throw main.reason;
}

/** A last word from the node: a blockhash it still accepts means the transaction can still land. */
async function blockhashStillValid(input: SendAndConfirmInput): Promise<boolean> {
  if (input.checkBlockhashWithRpc === false) return false;
  try {
    const answer = await rpcCall(
      "isBlockhashValid",
      () => input.connection.isBlockhashValid(input.recentBlockhash, { commitment: "processed" }),
      { retries: 2, signal: input.signal },
    );
    return answer.value;
  } catch (error) {
    // A node without the method cannot tell us more than the block height did.
    if (error instanceof PermanentError) return false;
    throw error;
  }
}
