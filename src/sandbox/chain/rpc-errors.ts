/** JSON-RPC 2.0 error codes, and the Solana server codes web3.js and Keeper recognise. */
export const RPC_PARSE_ERROR = -32700;
export const RPC_INVALID_REQUEST = -32600;
export const RPC_METHOD_NOT_FOUND = -32601;
export const RPC_INVALID_PARAMS = -32602;
export const RPC_INTERNAL_ERROR = -32603;
export const RPC_SEND_TRANSACTION_PREFLIGHT_FAILURE = -32002;
export const RPC_TRANSACTION_SIGNATURE_VERIFICATION_FAILURE = -32003;
export const RPC_NODE_UNHEALTHY = -32005;
export const RPC_UNSUPPORTED_TRANSACTION_VERSION = -32015;

/** An error to answer a JSON-RPC call with, as `{ code, message, data? }`. */
export class RpcError extends Error {
  override readonly name = "RpcError";
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

export function invalidParams(detail: string): RpcError {
  return new RpcError(RPC_INVALID_PARAMS, `Invalid params: ${detail}`);
}
