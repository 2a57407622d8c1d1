import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";

/**
 * A plain JSON-RPC 2.0 client for the Solana node, over Node's own HTTP with kept-alive connections.
 *
 * web3.js's Connection sends each call through fetch and checks every answer with superstruct (whose
 * failed union branches build error objects); for the signer's hottest reads (the accounts and the
 * simulation of every transaction it checks) that was about a fifth of a claim's CPU. Callers check
 * the shape of what they read themselves (lean-reads.ts). Failures keep the shapes rpc.ts classifies:
 * a JSON-RPC error carries its numeric `code`; HTTP errors, timeouts and unreadable answers are plain
 * errors (transient). No message names the URL: it may hold the provider's API key.
 */
export type JsonRpc = (method: string, params: readonly unknown[]) => Promise<unknown>;

export interface JsonRpcOptions {
  /** An answer that takes longer fails (default 30 s: a busy node's simulation can be slow). */
  timeoutMs?: number;
  /** A larger answer is refused (default 64 MiB): a node must not make Keeper hold more. */
  maxAnswerBytes?: number;
  /** Connections kept open to the node (default 32). */
  maxSockets?: number;
}

/** The node's own refusal of a call: `code` is the JSON-RPC error code. */
export class JsonRpcError extends Error {
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.name = "JsonRpcError";
    this.code = code;
  }
}

export function createJsonRpc(url: string, options: JsonRpcOptions = {}): JsonRpc {
  const target = new URL(url);
  const isHttps = target.protocol === "https:";
  const send = isHttps ? httpsRequest : httpRequest;
  const maxSockets = options.maxSockets ?? 32;
  const agent = isHttps
    ? new HttpsAgent({ keepAlive: true, maxSockets })
    : new HttpAgent({ keepAlive: true, maxSockets });
  const timeoutMs = options.timeoutMs ?? 30_000;
  const maxAnswerBytes = options.maxAnswerBytes ?? 64 * 1024 * 1024;
  let nextId = 1;

  return (method, params) => {
    const body = JSON.stringify({ jsonrpc: "2.0", id: nextId++, method, params });
    return new Promise((resolve, reject) => {
      const request = send(
        target,
        {
          method: "POST",
          agent,
          headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
          timeout: timeoutMs,
        },
        (response) => readAnswer(response, maxAnswerBytes).then(resolve, reject),
      );
      request.on("timeout", () =>
        request.destroy(new Error(`no answer from the RPC node in ${timeoutMs} ms`)),
      );
      // Only the error's code (ECONNREFUSED, ENOTFOUND, a reset): Node's message names the host, and
      // some providers put the key in the host name.
      request.on("error", (error: NodeJS.ErrnoException) =>
        reject(new Error(`RPC node unreachable (${error.code ?? error.message})`)),
      );
      request.end(body);
    });
  };
}

/** The answer's body, at most `maxAnswerBytes`, then its `result` (parseAnswer). */
function readAnswer(response: IncomingMessage, maxAnswerBytes: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    response.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxAnswerBytes)
        response.destroy(new Error(`RPC answer larger than ${maxAnswerBytes} bytes`));
      else chunks.push(chunk);
    });
    response.on("error", reject);
    response.on("end", () => {
      try {
        resolve(parseAnswer(response.statusCode ?? 0, Buffer.concat(chunks, size)));
      } catch (error) {
        reject(error);
      }
    });
  });
}

/** The `result` of a JSON-RPC answer, or its error as a JsonRpcError. */
function parseAnswer(status: number, body: Buffer): unknown {
  if (status >= 300 && status < 400)
    throw new Error(`RPC node answered HTTP ${status}, a redirect: set rpc.url to where it leads`);
  if (status < 200 || status >= 300) throw new Error(`RPC node answered HTTP ${status}`);
  let answer: unknown;
  try {
    answer = JSON.parse(body.toString("utf8"));
  } catch {
    throw new Error("RPC answer is not JSON");
  }
  if (typeof answer !== "object" || answer === null) throw new Error("RPC answer is not a JSON-RPC object");
  const { error, result } = answer as { error?: unknown; result?: unknown };
  if (error !== undefined && error !== null) {
    const { code, message } = error as { code?: unknown; message?: unknown };
    throw new JsonRpcError(
      typeof code === "number" ? code : -32603,
      typeof message === "string" ? message.slice(0, 500) : "RPC error without a message",
    );
  }
  if (!("result" in answer)) throw new Error("RPC answer has neither result nor error");
  return result;
}
