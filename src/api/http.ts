import { inspect } from "node:util";
import pRetry, { type RetryContext } from "p-retry";
import type { Logger } from "pino";
import type { z } from "zod";
import { ConfigError } from "../core/errors.js";
import { type EndpointDef, type EndpointName, endpoints } from "./endpoints.js";
import { parseErrorBody, shorten } from "./error-body.js";
import {
  type Delivery,
  NetworkError,
  PermanentApiError,
  RateLimitedError,
  TimeoutError,
  TransientApiError,
  ValidationError,
} from "./errors.js";
import { type HttpAnswer, type SendHttp, sendOverNodeHttp } from "./node-http.js";
import type { RequestRateLimiter } from "./rate-limiter.js";
import { buildUrl, encodeJsonBody } from "./request-url.js";
import { retryAfterMs, serverRequestedDelayMs } from "./retry-after.js";
import { sleep } from "./sleep.js";
import { listItemsAt, parseOrThrow, parseSkippingItems } from "./validate.js";

type Def<N extends EndpointName> = (typeof endpoints)[N];
/** What a caller passes: the schemas' input types (before defaults and transforms). */
export type ParamsInput<N extends EndpointName> =
  Def<N> extends { params: infer P extends z.ZodType } ? z.input<P> : never;
export type BodyInput<N extends EndpointName> =
  Def<N> extends { body: infer B extends z.ZodType } ? z.input<B> : never;
/** What a caller gets back: the response schema's output, unknown fields kept. */
export type ResponseOf<N extends EndpointName> = z.output<Def<N>["response"]>;

export interface RequestInput<N extends EndpointName> {
  readonly params?: ParamsInput<N>;
  readonly body?: BodyInput<N>;
}

/** One attempt's outcome, for metrics: the client counts nothing itself. */
export interface RequestObservation {
  readonly endpoint: EndpointName;
  /** HTTP status; undefined when no answer came (network error, timeout). */
  readonly status: number | undefined;
  readonly durationMs: number;
  readonly rateLimited: boolean;
  readonly outcome: "ok" | "http_error" | "invalid_response" | "network_error" | "timeout";
  readonly attempt: number;
}

export interface TransportHooks {
  onRequest?(observation: RequestObservation): void;
  /** Items of a list answer left out because they broke the schema (see `skippableItems`). */
  onItemsSkipped?(endpoint: EndpointName, count: number): void;
}

export interface HttpTransportOptions {
  readonly baseUrl: string;
  /** Absent: requests go without a key, at the service's keyless limits. */
  readonly apiKey?: string;
  /** Per attempt, from sending to the last byte of the answer. Default 10 s. */
  readonly timeoutMs?: number;
  /** Further attempts after the first, for failures that may be retried. Default 3. */
  readonly retries?: number;
  /** Backoff of the first retry when the service gave no delay; doubles each time, jittered ×1-2. */
  readonly minRetryDelayMs?: number;
  readonly maxRetryDelayMs?: number;
  /** A 429 asking for a longer wait than this is surfaced at once instead of waited out. Default 60 s. */
  readonly maxRetryAfterMs?: number;
  readonly rateLimiter?: RequestRateLimiter;
  readonly logger?: Logger;
  readonly hooks?: TransportHooks;
  /** How a request goes out: Node's HTTP by default (node-http.ts); tests pass a spy, or fetch itself. */
  readonly send?: SendHttp;
}

export interface CallOptions {
  /** Cancels waiting, sending and retrying. */
  readonly signal?: AbortSignal;
}

/**
 * The fewest items a list answer may hold before it is refused, whatever the request asked for: a
 * service that serves a longer page than asked (the live one may read a range its own way) is
 * followed; one that floods a page with thousands of items is not read item by item.
 */
export const MAX_LIST_ITEMS = 1_000;
/** How many times the items asked for a list answer may hold, above MAX_LIST_ITEMS. */
const LIST_ITEMS_MARGIN = 10;

