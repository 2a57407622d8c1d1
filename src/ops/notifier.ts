import pRetry, { AbortError } from "p-retry";
import type { Logger } from "pino";
import {
  buildPayload,
  dedupeKey,
  type NotificationEvent,
  type NotificationKind,
} from "./notification-message.js";
import type { SecretScrubber } from "./secret-scrubber.js";

export type { NotificationEvent, NotificationKind } from "./notification-message.js";

export type NotificationOutcome = "delivered" | "failed" | "dropped" | "suppressed";

export interface NotifierOptions {
  /** The webhook URL embeds a token: it is used for requests and never logged or returned. */
  webhookUrl: string;
  logger: Logger;
  /** Which events are sent; all when omitted. */
  events?: readonly NotificationKind[];
  /** Messages waiting beyond this are dropped (and counted) rather than held in memory. Default 100. */
  maxQueue?: number;
  /** Retries after the first attempt. Default 4. */
  retries?: number;
  /** First retry delay; doubles each time up to `maxRetryDelayMs`. Default 500 ms. */
  minRetryDelayMs?: number;
  maxRetryDelayMs?: number;
  /** Per attempt. Default 5,000 ms. */
  requestTimeoutMs?: number;
  /** The same event key is sent at most once per window. Default 10 minutes. */
  duplicateWindowMs?: number;
  /** Called for every outcome, e.g. to count it in metrics. */
  countOutcome?: (outcome: NotificationOutcome) => void;
  /** Scrubs known secrets from each payload before it leaves (free-text error details). */
  scrubber?: SecretScrubber;
  now?: () => number;
  fetch?: typeof fetch;
}

/** A status worth another attempt: the receiver's trouble or its rate limit, not our request. */
function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

class WebhookStatusError extends Error {
  override readonly name = "WebhookStatusError";
  readonly status: number;
  constructor(status: number) {
    super(`webhook answered HTTP ${status}`);
    this.status = status;
  }
}

interface Pending {
  kind: NotificationKind;
  key: string;
  body: string;
}

/**
 * Webhook notifications that never hold up the work: `notify` only enqueues and returns; one
 * background loop delivers in order, with bounded retries. The queue is bounded too, so a dead
 * receiver costs a counter, not memory.
 */
