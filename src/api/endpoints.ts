import type { z } from "zod";
import type { Area } from "../core/schemas/common.js";
import * as s from "../core/schemas/index.js";

/**
 * Every endpoint of the service, once. The client and the sandbox both read this table, so a rule or
 * a field cannot differ between them without a test noticing.
 *
 * `params` validates path and query parameters together (path names appear in `path` as `:name`);
 * `body` validates the JSON body. `idempotent` marks requests that are safe to repeat after a network
 * error: every read, and builds of unsigned transactions (nothing takes effect until Keeper signs).
 * Execute endpoints submit a signed transaction and are never repeated blindly.
 */
export interface EndpointDef {
  readonly name: string;
  readonly area: Area;
  readonly method: "GET" | "POST" | "DELETE";
  readonly path: string;
  readonly params?: z.ZodType;
  readonly body?: z.ZodType;
  readonly response: z.ZodType;
  readonly idempotent: boolean;
  /**
   * Where a list answer keeps its items (`data`, `invites`, or `(root)` for a bare array): an item
   * that breaks the schema is skipped and counted rather than losing the whole answer. Only reads
   * have it. Close-all has not: each of its items is a transaction Keeper signs, and one it cannot
   * read fails the close-all (retried) rather than letting it pass as done with a position left open.
   */
  readonly skippableItems?: "data" | "invites" | "(root)";
  /** Calls that use no rate-limit credits on the live service (prediction execute, api-live). */
  readonly uncounted?: boolean;
}

const def = <const D extends EndpointDef>(d: D): D => d;

