import { VersionedTransaction } from "@solana/web3.js";
import type { WorldChainPort } from "./chain-port.js";
import { badRequest } from "./errors.js";
import type { MarketRecord } from "./markets.js";
import type { PendingActions } from "./pending-actions.js";

/** Where a build that opens or sells is sent back (api-live): relative, on the service itself. */
export const EXECUTE_ENDPOINT = "/prediction/v1/execute";

/** The fields a build that opens or sells carries besides its transaction (api-live). */
export interface BuildExecutionFields {
  readonly execution: {
    readonly endpoint: string;
    readonly context: { readonly type: string; readonly id: string; readonly marketId: string };
  };
  readonly executionModel: "atomic_swap" | null;
  readonly settlement: "auto" | null;
  readonly requiredSigners: string[];
  readonly jupiterSwapRequestId: string | null;
}

/** The message of a transaction (base64), the part signatures do not change; a 400 when it is none. */
export function messageOf(base64: string): string {
  try {
    const tx = VersionedTransaction.deserialize(Buffer.from(base64, "base64"));
    return Buffer.from(tx.message.serialize()).toString("base64");
  } catch {
    throw badRequest("signedTransaction", "invalid_transaction", "is not a base64 Solana transaction");
  }
}

/**
 * Records a build and names its way back: a Forecast build is an atomic swap the service co-signs at
 * execute (its key is in `requiredSigners`), a keeper-filled one a `create_order` the owner alone signs.
 */
export function executionFieldsFor(
  chain: WorldChainPort,
  pending: PendingActions,
  market: MarketRecord,
  owner: string,
  transaction: string,
): BuildExecutionFields {
  const isForecast = market.forecast !== undefined;
  const type = isForecast ? "bisonfi_swap" : "create_order";
  const contextId = pending.nextId(isForecast ? "swap" : "order");
  pending.executions.set(messageOf(transaction), { contextId, type });
  return {
    execution: { endpoint: EXECUTE_ENDPOINT, context: { type, id: contextId, marketId: market.marketId } },
    executionModel: isForecast ? "atomic_swap" : null,
    settlement: isForecast ? "auto" : null,
    requiredSigners: isForecast ? [owner, chain.serviceSigner] : [owner],
    jupiterSwapRequestId: isForecast ? contextId : null,
  };
}

export interface ExecuteOutcome {
  readonly signature: string | null;
  readonly error: string | null;
}

/**
 * Submits a signed build: checks the context against the message it was built for, adds the
 * service's signature to a message this service built (never to another), and reports the chain's
 * answer. The same bytes again answer the same signature: they cannot land twice.
 */
export async function executeSigned(
  chain: WorldChainPort,
  pending: PendingActions,
  signedTransaction: string,
  context: { readonly type: string; readonly [key: string]: unknown } | undefined,
): Promise<ExecuteOutcome> {
  const built = pending.executions.get(messageOf(signedTransaction));
  if (context !== undefined) {
    if (built === undefined || context.type !== built.type || context.id !== built.contextId)
      throw badRequest("context", "context_mismatch", "does not match the signed transaction's build");
  }
  const bytes = built === undefined ? signedTransaction : chain.coSign(signedTransaction);
  const outcome = await chain.submitSigned(bytes);
  if (outcome.err === null || outcome.err === undefined) return { signature: outcome.signature, error: null };
  const error = typeof outcome.err === "string" ? outcome.err : JSON.stringify(outcome.err);
  return { signature: null, error };
}
