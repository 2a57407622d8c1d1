import { z } from "zod";
import type { ApiClient } from "../api/client.js";
import { PermanentApiError, ValidationError } from "../api/errors.js";
import type { SubmitSigned } from "../chain/send-and-confirm.js";
import type { KeeperConfig } from "../config/load-config.js";
import { SubmitRefused } from "../core/errors.js";
import type { Intent } from "../core/intent.js";

/** The ledger row's execution route as the signer reads it: untrusted, so checked here. */
const routeSchema = z.looseObject({
  context: z.looseObject({ type: z.string().min(1) }),
  requiredSigners: z.array(z.string()).default([]),
});

export type PredictionSubmit = KeeperConfig["service"]["predictionSubmit"];

/** How one prediction transaction reaches the chain, decided by the signer's own config. */
export interface PredictionRoute {
  readonly via: "execute" | "rpc";
  /** The build's `execution.context`, unchanged, when it gave one. */
  readonly context?: Record<string, unknown>;
  /** The keys the build says must sign (the wallet and, for Forecast, the service's): checked by the signer. */
  readonly requiredSigners: readonly string[];
}

const PREDICTION_KINDS: ReadonlySet<Intent["kind"]> = new Set(["claim", "close"]);

/**
 * `auto`: through the service's execute endpoint when the build named an execution, the RPC
 * otherwise; `execute` and `rpc` force one way. Only claims and closes are prediction transactions;
 * anything else answers undefined (trigger and recurring orders have execute endpoints of their own).
 */
export function predictionRouteFor(
  built: { kind: Intent["kind"]; execution?: unknown },
  mode: PredictionSubmit,
): PredictionRoute | undefined {
  if (!PREDICTION_KINDS.has(built.kind)) return undefined;
  const parsed = built.execution == null ? undefined : routeSchema.safeParse(built.execution);
  const route = parsed?.success === true ? parsed.data : undefined;
  const requiredSigners = route?.requiredSigners ?? [];
  const via = mode === "rpc" || (mode === "auto" && route === undefined) ? "rpc" : "execute";
  return { via, requiredSigners, ...(via === "execute" && route ? { context: route.context } : {}) };
}

/** What an execute answer was, for the keeper_prediction_executes_total counter. */
export type ExecuteReport = "success" | "failed" | "error";

/**
 * The send of a signed prediction transaction through the configured service's
 * POST /prediction/v1/execute: the path is fixed here and the host is the service's base URL, never
 * an endpoint a build names (a hostile build must not send signed bytes elsewhere).
 */
export function predictionExecuteSubmit(
  execute: ApiClient["prediction"]["execute"],
  route: PredictionRoute,
  onReport?: (report: ExecuteReport) => void,
): SubmitSigned {
  return async (signedTransaction) => {
    try {
      const answer = await execute({
        signedTransaction,
        ...(route.context !== undefined ? { context: route.context as { type: string } } : {}),
      });
      onReport?.(answer.status === "Success" ? "success" : "failed");
      return { signature: answer.signature ?? "", status: answer.status, error: answer.error };
    } catch (error) {
      onReport?.("error");
      if (refusedBeforeActing(error)) throw new SubmitRefused(error.message, { cause: error });
      throw error;
    }
  };
}

/**
 * HTTP statuses of POST /prediction/v1/execute that refuse the request itself (api-live: a bad request
 * is 400; 401 and 403 refuse the key), before the service acts on the transaction. A failure after it
 * may have broadcast comes as a 200 with `status: "Failed"`.
 */
const REFUSED_BEFORE_ACTING: ReadonlySet<number> = new Set([400, 401, 403]);

/**
 * Whether the call proves the transaction never left through it: the service refused the request, or
 * the client never sent it. An answer it could not read, a lost one or another status proves nothing.
 */
function refusedBeforeActing(error: unknown): error is Error {
  if (error instanceof PermanentApiError) return REFUSED_BEFORE_ACTING.has(error.status);
  return error instanceof ValidationError && error.phase === "request";
}
