import Fastify, { type FastifyBaseLogger } from "fastify";
import type { LocalChain } from "./local-chain.js";
import {
  RPC_INTERNAL_ERROR,
  RPC_INVALID_REQUEST,
  RPC_METHOD_NOT_FOUND,
  RPC_NODE_UNHEALTHY,
  RPC_PARSE_ERROR,
  RpcError,
} from "./rpc-errors.js";
import { RPC_METHODS } from "./rpc-methods.js";

export interface RpcServerOptions {
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  logger?: FastifyBaseLogger;
}

export interface RpcServer {
  readonly url: string;
  close(): Promise<void>;
}

type JsonRpcId = string | number | null;

interface JsonRpcResponse {
  jsonrpc: "2.0";
  id: JsonRpcId;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

const NOT_JSON = Symbol("not-json");

function failure(id: JsonRpcId, error: RpcError): JsonRpcResponse {
  const body: JsonRpcResponse["error"] = { code: error.code, message: error.message };
  if (error.data !== undefined) body.data = error.data;
  return { jsonrpc: "2.0", id, error: body };
}

function idOf(request: Record<string, unknown>): JsonRpcId {
  const id = request.id;
  return typeof id === "string" || typeof id === "number" ? id : null;
}

function answer(chain: LocalChain, request: unknown, logger: FastifyBaseLogger | undefined): JsonRpcResponse {
  if (request === null || typeof request !== "object" || Array.isArray(request)) {
    return failure(null, new RpcError(RPC_INVALID_REQUEST, "Invalid request"));
  }
  const call = request as Record<string, unknown>;
  const id = idOf(call);
  if (call.jsonrpc !== "2.0" || typeof call.method !== "string") {
    return failure(id, new RpcError(RPC_INVALID_REQUEST, "Invalid request"));
  }
  const method = RPC_METHODS[call.method];
  if (method === undefined) return failure(id, new RpcError(RPC_METHOD_NOT_FOUND, "Method not found"));
  const injected = chain.faults.methodError(call.method);
  if (injected !== undefined) {
    return failure(
      id,
      new RpcError(
        injected.code ?? RPC_NODE_UNHEALTHY,
        injected.message ?? `Injected failure of ${call.method}`,
      ),
    );
  }
  try {
    return { jsonrpc: "2.0", id, result: method(chain, call.params) };
  } catch (error) {
    if (error instanceof RpcError) return failure(id, error);
    logger?.error({ err: error, method: call.method }, "rpc method threw");
    return failure(id, new RpcError(RPC_INTERNAL_ERROR, `Internal error: ${(error as Error).message}`));
  }
}

/** A Solana JSON-RPC 2.0 endpoint (single and batch requests) over the local chain, on loopback. */
export async function startRpcServer(chain: LocalChain, options: RpcServerOptions = {}): Promise<RpcServer> {
  const app = Fastify({ loggerInstance: options.logger, bodyLimit: 10 * 1024 * 1024 });
  // Parse JSON ourselves so a broken body gets JSON-RPC's -32700 rather than fastify's 400 page.
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (_request, body, done) => {
    try {
      done(null, JSON.parse(body as string));
    } catch {
      done(null, NOT_JSON);
    }
  });
  app.post("/", async (request) => {
    const body = request.body;
    if (body === NOT_JSON) return failure(null, new RpcError(RPC_PARSE_ERROR, "Parse error"));
    if (Array.isArray(body)) {
      if (body.length === 0) return failure(null, new RpcError(RPC_INVALID_REQUEST, "Invalid request"));
      return body.map((call) => answer(chain, call, options.logger));
    }
    return answer(chain, body, options.logger);
  });
  const address = await app.listen({ host: options.host ?? "127.0.0.1", port: options.port ?? 8899 });
  return {
    url: address,
    close: () => app.close(),
  };
}