export class Notifier {
  readonly #options: NotifierOptions;
  readonly #logger: Logger;
  readonly #events: ReadonlySet<NotificationKind> | undefined;
  readonly #now: () => number;
  readonly #fetch: typeof fetch;
  readonly #queue: Pending[] = [];
  readonly #lastAccepted = new Map<string, number>();
  #draining: Promise<void> | undefined;
  #inFlight = 0;
  #abort = new AbortController();
  readonly #counts: Record<NotificationOutcome, number> = {
    delivered: 0,
    failed: 0,
    dropped: 0,
    suppressed: 0,
  };

  constructor(options: NotifierOptions) {
    this.#options = options;
    this.#logger = options.logger.child({ component: "notifier" });
    this.#events = options.events ? new Set(options.events) : undefined;
    this.#now = options.now ?? Date.now;
    this.#fetch = options.fetch ?? fetch;
  }

  /** Enqueues a message; returns at once and never throws. */
  notify(event: NotificationEvent): void {
    try {
      this.#enqueue(event);
    } catch (error) {
      // A notification is never worth failing the work that triggered it.
      this.#logger.error({ err: error, event: event.kind }, "notification not enqueued");
    }
  }

  /** Outcomes so far, and how many messages are still waiting. */
  stats(): Readonly<Record<NotificationOutcome, number>> & { pending: number } {
    return { ...this.#counts, pending: this.#queue.length + this.#inFlight };
  }

  /**
   * For shutdown: waits up to `timeoutMs` for every queued message to be delivered or to fail.
   * Then the message in flight is aborted (counted as failed) and the queued ones are abandoned
   * (counted as dropped). True when everything was settled in time.
   */
  async flush(timeoutMs: number): Promise<boolean> {
    const draining = this.#draining;
    if (!draining) return true;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      draining.then(() => false),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if (!timedOut) return true;
    const abandoned = this.#queue.splice(0);
    for (let i = 0; i < abandoned.length; i++) this.#count("dropped");
    this.#abort.abort(new Error("notifier flushed"));
    await draining;
    this.#abort = new AbortController();
    this.#logger.warn({ abandoned: abandoned.length }, "notifications abandoned at flush");
    return false;
  }

  #enqueue(event: NotificationEvent): void {
    if (this.#events && !this.#events.has(event.kind)) return;
    const nowMs = this.#now();
    const key = dedupeKey(event);
    const windowMs = this.#options.duplicateWindowMs ?? 10 * 60_000;
    const last = this.#lastAccepted.get(key);
    if (last !== undefined && nowMs - last < windowMs) {
      this.#count("suppressed");
      return;
    }
    if (this.#queue.length >= (this.#options.maxQueue ?? 100)) {
      this.#count("dropped");
      this.#logger.debug({ event: event.kind }, "notification dropped, queue full");
      return;
    }
    this.#forgetExpired(nowMs, windowMs);
    this.#lastAccepted.set(key, nowMs);
    const json = JSON.stringify(buildPayload(this.#scrubbed(event), new Date(nowMs)));
    // Again on the whole body: what the message adds around the values is Keeper's, but cheap to check.
    const body = this.#options.scrubber ? this.#options.scrubber.scrub(json) : json;
    this.#queue.push({ kind: event.kind, key, body });
    this.#draining ??= this.#drain().finally(() => {
      this.#draining = undefined;
    });
  }

  /**
   * The event with known secrets cut out of its values, before the message escapes them: an escaped
   * or defanged secret (`rpc[.]example/<key>`) would no longer be found in the body.
   */
  #scrubbed(event: NotificationEvent): NotificationEvent {
    const scrubber = this.#options.scrubber;
    if (scrubber === undefined) return event;
    const entries = Object.entries(event).map(([name, value]) => [
      name,
      typeof value === "string" && name !== "kind" ? scrubber.scrub(value) : value,
    ]);
    return Object.fromEntries(entries) as NotificationEvent;
  }

  /** Keeps the duplicate map as small as the window allows. */
  #forgetExpired(nowMs: number, windowMs: number): void {
    if (this.#lastAccepted.size < 256) return;
    for (const [key, at] of this.#lastAccepted) if (nowMs - at >= windowMs) this.#lastAccepted.delete(key);
  }

  async #drain(): Promise<void> {
    // Yield first: the caller's own work continues before any delivery starts.
    await Promise.resolve();
    for (let next = this.#queue.shift(); next; next = this.#queue.shift()) {
      this.#inFlight++;
      try {
        await this.#deliver(next);
      } finally {
        this.#inFlight--;
      }
    }
  }

  async #deliver(message: Pending): Promise<void> {
    const signal = this.#abort.signal;
    let attempts = 0;
    try {
      await pRetry(
        async () => {
          attempts++;
          await this.#post(message.body, signal);
        },
        {
          retries: this.#options.retries ?? 4,
          minTimeout: this.#options.minRetryDelayMs ?? 500,
          maxTimeout: this.#options.maxRetryDelayMs ?? 10_000,
          factor: 2,
          randomize: true,
          signal,
          unref: true,
          onFailedAttempt: ({ error, retriesLeft }) => {
            this.#logger.debug(
              { event: message.kind, attempts, retriesLeft, failure: this.#describe(error) },
              "webhook attempt failed",
            );
          },
        },
      );
      this.#count("delivered");
    } catch (error) {
      this.#count("failed");
      // Let the next occurrence try again rather than be suppressed as a duplicate of a lost one.
      this.#lastAccepted.delete(message.key);
      this.#logger.warn(
        { event: message.kind, attempts, failure: this.#describe(error) },
        "notification not delivered",
      );
    }
  }

  async #post(body: string, signal: AbortSignal): Promise<void> {
    const timeout = AbortSignal.timeout(this.#options.requestTimeoutMs ?? 5_000);
    const response = await this.#fetch(this.#options.webhookUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
      signal: AbortSignal.any([signal, timeout]),
    });
    // Drain the body so the connection can be reused; its content is not needed.
    await response.arrayBuffer().catch(() => undefined);
    if (response.ok) return;
    const error = new WebhookStatusError(response.status);
    // A 4xx other than 408/429 means the URL or payload is wrong: retrying cannot help.
    if (!isRetryableStatus(response.status)) throw new AbortError(error);
    throw error;
  }

  /**
   * An error as a short string for the log, with the webhook URL (and its token path) cut out:
   * fetch errors can quote the URL they failed on.
   */
  #describe(error: unknown): string {
    const text = error instanceof Error ? `${error.name}: ${error.message}` : "unknown error";
    const cause = error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : "";
    return redactUrl(`${text}${cause}`, this.#options.webhookUrl);
  }

  #count(outcome: NotificationOutcome): void {
    this.#counts[outcome]++;
    this.#options.countOutcome?.(outcome);
  }
}

function redactUrl(text: string, url: string): string {
  let out = text.split(url).join("[webhook]");
  try {
    const { pathname, search } = new URL(url);
    if (pathname.length > 1) out = out.split(pathname).join("[webhook-path]");
    if (search.length > 1) out = out.split(search).join("[webhook-query]");
  } catch {
    // Not a parseable URL: the whole-string replacement above is all that applies.
  }
  return out;
}