export const endpoints = {
  listEvents: def({
    name: "listEvents",
    skippableItems: "data",
    area: "prediction",
    method: "GET",
    path: "/prediction/v1/events",
    params: s.listEventsParams,
    response: s.eventsPageSchema,
    idempotent: true,
  }),
  searchEvents: def({
    name: "searchEvents",
    skippableItems: "data",
    area: "prediction",
    method: "GET",
    path: "/prediction/v1/events/search",
    params: s.searchEventsParams,
    response: s.eventSearchResponseSchema,
    idempotent: true,
  }),
  getEvent: def({
    name: "getEvent",
    area: "prediction",
    method: "GET",
    path: "/prediction/v1/events/:eventId",
    params: s.getEventParams,
    response: s.eventSchema,
    idempotent: true,
  }),
  listEventMarkets: def({
    name: "listEventMarkets",
    skippableItems: "data",
    area: "prediction",
    method: "GET",
    path: "/prediction/v1/events/:eventId/markets",
    params: s.listEventMarketsParams,
    response: s.marketsPageSchema,
    idempotent: true,
  }),
  getEventMarket: def({
    name: "getEventMarket",
    area: "prediction",
    method: "GET",
    path: "/prediction/v1/events/:eventId/markets/:marketId",
    params: s.getEventMarketParams,
    response: s.marketSchema,
    idempotent: true,
  }),
  getMarket: def({
    name: "getMarket",
    area: "prediction",
    method: "GET",
    path: "/prediction/v1/markets/:marketId",
    params: s.getMarketParams,
    response: s.marketSchema,
    idempotent: true,
  }),
  listPositions: def({
    name: "listPositions",
    skippableItems: "data",
    area: "prediction",
    method: "GET",
    path: "/prediction/v1/positions",
    params: s.listPositionsParams,
    response: s.positionsPageSchema,
    idempotent: true,
  }),
  /** One position by its account (api-live); a read before selling uses it. 404 when unknown. */
  getPosition: def({
    name: "getPosition",
    area: "prediction",
    method: "GET",
    path: "/prediction/v1/positions/:positionPubkey",
    params: s.positionPathParams,
    response: s.positionSchema,
    idempotent: true,
  }),
  listOrders: def({
    name: "listOrders",
    skippableItems: "data",
    area: "prediction",
    method: "GET",
    path: "/prediction/v1/orders",
    params: s.listOrdersParams,
    response: s.ordersPageSchema,
    idempotent: true,
  }),
  listHistory: def({
    name: "listHistory",
    skippableItems: "data",
    area: "prediction",
    method: "GET",
    path: "/prediction/v1/history",
    params: s.listHistoryParams,
    response: s.historyPageSchema,
    idempotent: true,
  }),
  closeAllPositions: def({
    name: "closeAllPositions",
    area: "prediction",
    method: "DELETE",
    path: "/prediction/v1/positions",
    body: s.closeAllBody,
    response: s.closeAllResponseSchema,
    idempotent: true,
  }),
  closePosition: def({
    name: "closePosition",
    area: "prediction",
    method: "DELETE",
    path: "/prediction/v1/positions/:positionPubkey",
    params: s.positionPathParams,
    body: s.closePositionBody,
    response: s.closePreviewSchema,
    idempotent: true,
  }),
  claimPosition: def({
    name: "claimPosition",
    area: "prediction",
    method: "POST",
    path: "/prediction/v1/positions/:positionPubkey/claim",
    params: s.positionPathParams,
    body: s.claimBody,
    response: s.claimPreviewSchema,
    idempotent: true,
  }),
  createOrder: def({
    name: "createOrder",
    area: "prediction",
    method: "POST",
    path: "/prediction/v1/orders",
    body: s.createOrderBody,
    response: s.createOrderResponseSchema,
    idempotent: true,
  }),
  executePrediction: def({
    name: "executePrediction",
    area: "prediction",
    method: "POST",
    path: "/prediction/v1/execute",
    body: s.predictionExecuteBody,
    response: s.predictionExecuteResponseSchema,
    idempotent: false,
    uncounted: true,
  }),
  executeOrder: def({
    name: "executeOrder",
    area: "prediction",
    method: "POST",
    path: "/prediction/v1/orders/execute",
    body: s.orderExecuteBody,
    response: s.orderExecuteResponseSchema,
    idempotent: false,
    uncounted: true,
  }),
  leaderboards: def({
    name: "leaderboards",
    skippableItems: "data",
    area: "prediction",
    method: "GET",
    path: "/prediction/v1/leaderboards",
    params: s.leaderboardParams,
    response: s.leaderboardResponseSchema,
    idempotent: true,
  }),
  searchTokens: def({
    name: "searchTokens",
    skippableItems: "(root)",
    area: "ultra",
    method: "GET",
    path: "/ultra/v1/search",
    params: s.tokenSearchParams,
    response: s.tokenSearchResponseSchema,
    idempotent: true,
  }),
  buildSwap: def({
    name: "buildSwap",
    area: "swap",
    method: "GET",
    path: "/swap/v2/build",
    params: s.swapBuildParams,
    response: s.swapBuildResponseSchema,
    idempotent: true,
  }),
  createTriggerOrder: def({
    name: "createTriggerOrder",
    area: "trigger",
    method: "POST",
    path: "/trigger/v1/createOrder",
    body: s.triggerCreateBody,
    response: s.triggerCreateResponseSchema,
    idempotent: true,
  }),
  cancelTriggerOrder: def({
    name: "cancelTriggerOrder",
    area: "trigger",
    method: "POST",
    path: "/trigger/v1/cancelOrder",
    body: s.triggerCancelBody,
    response: s.triggerCancelResponseSchema,
    idempotent: true,
  }),
  cancelTriggerOrders: def({
    name: "cancelTriggerOrders",
    area: "trigger",
    method: "POST",
    path: "/trigger/v1/cancelOrders",
    body: s.triggerCancelManyBody,
    response: s.triggerCancelManyResponseSchema,
    idempotent: true,
  }),
  getTriggerOrders: def({
    name: "getTriggerOrders",
    area: "trigger",
    method: "GET",
    path: "/trigger/v1/getTriggerOrders",
    params: s.triggerOrdersParams,
    response: s.triggerOrdersResponseSchema,
    idempotent: true,
  }),
  executeTrigger: def({
    name: "executeTrigger",
    area: "trigger",
    method: "POST",
    path: "/trigger/v1/execute",
    body: s.executeBody,
    response: s.triggerExecuteResponseSchema,
    idempotent: false,
  }),
  createRecurringOrder: def({
    name: "createRecurringOrder",
    area: "recurring",
    method: "POST",
    path: "/recurring/v1/createOrder",
    body: s.recurringCreateBody,
    response: s.recurringCreateResponseSchema,
    idempotent: true,
  }),
  cancelRecurringOrder: def({
    name: "cancelRecurringOrder",
    area: "recurring",
    method: "POST",
    path: "/recurring/v1/cancelOrder",
    body: s.recurringCancelBody,
    response: s.recurringCancelResponseSchema,
    idempotent: true,
  }),
  getRecurringOrders: def({
    name: "getRecurringOrders",
    area: "recurring",
    method: "GET",
    path: "/recurring/v1/getRecurringOrders",
    params: s.recurringOrdersParams,
    response: s.recurringOrdersResponseSchema,
    idempotent: true,
  }),
  executeRecurring: def({
    name: "executeRecurring",
    area: "recurring",
    method: "POST",
    path: "/recurring/v1/execute",
    body: s.executeBody,
    response: s.recurringExecuteResponseSchema,
    idempotent: false,
  }),
  inviteHistory: def({
    name: "inviteHistory",
    skippableItems: "invites",
    area: "send",
    method: "GET",
    path: "/send/v1/invite-history",
    params: s.inviteHistoryParams,
    response: s.inviteHistoryResponseSchema,
    idempotent: true,
  }),
} as const satisfies Record<string, EndpointDef>;

export type EndpointName = keyof typeof endpoints;
