export { type ApiClient, type ApiClientOptions, createApiClient } from "./client.js";
export { type EndpointDef, type EndpointName, endpoints } from "./endpoints.js";
export {
  ApiError,
  type ApiErrorDetails,
  type Delivery,
  NetworkError,
  PaginationError,
  PermanentApiError,
  RateLimitedError,
  TimeoutError,
  TransientApiError,
  ValidationError,
  type ValidationIssue,
} from "./errors.js";
export {
  type BodyInput,
  type CallOptions,
  HttpTransport,
  type HttpTransportOptions,
  type ParamsInput,
  type RequestObservation,
  type ResponseOf,
  type TransportHooks,
} from "./http.js";
export {
  collectAll,
  collectUnique,
  iterateEventMarkets,
  iterateEvents,
  iterateHistory,
  iterateInvites,
  iterateOrders,
  iteratePositions,
  type Page,
  type PageOptions,
  paginate,
} from "./pagination.js";
export {
  ApiRateLimiter,
  apiKeyFingerprint,
  chargedTo,
  createRateLimiter,
  PriorityLanes,
  type QueuedPlan,
  type RateGrant,
  type RateLimiterOptions,
  type RequestRateLimiter,
  slowerWhile,
  withinShare,
} from "./rate-limiter.js";
export { SlidingWindowLimiter, type SlidingWindowOptions, slidingBudget } from "./sliding-window.js";
