import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { pipeline, type Readable, type Transform } from "node:stream";
import { createBrotliDecompress, createGunzip, createInflate, constants as zlib } from "node:zlib";

/**
 * How the transport reaches the service: one request over Node's own HTTP, connections kept alive.
 *
 * fetch cost about 190-260 us of CPU a request on this project's machines (a Request, Headers and web
 * streams for every call) against about 80-130 us for node:http; at a fleet's 100 requests a second,
 * and one build request a claim, that was the largest cost left in the transport. The answer keeps
 * the part of fetch's Response the transport reads, so a test may still pass fetch itself.
 */
export interface HttpAnswer {
  readonly status: number;
  readonly statusText: string;
  readonly headers: { get(name: string): string | null };
  text(): Promise<string>;
}

export interface HttpCall {
  readonly method: string;
  readonly headers: Record<string, string>;
  readonly body?: string | undefined;
  /** Never followed: the API key must not travel on to wherever a redirect points. */
  readonly redirect: "manual";
  readonly signal: AbortSignal;
}

export type SendHttp = (url: URL, call: HttpCall) => Promise<HttpAnswer>;

/** An answer larger than this is cut off: a service must not make Keeper hold more. */
export const MAX_ANSWER_BYTES = 64 * 1024 * 1024;

/**
 * An idle connection is closed after this long, or sooner when the service's `Keep-Alive: timeout`
 * says so (Node's agent honours the hint only under a timeout of its own): reusing a connection the
 * other side is closing fails the request with a reset.
 */
const IDLE_CONNECTION_MS = 4_000;

const agents = {
  http: new HttpAgent({ keepAlive: true, timeout: IDLE_CONNECTION_MS }),
  https: new HttpsAgent({ keepAlive: true, timeout: IDLE_CONNECTION_MS }),
};

/**
 * The request failed before a whole answer came; `cause` is Node's error, whose `code` (ECONNREFUSED,
 * ENOTFOUND, ...) the transport reads to tell "never sent" from "may have been sent", as it does for
 * fetch's failures.
 */
export class NoAnswerError extends Error {
  constructor(cause: unknown) {
    super(`no answer from the service: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = "NoAnswerError";
  }
}

export const sendOverNodeHttp: SendHttp = (url, call) =>
  new Promise((resolve, reject) => {
    const isHttps = url.protocol === "https:";
    const send = isHttps ? httpsRequest : httpRequest;
    // The codings fetch asked for, so the service sees the request it saw before; an answer in a coding
    // not asked for is still read (without the header any coding is allowed), or refused by name.
    const headers: Record<string, string | number> = {
      "accept-encoding": "gzip, deflate, br",
      ...call.headers,
    };
    if (call.body !== undefined) headers["content-length"] = Buffer.byteLength(call.body);
    const request = send(
      url,
      { method: call.method, headers, agent: isHttps ? agents.https : agents.http, signal: call.signal },
      (response) => resolve(answerOf(response)),
    );
    request.on("error", (error) => reject(new NoAnswerError(error)));
    request.end(call.body);
  });

function answerOf(response: IncomingMessage): HttpAnswer {
  // Read from the first byte on, so that a failure while the caller is not yet reading is not lost.
  const body = readBody(response);
  body.catch(() => undefined);
  return {
    status: response.statusCode ?? 0,
    statusText: response.statusMessage ?? "",
    headers: { get: (name) => headerText(response.headers[name.toLowerCase()]) },
    text: () => body,
  };
}

function headerText(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join(", ") : value;
}

/** The whole body as text (UTF-8, a leading byte-order mark dropped as fetch does), at most MAX_ANSWER_BYTES. */
function readBody(response: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const fail = (error: Error) => reject(new NoAnswerError(error));
    let decoded: Readable;
    try {
      decoded = decodedBody(response, fail);
    } catch (error) {
      response.destroy();
      return fail(error as Error);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let ended = false;
    decoded.on("data", (chunk: Buffer) => {
      // Counted after decoding: a small compressed answer must not unpack into more than the limit.
      size += chunk.length;
      if (size > MAX_ANSWER_BYTES) {
        const tooLarge = new Error(`the answer is larger than ${MAX_ANSWER_BYTES} bytes`);
        decoded.destroy(tooLarge);
        response.destroy(tooLarge);
      } else chunks.push(chunk);
    });
    decoded.on("end", () => {
      ended = true;
      const text = Buffer.concat(chunks, size).toString("utf8");
      resolve(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
    });
    decoded.on("error", fail);
    // A connection closed before the end, without an error of its own.
    decoded.on("close", () => {
      if (!ended) fail(new Error("the connection closed before the answer ended"));
    });
  });
}

// Flushed as they come, as fetch does: an empty body sent with a coding header (a 429 from a gateway,
// say) reads as empty instead of failing as an unfinished stream; corrupt bytes still fail.
const zlibFlush = { flush: zlib.Z_SYNC_FLUSH, finishFlush: zlib.Z_SYNC_FLUSH };
const brotliFlush = { flush: zlib.BROTLI_OPERATION_FLUSH, finishFlush: zlib.BROTLI_OPERATION_FLUSH };
const DECODERS: Readonly<Record<string, () => Transform>> = {
  gzip: () => createGunzip(zlibFlush),
  "x-gzip": () => createGunzip(zlibFlush),
  deflate: () => createInflate(zlibFlush),
  br: () => createBrotliDecompress(brotliFlush),
};

/** The body through the decoder its Content-Encoding names; a coding Keeper cannot read is refused. */
function decodedBody(response: IncomingMessage, fail: (error: Error) => void): Readable {
  const coding = headerText(response.headers["content-encoding"])?.trim().toLowerCase() ?? "identity";
  if (coding === "identity" || coding === "") return response;
  const decoder = Object.hasOwn(DECODERS, coding) ? DECODERS[coding]?.() : undefined;
  // The service's header, shortened: it goes into an error message.
  if (!decoder)
    throw new Error(
      `the answer's Content-Encoding "${coding.slice(0, 40)}" is not one Keeper reads (gzip, deflate, br)`,
    );
  // pipeline carries a failure of either side to the other (a dropped connection, corrupt bytes).
  pipeline(response, decoder, (error) => {
    if (error) fail(error);
  });
  return decoder;
}
