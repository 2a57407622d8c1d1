import type { Connection } from "@solana/web3.js";
import type { Logger } from "pino";
import type { ApiClient } from "../api/client.js";
import { type BuildFigures, expectedInflow } from "../chain/inflow-rules.js";
import type { KeeperConfig } from "../config/load-config.js";
import type { Intent } from "../core/intent.js";
import type { AttemptStore } from "./attempt-store.js";
import type { IntentGuard } from "./intent-guard.js";
import { type ExecuteReport, predictionExecuteSubmit, predictionRouteFor } from "./prediction-route.js";
import { type SendOptions, type SentAttempt, type SignOutcome, signAndSend } from "./sign-transaction.js";

/** What the signer reads of a built intent (a ledger row is one): all of it untrusted but the intent. */
export interface BuiltTransaction extends BuildFigures {
  intent: Intent;
  kind: Intent["kind"];
  /** The unsigned transaction the service built, base64. */
  transaction?: string;
  lastValidBlockHeight?: number;
  /** The service's request id: trigger and recurring orders are submitted through its execute endpoint. */
  requestId?: string;
  swapQuote?: unknown;
  order?: string;
  /** The build's execution route (a sell's or an order's), as the ledger row keeps it: untrusted. */
  execution?: unknown;
}

export interface SubmitAdapterDeps {
  config: Pick<KeeperConfig, "signer" | "rpc" | "service">;
  /** The execute endpoints of trigger and recurring orders, and the prediction area's. */
  execute: {
    trigger: ApiClient["trigger"]["execute"];
    recurring: ApiClient["recurring"]["execute"];
    prediction?: ApiClient["prediction"]["execute"];
  };
  /** Told of each prediction execute answer (keeper_prediction_executes_total). */
  onExecuteReport?: (report: ExecuteReport) => void;
  guard: IntentGuard;
  /** Whatever holds the keys. */
  wallets: Parameters<typeof signAndSend>[0]["wallets"];
  connection: Connection;
  attempts: AttemptStore;
  logger: Logger;
  send: SendOptions;
}

/**
 * The signer's side of a sign job: from a built intent to a checked, signed, recorded and sent
 * transaction. Every security-relevant choice is made here from the signer's own configuration: the
 * inflow the transaction must show, the policy's limits, the guard, where it is submitted.
 */
export function createSubmitAdapter(
  deps: SubmitAdapterDeps,
): (built: BuiltTransaction) => Promise<SignOutcome | SentAttempt> {
  const { config, connection } = deps;
  const policyConfig = {
    extraPrograms: config.signer.allowedPrograms,
    maxComputeUnitPriceMicroLamports: BigInt(config.signer.maxComputeUnitPriceMicroLamports),
    maxPriorityFeeLamports: BigInt(config.signer.maxPriorityFeeLamports),
    commitment: config.rpc.commitment,
    payoutMints: config.signer.payoutMints,
    allowedToken2022Mints: config.signer.allowedToken2022Mints,
  };
  return async (built) => {
    const route = predictionRouteFor(built, config.service.predictionSubmit);
    const viaService = route?.via === "execute" && deps.execute.prediction !== undefined;
    const submit =
      route && viaService && deps.execute.prediction
        ? predictionExecuteSubmit(deps.execute.prediction, route, deps.onExecuteReport)
        : executeEndpointFor(built, deps.execute);
    const inflow = expectedInflow(built.intent, built, {
      payoutMints: config.signer.payoutMints,
      toleranceBps: config.signer.inflowToleranceBps,
      settledLater: config.signer.settledLater,
    });
    return signAndSend({
      intent: built.intent,
      ...(inflow ? { inflow } : {}),
      guard: deps.guard,
      swapQuote: built.swapQuote,
      ...(built.order ? { order: built.order } : {}),
      transactionBase64: built.transaction ?? "",
      lastValidBlockHeight:
        built.lastValidBlockHeight ?? (await connection.getLatestBlockhash()).lastValidBlockHeight,
      wallets: deps.wallets,
      connection,
      policyConfig,
      attempts: deps.attempts,
      logger: deps.logger,
      maxAttempts: (config.signer.maxRebuilds + 1) * 3,
      send: deps.send,
      ...(submit ? { submit } : {}),
      ...(route
        ? {
            requiredSigners: route.requiredSigners,
            serviceSigners: config.signer.serviceSigners,
            submitAnswerDecides: viaService,
          }
        : {}),
    });
  };
}

/**
 * The confirm loop's resend of a prediction transaction that went through the service: the same
 * bytes, through the same endpoint (only the service can complete them). Undefined for the RPC path.
 */
export function predictionResubmitFor(
  built: Pick<BuiltTransaction, "kind" | "execution">,
  deps: Pick<SubmitAdapterDeps, "config" | "execute" | "onExecuteReport">,
) {
  const route = predictionRouteFor(built, deps.config.service.predictionSubmit);
  if (route?.via !== "execute" || !deps.execute.prediction) return undefined;
  return predictionExecuteSubmit(deps.execute.prediction, route, deps.onExecuteReport);
}

/** Orders go through the service's execute endpoint when it gave a request id; everything else to the RPC. */
function executeEndpointFor(built: BuiltTransaction, execute: SubmitAdapterDeps["execute"]) {
  const requestId = built.requestId;
  if (!requestId) return undefined;
  if (built.kind === "createTrigger" || built.kind === "cancelTrigger")
    return async (signedTransaction: string) => execute.trigger({ requestId, signedTransaction });
  if (built.kind === "createRecurring" || built.kind === "cancelRecurring")
    return async (signedTransaction: string) => execute.recurring({ requestId, signedTransaction });
  return undefined;
}