/** Skipped list items logged one by one; the rest are only counted. */
const LOGGED_SKIPPED_ITEMS = 3;

/**
 * The most items a list answer may hold: ten times what the request asks for (`end - start`, else its
 * `limit`), and never fewer than MAX_LIST_ITEMS. An answer holding more is refused before it is read
 * item by item.
 */
function itemsAskedFor(params: Record<string, unknown> | undefined): number {
  const start = params?.start;
  const end = params?.end;
  let asked = 0;
  if (typeof start === "number" && typeof end === "number" && end > start) asked = end - start;
  else if (typeof params?.limit === "number" && params.limit > 0) asked = params.limit;
  return Math.max(asked * LIST_ITEMS_MARGIN, MAX_LIST_ITEMS);
}

/** Connection failures that happen before a request is written: safe to retry for any endpoint. */
const NOT_SENT_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "UND_ERR_CONNECT_TIMEOUT",
]);

function errorCodes(error: unknown): string[] {
  const cause = (error as { cause?: unknown })?.cause;
  if (cause === null || typeof cause !== "object") return [];
  const own = (cause as { code?: unknown }).code;
  const nested = (cause as { errors?: unknown }).errors;
  const codes = typeof own === "string" ? [own] : [];
  if (Array.isArray(nested))
    for (const e of nested) if (typeof e?.code === "string") codes.push(e.code as string);
  return codes;
}

function deliveryOf(error: unknown): Delivery {
  const codes = errorCodes(error);
  return codes.length > 0 && codes.every((c) => NOT_SENT_CODES.has(c)) ? "not-sent" : "maybe-sent";
}

/**
 * The one place where Keeper talks HTTP to the service: auth header, validation both ways, timeout,
 * rate limit, retries, and the translation of every failure into a typed error.
 */
export class HttpTransport {
  readonly baseUrl: string;
  // Private fields do not show in util.inspect, JSON or object spreads; the key lives only here.
  readonly #apiKey: string | undefined;
  readonly #timeoutMs: number;
  readonly #retries: number;
  readonly #minRetryDelayMs: number;
  readonly #maxRetryDelayMs: number;
  readonly #maxRetryAfterMs: number;
  readonly #limiter: RequestRateLimiter | undefined;
  readonly #logger: Logger | undefined;
  readonly #hooks: TransportHooks | undefined;
  readonly #send: SendHttp;

  constructor(options: HttpTransportOptions) {
    if (options.apiKey !== undefined && options.apiKey.trim() === "")
      throw new ConfigError(["api.apiKey: is blank (leave it unset to use the keyless limits)"]);
    try {
      new URL(options.baseUrl);
    } catch {
      throw new ConfigError([
        `api.baseUrl: expected an absolute URL, got ${JSON.stringify(options.baseUrl)}`,
      ]);
    }
    this.baseUrl = options.baseUrl;
    this.#apiKey = options.apiKey;
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    this.#retries = options.retries ?? 3;
    this.#minRetryDelayMs = options.minRetryDelayMs ?? 250;
    this.#maxRetryDelayMs = options.maxRetryDelayMs ?? 10_000;
    this.#maxRetryAfterMs = options.maxRetryAfterMs ?? 60_000;
    this.#limiter = options.rateLimiter;
    this.#logger = options.logger;
    this.#hooks = options.hooks;
    this.#send = options.send ?? sendOverNodeHttp;
  }

  [inspect.custom](): string {
    const key = this.#apiKey === undefined ? "none" : "[redacted]";
    return `HttpTransport { baseUrl: ${JSON.stringify(this.baseUrl)}, apiKey: ${key} }`;
  }

  toJSON(): { baseUrl: string } {
    return { baseUrl: this.baseUrl };
  }

