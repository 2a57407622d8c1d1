import { SolanaJSONRPCError } from "@solana/web3.js";
import pRetry, { AbortError } from "p-retry";
import { PermanentError, TransientError } from "../core/errors.js";

/**
 * The edge between Keeper and a Solana RPC node: every failure is classified here, once, as transient
 * (retry with backoff) or permanent (no point retrying); the rest of the code branches on the class.
 */

// JSON-RPC codes that no retry will fix: the request itself is wrong or the node refuses it for good.
const PERMANENT_CODES = new Set([
  -32600, // invalid request
  -32601, // method not found
  -32602, // invalid params
  -32003, // transaction signature verification failure
  -32013, // transaction signature length mismatch
  -32015, // unsupported transaction version
]);

/** The JSON-RPC error code carried by web3.js errors, when there is one. */
export function rpcErrorCode(error: unknown): number | undefined {
  // Stryker disable next-line ConditionalExpression,EqualityOperator,StringLiteral: the generic read below answers the same code
  if (error instanceof SolanaJSONRPCError && typeof error.code === "number") return error.code;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "number" ? code : undefined;
}

export function classifyRpcError(error: unknown, what: string): TransientError | PermanentError {
  if (error instanceof TransientError || error instanceof PermanentError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const code = rpcErrorCode(error);
  const wrapped =
    // Stryker disable next-line ConditionalExpression: the Set holds no undefined, so has() alone answers false
    code !== undefined && PERMANENT_CODES.has(code)
      ? new PermanentError(`${what}: RPC error ${code}: ${message}`)
      : new TransientError(`${what}: ${message}`);
  (wrapped as Error).cause = error;
  return wrapped;
}

export interface RpcRetryOptions {
  /** Retries after the first try (default 4). */
  retries?: number;
  /** First backoff delay (default 200 ms), doubling up to `maxTimeoutMs` (default 2 s). */
  minTimeoutMs?: number;
  maxTimeoutMs?: number;
  signal?: AbortSignal;
}

/** Runs one RPC call with backoff on transient failures; throws a classified error in the end. */
export async function rpcCall<T>(
  what: string,
  call: () => Promise<T>,
  options: RpcRetryOptions = {},
): Promise<T> {
  try {
    return await pRetry(
      async () => {
        try {
          return await call();
        } catch (error) {
          const classified = classifyRpcError(error, what);
          if (classified instanceof PermanentError) throw new AbortError(classified);
          throw classified;
        }
      },
      {
        retries: options.retries ?? 4,
        minTimeout: options.minTimeoutMs ?? 200,
        maxTimeout: options.maxTimeoutMs ?? 2_000,
        signal: options.signal,
        unref: true,
      },
    );
  } catch (error) {
    throw classifyRpcError(error instanceof AbortError ? error.originalError : error, what);
  }
}
