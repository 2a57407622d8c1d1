import { PermanentError, TransientError } from "../core/errors.js";
import type { Area } from "../core/schemas/common.js";
import { shorten } from "./error-body.js";

/**
 * Typed failures of the API client. Each class sits under the core hierarchy so the rest of Keeper
 * branches on `TransientError` (retry later) versus `PermanentError` (fail the job), never on text.
 *
 * An HTTP error answer is an `ApiError`; which concrete class depends on whether trying again can help:
 * - `PermanentApiError` (4xx but 408 and 429): the request itself is wrong, unauthorised or refused.
 * - `TransientApiError` (5xx, 408): the service failed; the same request may succeed later.
 * - `RateLimitedError` (429): nothing took effect; wait `retryAfterMs` and try again.
 */
export interface ApiErrorDetails {
  readonly status: number;
  /** The service's own error code or type, when its body carries one. */
  readonly code: string | undefined;
  readonly endpoint: string;
  readonly area: Area;
  /** From the `x-request-id` header, else from the body (prediction's `request_id`). */
  readonly requestId: string | undefined;
  /** The parameter the service blames, when it names one (prediction's `param`). */
  readonly param: string | undefined;
}

/**
 * The error's message. Every part but the endpoint and status comes from the service's answer: the
 * transport redacts and shortens them (error-body.ts), and the fields are bounded here again, since
 * the message goes to logs, the ledger and the status page.
 */
function describe(d: ApiErrorDetails, serviceMessage: string): string {
  const code = d.code === undefined ? "" : ` ${shorten(d.code)}`;
  const param = d.param === undefined ? "" : ` (param ${shorten(d.param)})`;
  const requestId = d.requestId === undefined ? "" : ` [request ${shorten(d.requestId)}]`;
  return `${d.endpoint}: HTTP ${d.status}${code}: ${serviceMessage}${param}${requestId}`;
}

export class PermanentApiError extends PermanentError implements ApiErrorDetails {
  override readonly name: string = "PermanentApiError";
  readonly status: number;
  readonly code: string | undefined;
  readonly endpoint: string;
  readonly area: Area;
  readonly requestId: string | undefined;
  readonly param: string | undefined;
  /** The service's message, without the endpoint and status prefix. */
  readonly serviceMessage: string;
  constructor(details: ApiErrorDetails, serviceMessage: string) {
    super(describe(details, serviceMessage));
    ({
      status: this.status,
      code: this.code,
      endpoint: this.endpoint,
      area: this.area,
      requestId: this.requestId,
      param: this.param,
    } = details);
    this.serviceMessage = serviceMessage;
  }
}

export class TransientApiError extends TransientError implements ApiErrorDetails {
  override readonly name: string = "TransientApiError";
  readonly status: number;
  readonly code: string | undefined;
  readonly endpoint: string;
  readonly area: Area;
  readonly requestId: string | undefined;
  readonly param: string | undefined;
  readonly serviceMessage: string;
  /** How long the service asked us to wait before trying again (429, or a 503 with Retry-After). */
  readonly retryAfterMs: number | undefined;
  constructor(details: ApiErrorDetails, serviceMessage: string, retryAfterMs?: number) {
    super(describe(details, serviceMessage));
    this.retryAfterMs = retryAfterMs;
    ({
      status: this.status,
      code: this.code,
      endpoint: this.endpoint,
      area: this.area,
      requestId: this.requestId,
      param: this.param,
    } = details);
    this.serviceMessage = serviceMessage;
  }
}

export class RateLimitedError extends TransientApiError {
  override readonly name: string = "RateLimitedError";
  /** Retry-After, else x-ratelimit-reset; undefined if the service did not say. */
  constructor(details: ApiErrorDetails, serviceMessage: string, retryAfterMs: number | undefined) {
    super(details, serviceMessage, retryAfterMs);
  }
}

/**
 * `err instanceof ApiError` holds for every HTTP error answer, transient or permanent. It is a
 * type-only umbrella: the concrete classes above are what is thrown.
 */
export type ApiError = PermanentApiError | TransientApiError;
export const ApiError = {
  [Symbol.hasInstance](value: unknown): value is ApiError {
    return value instanceof PermanentApiError || value instanceof TransientApiError;
  },
} as const;

/** Whether a request that failed may still have reached the service (and so may have taken effect). */
export type Delivery = "not-sent" | "maybe-sent";

/** No answer: the connection failed or broke. */
export class NetworkError extends TransientError {
  override readonly name: string = "NetworkError";
  readonly endpoint: string;
  readonly delivery: Delivery;
  /** What failed (error codes, or the cause's message), without the endpoint and delivery prefix. */
  readonly reason: string;
  constructor(endpoint: string, delivery: Delivery, reason: string, options?: ErrorOptions) {
    super(
      `${endpoint}: network error (${delivery === "not-sent" ? "not sent" : "may have been sent"}): ${reason}`,
      options,
    );
    this.endpoint = endpoint;
    this.delivery = delivery;
    this.reason = reason;
  }
}

/** No complete answer within the per-request timeout. The request may have reached the service. */
export class TimeoutError extends TransientError {
  override readonly name: string = "TimeoutError";
  readonly endpoint: string;
  readonly timeoutMs: number;
  constructor(endpoint: string, timeoutMs: number) {
    super(`${endpoint}: no complete answer within ${timeoutMs} ms`);
    this.endpoint = endpoint;
    this.timeoutMs = timeoutMs;
  }
}

export interface ValidationIssue {
  /** `data[3].pnlUsd`, `params.time.numberOfOrders`; `(body)` for a body that is not JSON at all. */
  readonly field: string;
  readonly rule: string;
}

/**
 * Input the client refused before sending anything (`phase: "request"`), or an answer that breaks the
 * schema or is not JSON (`phase: "response"`). Either way trying again unchanged cannot help.
 */
export class ValidationError extends PermanentError {
  override readonly name: string = "ValidationError";
  readonly endpoint: string;
  readonly phase: "request" | "response";
  readonly issues: readonly ValidationIssue[];
  constructor(endpoint: string, phase: "request" | "response", issues: readonly ValidationIssue[]) {
    const shown = issues.slice(0, 5).map((i) => `${i.field}: ${i.rule}`);
    const more = issues.length > shown.length ? `; and ${issues.length - shown.length} more` : "";
    super(`${endpoint}: ${phase === "response" ? "response " : ""}${shown.join("; ")}${more}`);
    this.endpoint = endpoint;
    this.phase = phase;
    this.issues = issues;
  }
  /** The first offending field: what a caller usually reports. */
  get field(): string {
    return this.issues[0]?.field ?? "";
  }
  get rule(): string {
    return this.issues[0]?.rule ?? "";
  }
}

/** A paginated endpoint stopped making progress (a server bug that would otherwise loop forever). */
export class PaginationError extends PermanentError {
  override readonly name: string = "PaginationError";
}