  /**
   * Validates the input (nothing is sent if it breaks a rule), sends with retries where they are safe,
   * and returns the answer validated against the endpoint's response schema.
   */
  async request<N extends EndpointName>(
    name: N,
    input: RequestInput<N> = {},
    options: CallOptions = {},
  ): Promise<ResponseOf<N>> {
    const def: EndpointDef = endpoints[name];
    const params = def.params
      ? (parseOrThrow(def.params, input.params ?? {}, name, "request", "(params)") as Record<string, unknown>)
      : undefined;
    const body = def.body ? parseOrThrow(def.body, input.body, name, "request", "(body)") : undefined;
    const url = buildUrl(this.baseUrl, def.path, params);
    const bodyText = body === undefined ? undefined : encodeJsonBody(body);
    const maxItems = def.skippableItems ? itemsAskedFor(params) : undefined;

    // A 429 with a stated delay is waited out exactly (plus a little jitter), without eating into the
    // retry budget of real failures; these counters bound it separately.
    let serverDelayMs = 0;
    let rateLimitedRetries = 0;
    const shouldRetry = ({ error, attemptNumber }: RetryContext): boolean => {
      const retry = this.#mayRetry(def, error, rateLimitedRetries);
      if (retry && error instanceof RateLimitedError) rateLimitedRetries += 1;
      if (retry && error instanceof TransientApiError && error.retryAfterMs !== undefined)
        serverDelayMs = error.retryAfterMs + jitterMs(error.retryAfterMs);
      this.#logger?.[retry ? "warn" : "debug"](
        { endpoint: name, attempt: attemptNumber, error: error.name, serverDelayMs },
        retry ? "api request failed, retrying" : "api request failed, not retrying",
      );
      return retry;
    };

