import type { Logger } from "pino";
import { HttpTransport, type TransportHooks } from "./http.js";
import type { SendHttp } from "./node-http.js";
import { type PredictionApi, predictionApi } from "./prediction.js";
import type { RequestRateLimiter } from "./rate-limiter.js";
import { type RecurringApi, recurringApi } from "./recurring.js";
import { type SendApi, sendApi } from "./send.js";
import { type SwapApi, swapApi } from "./swap.js";
import { type TokensApi, tokensApi } from "./tokens.js";
import { type TriggerApi, triggerApi } from "./trigger.js";

export interface ApiClientOptions {
  readonly baseUrl: string;
  /** Absent: no key is sent and the service applies its keyless limits. */
  readonly apiKey?: string;
  /** Per attempt. Default 10 s. */
  readonly timeoutMs?: number;
  /** Further attempts after the first, where a retry is safe. Default 3. */
  readonly retries?: number;
  readonly minRetryDelayMs?: number;
  readonly maxRetryDelayMs?: number;
  readonly maxRetryAfterMs?: number;
  /** Shared by every process using the same key (see `createRateLimiter`). */
  readonly rateLimiter?: RequestRateLimiter;
  readonly logger?: Logger;
  readonly hooks?: TransportHooks;
  /** How a request goes out; defaults to Node's HTTP with kept-alive connections (node-http.ts). */
  readonly send?: SendHttp;
}

export interface ApiClient {
  readonly prediction: PredictionApi;
  readonly tokens: TokensApi;
  readonly swap: SwapApi;
  readonly trigger: TriggerApi;
  readonly recurring: RecurringApi;
  readonly send: SendApi;
}

/** The typed client of every area, over one transport (one key, one limiter, one retry policy). */
export function createApiClient(options: ApiClientOptions): ApiClient {
  const http = new HttpTransport(options);
  return Object.freeze({
    prediction: predictionApi(http),
    tokens: tokensApi(http),
    swap: swapApi(http),
    trigger: triggerApi(http),
    recurring: recurringApi(http),
    send: sendApi(http),
  });
}