    return pRetry(
      async (attempt) => {
        if (serverDelayMs > 0) {
          await sleep(serverDelayMs, options.signal);
          serverDelayMs = 0;
        }
        const grant = await this.#limiter?.acquire(options.signal);
        try {
          return (await this.#attempt(
            def,
            url,
            bodyText,
            maxItems,
            attempt,
            options.signal,
          )) as ResponseOf<N>;
        } finally {
          grant?.answered();
        }
      },
      {
        retries: this.#retries,
        factor: 2,
        minTimeout: this.#minRetryDelayMs,
        maxTimeout: this.#maxRetryDelayMs,
        randomize: true,
        signal: options.signal,
        shouldConsumeRetry: ({ error }) =>
          !(error instanceof RateLimitedError && error.retryAfterMs !== undefined),
        shouldRetry,
      },
    );
  }

  /** The retry rule: only what cannot have taken effect, or what is safe to repeat. */
  #mayRetry(def: EndpointDef, error: Error, rateLimitedRetries: number): boolean {
    if (error instanceof RateLimitedError) {
      // Nothing took effect on a 429, whatever the endpoint.
      if (rateLimitedRetries >= this.#retries) return false;
      return error.retryAfterMs === undefined || error.retryAfterMs <= this.#maxRetryAfterMs;
    }
    if (error instanceof NetworkError) return def.idempotent || error.delivery === "not-sent";
    if (error instanceof TransientApiError)
      return (
        def.idempotent && (error.retryAfterMs === undefined || error.retryAfterMs <= this.#maxRetryAfterMs)
      );
    if (error instanceof TimeoutError) return def.idempotent;
    return false;
  }

  async #attempt(
    def: EndpointDef,
    url: URL,
    bodyText: string | undefined,
    maxItems: number | undefined,
    attempt: number,
    callerSignal: AbortSignal | undefined,
  ): Promise<unknown> {
    const endpoint = def.name as EndpointName;
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    const signal = callerSignal ? AbortSignal.any([timeout, callerSignal]) : timeout;
    const started = performance.now();
    const observe = (
      status: number | undefined,
      outcome: RequestObservation["outcome"],
      requestId?: string,
    ): void => {
      const durationMs = Math.round(performance.now() - started);
      this.#logger?.debug({ endpoint, status, durationMs, requestId, attempt, outcome }, "api request");
      try {
        this.#hooks?.onRequest?.({
          endpoint,
          status,
          durationMs,
          rateLimited: status === 429,
          outcome,
          attempt,
        });
      } catch (hookError) {
        // A metrics bug must not fail a request.
        this.#logger?.warn({ endpoint, error: (hookError as Error).name }, "api onRequest hook threw");
      }
    };
    const noAnswer = (error: unknown): Error => {
      if (callerSignal?.aborted) return callerSignal.reason as Error;
      if (timeout.aborted) {
        observe(undefined, "timeout");
        return new TimeoutError(endpoint, this.#timeoutMs);
      }
      observe(undefined, "network_error");
      const reason = this.#redact(errorCodes(error).join(",") || (error as Error).message || "unknown");
      return new NetworkError(endpoint, deliveryOf(error), reason, { cause: error });
    };

    let response: HttpAnswer;
    let text: string;
    try {
      response = await this.#send(url, {
        method: def.method,
        headers: {
          accept: "application/json",
          ...(this.#apiKey === undefined ? {} : { "x-api-key": this.#apiKey }),
          ...(bodyText === undefined ? {} : { "content-type": "application/json" }),
        },
        body: bodyText,
        // A redirect is never followed: it would take the x-api-key header on to wherever it points.
        redirect: "manual",
        signal,
      });
    } catch (error) {
      throw noAnswer(error);
    }
    try {
      text = await response.text();
    } catch (error) {
      // The status line arrived, so the request certainly reached the service.
      const failure = noAnswer(error);
      throw failure instanceof NetworkError
        ? new NetworkError(endpoint, "maybe-sent", failure.reason, { cause: error })
        : failure;
    }
    // The live service's gateway names it x-api-gateway-request-id; x-request-id is the spec's.
    // It goes into error messages, and so into the ledger: redacted and shortened like the body's fields.
    const headerRequestId =
      response.headers.get("x-api-gateway-request-id") ?? response.headers.get("x-request-id") ?? undefined;
    const requestId = headerRequestId === undefined ? undefined : shorten(this.#redact(headerRequestId));

    if (isRedirect(response.status)) {
      observe(response.status, "http_error", requestId);
      throw this.#redirectError(def, response, url, requestId);
    }
    if (response.status < 200 || response.status > 299) {
      observe(response.status, "http_error", requestId);
      const failure = this.#httpError(def, response, text, requestId);
      if (failure instanceof RateLimitedError) await this.#holdBackSenders(def, failure);
      throw failure;
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      observe(response.status, "invalid_response", requestId);
      throw new ValidationError(endpoint, "response", [
        { field: "(body)", rule: `not valid JSON (${text.length} bytes): ${(error as Error).message}` },
      ]);
    }
    try {
      const data = def.skippableItems
        ? this.#parseList(def, def.skippableItems, maxItems ?? MAX_LIST_ITEMS, json, requestId)
        : parseOrThrow(def.response, json, endpoint, "response", "(body)");
      observe(response.status, "ok", requestId);
      return data;
    } catch (error) {
      observe(response.status, "invalid_response", requestId);
      throw error;
    }
  }

  /**
   * A list answer less the items it cannot read, counted, a few of them logged with their fields. An
   * answer holding more items than were asked for is refused whole, before any item is read: each
   * item refused would otherwise cost a schema issue and a log line.
   */
  #parseList(
    def: EndpointDef,
    listKey: string,
    maxItems: number,
    json: unknown,
    requestId: string | undefined,
  ): unknown {
    const endpoint = def.name as EndpointName;
    const items = listItemsAt(json, listKey);
    if (items !== undefined && items.length > maxItems)
      throw new ValidationError(endpoint, "response", [
        {
          field: listKey,
          rule: `holds ${items.length} items, more than the ${maxItems} a page of this request may hold`,
        },
      ]);
    const { data, skipped } = parseSkippingItems(def.response, json, endpoint, listKey);
    if (skipped.length === 0) return data;
    this.#logger?.warn(
      {
        endpoint,
        requestId,
        skipped: skipped.length,
        items: skipped.slice(0, LOGGED_SKIPPED_ITEMS).map((item) => ({
          index: item.index,
          fields: item.issues.slice(0, 5).map((issue) => `${issue.field}: ${issue.rule}`),
        })),
      },
      "api list items skipped: they break the schema",
    );
    try {
      this.#hooks?.onItemsSkipped?.(endpoint, skipped.length);
    } catch (hookError) {
      this.#logger?.warn({ endpoint, error: (hookError as Error).name }, "api onItemsSkipped hook threw");
    }
    return data;
  }

  #httpError(
    def: EndpointDef,
    response: HttpAnswer,
    text: string,
    headerRequestId: string | undefined,
  ): Error {
    // The service may echo what it was sent: the key is taken out of the whole body before any field is
    // read (a cut field could otherwise keep part of it), and every field is shortened (error-body.ts).
    // A JSON escape (`\/`) can hide the key from the first pass; the fields as read are redacted again.
    const parsed = parseErrorBody(def.area, this.#redact(text), this.#redact(response.statusText));
    const redacted = (field: string | undefined) => (field === undefined ? undefined : this.#redact(field));
    const details = {
      status: response.status,
      code: redacted(parsed.code),
      endpoint: def.name,
      area: def.area,
      requestId: headerRequestId ?? redacted(parsed.requestId),
      param: redacted(parsed.param),
    };
    const message = this.#redact(parsed.message);
    if (response.status === 429) {
      return new RateLimitedError(details, message, serverRequestedDelayMs(response.headers, Date.now()));
    }
    if (response.status >= 500 || response.status === 408)
      return new TransientApiError(details, message, retryAfterMs(response.headers, Date.now()));
    return new PermanentApiError(details, message);
  }

  /**
   * A redirect, refused: the service has no reason to send one, and following it would hand the key
   * to another origin. The message names only where it pointed (scheme, host, port), never its path
   * or query, which may carry a token of its own.
   */
  #redirectError(def: EndpointDef, response: HttpAnswer, url: URL, requestId: string | undefined): Error {
    const location = response.headers.get("location");
    let target = "no Location";
    if (location !== null)
      try {
        target = new URL(location, url).origin;
      } catch {
        target = "an unreadable Location";
      }
    const details = {
      status: response.status,
      code: "redirect_refused",
      endpoint: def.name,
      area: def.area,
      requestId,
      param: undefined,
    };
    return new PermanentApiError(
      details,
      this.#redact(
        `the service answered with a redirect (to ${target}); not followed, so that the API key goes only to service.baseUrl`,
      ),
    );
  }

  /** Tells the shared limiter about a 429, so every sender of this key holds back, not only this one. */
  async #holdBackSenders(def: EndpointDef, error: RateLimitedError): Promise<void> {
    try {
      // Never longer than this client would wait itself: a stray `Retry-After: 3600` must not stall
      // every process of the fleet for an hour.
      await this.#limiter?.backOff(
        Math.min(error.retryAfterMs ?? this.#minRetryDelayMs, this.#maxRetryAfterMs),
      );
    } catch (limiterError) {
      this.#logger?.warn(
        { endpoint: def.name, error: (limiterError as Error).name },
        "rate limiter backOff failed",
      );
    }
  }

  #redact(text: string): string {
    return this.#apiKey === undefined ? text : text.split(this.#apiKey).join("[redacted]");
  }
}

function isRedirect(status: number): boolean {
  return status >= 300 && status < 400;
}

/** Up to 10 % (at most 1 s) on top of a server-stated wait, so a fleet does not return all at once. */
function jitterMs(baseMs: number): number {
  return 1 + Math.floor(Math.random() * Math.min(1000, baseMs * 0.1));
}
