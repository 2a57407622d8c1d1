import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EndpointName, endpoints } from "../../../src/api/endpoints.js";
import { expectAreaError } from "./error-shapes.js";
import { MINT_A, MINT_B, PK, type RunningServer, startTestServer } from "./http-harness.js";

/** One violated rule: the request that breaks it and the parameter the 400 must name. */
interface RuleCase {
  readonly endpoint: EndpointName;
  readonly rule: string;
  /** Path with its parameters filled in (an empty segment is an empty id). */
  readonly path?: string;
  readonly query?: Record<string, string>;
  readonly body?: unknown;
  readonly param: string;
  readonly says?: string;
}

const swap = { inputMint: MINT_A, outputMint: MINT_B, amount: "1000", taker: PK };
const trigger = {
  inputMint: MINT_A,
  outputMint: MINT_B,
  maker: PK,
  payer: PK,
  params: { makingAmount: "1000", takingAmount: "2000" },
};
const cancel = { maker: PK, order: MINT_A };
const time = { inAmount: 200_000_000, numberOfOrders: 2, interval: 86_400 };
const price = { depositAmount: 200_000_000, incrementUsdcValue: 50, interval: 86_400 };
const recurring = { user: PK, inputMint: MINT_A, outputMint: MINT_B, params: { time } };
const execute = { requestId: "req-1", signedTransaction: "AQAB" };
const owner = { ownerPubkey: PK };

const without = <T extends object>(value: T, key: keyof T) => {
  const copy = { ...value };
  delete copy[key];
  return copy;
};

/** Inputs each endpoint accepts; every rule case below changes one thing in them. */
const valid: { [N in EndpointName]: { path?: string; query?: Record<string, string>; body?: unknown } } = {
  listEvents: {},
  searchEvents: { query: { query: "bitcoin" } },
  getEvent: { path: "/prediction/v1/events/evt-1" },
  listEventMarkets: { path: "/prediction/v1/events/evt-1/markets" },
  getEventMarket: { path: "/prediction/v1/events/evt-1/markets/mkt-1" },
  getMarket: { path: "/prediction/v1/markets/mkt-1" },
  listPositions: { query: { ownerPubkey: PK } },
  getPosition: { path: `/prediction/v1/positions/${MINT_A}` },
  listOrders: { query: { ownerPubkey: PK } },
  listHistory: { query: { ownerPubkey: PK } },
  closeAllPositions: { body: { ...owner, minSellPriceSlippageBps: 100 } },
  closePosition: { path: `/prediction/v1/positions/${MINT_A}`, body: owner },
  claimPosition: { path: `/prediction/v1/positions/${MINT_A}/claim`, body: owner },
  createOrder: {
    body: { ...owner, marketId: "mkt-1", isYes: true, isBuy: true, depositAmount: "5000000" },
  },
  executePrediction: { body: { signedTransaction: "AQAB" } },
  executeOrder: { body: { signedTransaction: "AQAB" } },
  leaderboards: {},
  searchTokens: { query: { query: "SOL" } },
  buildSwap: { query: swap },
  createTriggerOrder: { body: trigger },
  cancelTriggerOrder: { body: cancel },
  cancelTriggerOrders: { body: { maker: PK, orders: [MINT_A, MINT_B] } },
  getTriggerOrders: { query: { user: PK, orderStatus: "active" } },
  executeTrigger: { body: execute },
  createRecurringOrder: { body: recurring },
  cancelRecurringOrder: { body: { user: PK, order: MINT_A } },
  getRecurringOrders: { query: { user: PK, orderStatus: "history", recurringType: "all" } },
  executeRecurring: { body: execute },
  inviteHistory: { query: { address: PK } },
};

const q = (endpoint: EndpointName, query: Record<string, string>) => ({
  query: { ...valid[endpoint].query, ...query },
});

const order = valid.createOrder.body as Record<string, unknown>;
const cases: RuleCase[] = [
  // POST /orders: an integer micro-USD amount, at most one contract count.
  {
    endpoint: "createOrder",
    rule: "depositAmount not an integer",
    body: { ...order, depositAmount: "5.5" },
    param: "depositAmount",
    says: "micro-USD",
  },
  {
    endpoint: "createOrder",
    rule: "two contract counts",
    body: { ...order, contracts: "5", contractsMicro: "5000000" },
    param: "contracts",
    says: "at most one",
  },
  {
    endpoint: "executePrediction",
    rule: "signedTransaction required",
    body: {},
    param: "signedTransaction",
  },
  { endpoint: "executeOrder", rule: "signedTransaction required", body: {}, param: "signedTransaction" },
  // Event search: term 1-200, limit 1-20, provider enum.
  { endpoint: "searchEvents", rule: "query required", query: {}, param: "query", says: "is required" },
  {
    endpoint: "searchEvents",
    rule: "query empty",
    ...q("searchEvents", { query: "" }),
    param: "query",
    says: "1 to 200",
  },
  {
    endpoint: "searchEvents",
    rule: "query 201 chars",
    ...q("searchEvents", { query: "x".repeat(201) }),
    param: "query",
    says: "1 to 200",
  },
  {
    endpoint: "searchEvents",
    rule: "limit 0",
    ...q("searchEvents", { limit: "0" }),
    param: "limit",
    says: "1 to 20",
  },
  {
    endpoint: "searchEvents",
    rule: "limit 21",
    ...q("searchEvents", { limit: "21" }),
    param: "limit",
    says: "1 to 20",
  },
  {
    endpoint: "searchEvents",
    rule: "limit not an integer",
    ...q("searchEvents", { limit: "2.5" }),
    param: "limit",
  },
  // Providers are an open list on the live service: only an empty name is refused.
  {
    endpoint: "searchEvents",
    rule: "provider empty",
    ...q("searchEvents", { provider: "" }),
    param: "provider",
    says: "provider name",
  },
  // Event list: enums and range bounds.
  {
    endpoint: "listEvents",
    rule: "provider empty",
    query: { provider: "" },
    param: "provider",
    says: "provider name",
  },
  {
    endpoint: "listEvents",
    rule: "category empty",
    query: { category: "" },
    param: "category",
    says: "category name",
  },
  {
    endpoint: "listEvents",
    rule: "sortBy enum",
    query: { sortBy: "price" },
    param: "sortBy",
    says: "volume, volume24hr, beginAt",
  },
  {
    endpoint: "listEvents",
    rule: "sortDirection enum",
    query: { sortDirection: "up" },
    param: "sortDirection",
    says: "asc, desc",
  },
  {
    endpoint: "listEvents",
    rule: "filter enum",
    query: { filter: "hot" },
    param: "filter",
    says: "new, live, trending",
  },
  {
    endpoint: "listEvents",
    rule: "includeMarkets boolean",
    query: { includeMarkets: "yes" },
    param: "includeMarkets",
  },
  { endpoint: "listEvents", rule: "start >= 0", query: { start: "-1" }, param: "start", says: ">= 0" },
  { endpoint: "listEvents", rule: "end >= 0", query: { end: "-1" }, param: "end", says: ">= 0" },
  // An unknown query parameter is ignored, as on the live service (live-client-reads.test.ts).
  // Path ids: min length 1 (an empty segment is an empty id).
  {
    endpoint: "getEvent",
    rule: "eventId empty",
    path: "/prediction/v1/events/",
    param: "eventId",
    says: "at least 1 character",
  },
  {
    endpoint: "getEvent",
    rule: "includeMarkets boolean",
    path: "/prediction/v1/events/evt-1",
    query: { includeMarkets: "1" },
    param: "includeMarkets",
  },
  {
    endpoint: "listEventMarkets",
    rule: "eventId empty",
    path: "/prediction/v1/events//markets",
    param: "eventId",
    says: "at least 1 character",
  },
  { endpoint: "listEventMarkets", rule: "start >= 0", query: { start: "-5" }, param: "start", says: ">= 0" },
  { endpoint: "listEventMarkets", rule: "end >= 0", query: { end: "-5" }, param: "end", says: ">= 0" },
  {
    endpoint: "getEventMarket",
    rule: "eventId empty",
    path: "/prediction/v1/events//markets/mkt-1",
    param: "eventId",
  },
  {
    endpoint: "getEventMarket",
    rule: "marketId empty",
    path: "/prediction/v1/events/evt-1/markets/",
    param: "marketId",
  },
  {
    endpoint: "getMarket",
    rule: "marketId empty",
    path: "/prediction/v1/markets/",
    param: "marketId",
    says: "at least 1 character",
  },
  // Positions, orders, history: range bounds, public keys, history id >= 1.
  { endpoint: "listPositions", rule: "start >= 0", ...q("listPositions", { start: "-1" }), param: "start" },
  { endpoint: "listPositions", rule: "end >= 0", ...q("listPositions", { end: "-1" }), param: "end" },
  {
    endpoint: "listPositions",
    rule: "ownerPubkey too short",
    query: { ownerPubkey: "abc" },
    param: "ownerPubkey",
    says: "public key",
  },
  {
    endpoint: "listPositions",
    rule: "ownerPubkey not base58",
    query: { ownerPubkey: "0".repeat(32) },
    param: "ownerPubkey",
    says: "base58",
  },
  {
    endpoint: "listPositions",
    rule: "ownerPubkey too long",
    query: { ownerPubkey: "1".repeat(45) },
    param: "ownerPubkey",
  },
  {
    endpoint: "listPositions",
    rule: "marketPubkey shape",
    query: { marketPubkey: "xyz" },
    param: "marketPubkey",
  },
  {
    endpoint: "listPositions",
    rule: "isYes boolean",
    query: { isYes: "maybe" },
    param: "isYes",
    says: "true, false",
  },
  { endpoint: "listOrders", rule: "start >= 0", query: { start: "-1" }, param: "start" },
  { endpoint: "listOrders", rule: "end >= 0", query: { end: "-1" }, param: "end" },
  { endpoint: "listOrders", rule: "ownerPubkey shape", query: { ownerPubkey: "nope" }, param: "ownerPubkey" },
  { endpoint: "listHistory", rule: "id >= 1", query: { id: "0" }, param: "id", says: ">= 1" },
  { endpoint: "listHistory", rule: "start >= 0", query: { start: "-1" }, param: "start" },
  { endpoint: "listHistory", rule: "end >= 0", query: { end: "-1" }, param: "end" },
  {
    endpoint: "listHistory",
    rule: "ownerPubkey shape",
    query: { ownerPubkey: "nope" },
    param: "ownerPubkey",
  },
  {
    endpoint: "listHistory",
    rule: "positionPubkey shape",
    query: { positionPubkey: "nope" },
    param: "positionPubkey",
  },
  // Close and claim: bodies and the position path key.
  {
    endpoint: "closeAllPositions",
    rule: "ownerPubkey required",
    body: {},
    param: "ownerPubkey",
    says: "is required",
  },
  {
    endpoint: "closeAllPositions",
    rule: "ownerPubkey shape",
    body: { ownerPubkey: "short" },
    param: "ownerPubkey",
  },
  {
    endpoint: "closeAllPositions",
    rule: "slippage required",
    body: owner,
    param: "minSellPriceSlippageBps",
    says: "is required",
  },
  {
    endpoint: "closePosition",
    rule: "the body is the owner only",
    path: `/prediction/v1/positions/${MINT_A}`,
    body: { ...owner, minSellPriceSlippageBps: 100 },
    param: "minSellPriceSlippageBps",
  },
  {
    endpoint: "closeAllPositions",
    rule: "slippage 0-10000",
    body: { ...owner, minSellPriceSlippageBps: 10_001 },
    param: "minSellPriceSlippageBps",
    says: "0 to 10000",
  },
  {
    endpoint: "closeAllPositions",
    rule: "body required",
    body: undefined,
    param: "body",
    says: "is required",
  },
  {
    endpoint: "closePosition",
    rule: "positionPubkey shape",
    path: "/prediction/v1/positions/not-a-key",
    param: "positionPubkey",
  },
  {
    endpoint: "closePosition",
    rule: "ownerPubkey shape",
    body: { ownerPubkey: 42 },
    param: "ownerPubkey",
    says: "must be a string",
  },
  {
    endpoint: "getPosition",
    rule: "positionPubkey shape",
    path: "/prediction/v1/positions/not-a-key",
    param: "positionPubkey",
  },
  {
    endpoint: "claimPosition",
    rule: "positionPubkey shape",
    path: "/prediction/v1/positions/bad/claim",
    param: "positionPubkey",
  },
  {
    endpoint: "claimPosition",
    rule: "ownerPubkey required",
    body: {},
    param: "ownerPubkey",
    says: "is required",
  },
  // Leaderboards.
  { endpoint: "leaderboards", rule: "limit 0", query: { limit: "0" }, param: "limit", says: "1 to 100" },
  { endpoint: "leaderboards", rule: "limit 101", query: { limit: "101" }, param: "limit", says: "1 to 100" },
  {
    endpoint: "leaderboards",
    rule: "period enum",
    query: { period: "daily" },
    param: "period",
    says: "all_time, weekly, monthly",
  },
  {
    endpoint: "leaderboards",
    rule: "metric enum",
    query: { metric: "luck" },
    param: "metric",
    says: "pnl, volume, win_rate",
  },
  // Token search.
  { endpoint: "searchTokens", rule: "query required", query: {}, param: "query", says: "is required" },
  { endpoint: "searchTokens", rule: "query blank", query: { query: " " }, param: "query" },
  {
    endpoint: "searchTokens",
    rule: "at most 100 terms",
    query: { query: Array(101).fill(MINT_A).join(",") },
    param: "query",
    says: "at most 100",
  },
  // Swap build.
  {
    endpoint: "buildSwap",
    rule: "inputMint required",
    query: without(swap, "inputMint"),
    param: "inputMint",
    says: "is required",
  },
  {
    endpoint: "buildSwap",
    rule: "outputMint required",
    query: without(swap, "outputMint"),
    param: "outputMint",
    says: "is required",
  },
  {
    endpoint: "buildSwap",
    rule: "amount required",
    query: without(swap, "amount"),
    param: "amount",
    says: "is required",
  },
  {
    endpoint: "buildSwap",
    rule: "amount integer string",
    ...q("buildSwap", { amount: "1.5" }),
    param: "amount",
  },
  {
    endpoint: "buildSwap",
    rule: "taker required",
    query: without(swap, "taker"),
    param: "taker",
    says: "is required",
  },
  { endpoint: "buildSwap", rule: "taker shape", ...q("buildSwap", { taker: "me" }), param: "taker" },
  {
    endpoint: "buildSwap",
    rule: "payer shape",
    ...q("buildSwap", { payer: "0".repeat(32) }),
    param: "payer",
    says: "base58",
  },
  {
    endpoint: "buildSwap",
    rule: "slippageBps < 0",
    ...q("buildSwap", { slippageBps: "-1" }),
    param: "slippageBps",
    says: "0 to 10000",
  },
  {
    endpoint: "buildSwap",
    rule: "slippageBps > 10000",
    ...q("buildSwap", { slippageBps: "10001" }),
    param: "slippageBps",
    says: "0 to 10000",
  },
  {
    endpoint: "buildSwap",
    rule: "platformFeeBps > 10000",
    ...q("buildSwap", { platformFeeBps: "10001", feeAccount: PK }),
    param: "platformFeeBps",
    says: "0 to 10000",
  },
  {
    endpoint: "buildSwap",
    rule: "platformFeeBps < 0",
    ...q("buildSwap", { platformFeeBps: "-1" }),
    param: "platformFeeBps",
  },
  {
    endpoint: "buildSwap",
    rule: "maxAccounts 0",
    ...q("buildSwap", { maxAccounts: "0" }),
    param: "maxAccounts",
    says: "1 to 64",
  },
  {
    endpoint: "buildSwap",
    rule: "maxAccounts 65",
    ...q("buildSwap", { maxAccounts: "65" }),
    param: "maxAccounts",
    says: "1 to 64",
  },
  {
    endpoint: "buildSwap",
    rule: "blockhashSlotsToExpiry 0",
    ...q("buildSwap", { blockhashSlotsToExpiry: "0" }),
    param: "blockhashSlotsToExpiry",
    says: "1 to 300",
  },
  {
    endpoint: "buildSwap",
    rule: "blockhashSlotsToExpiry 301",
    ...q("buildSwap", { blockhashSlotsToExpiry: "301" }),
    param: "blockhashSlotsToExpiry",
    says: "1 to 300",
  },
  {
    endpoint: "buildSwap",
    rule: "mode enum",
    ...q("buildSwap", { mode: "slow" }),
    param: "mode",
    says: "fast",
  },
  {
    endpoint: "buildSwap",
    rule: "wrapAndUnwrapSol boolean",
    ...q("buildSwap", { wrapAndUnwrapSol: "no" }),
    param: "wrapAndUnwrapSol",
  },
  {
    endpoint: "buildSwap",
    rule: "dexes vs excludeDexes",
    ...q("buildSwap", { dexes: "A", excludeDexes: "B" }),
    param: "excludeDexes",
    says: "mutually exclusive with dexes",
  },
  {
    endpoint: "buildSwap",
    rule: "destination vs native destination",
    ...q("buildSwap", { destinationTokenAccount: PK, nativeDestinationAccount: MINT_B }),
    param: "nativeDestinationAccount",
    says: "mutually exclusive with destinationTokenAccount",
  },
  {
    endpoint: "buildSwap",
    rule: "feeAccount with platformFeeBps > 0",
    ...q("buildSwap", { platformFeeBps: "20" }),
    param: "feeAccount",
    says: "required when platformFeeBps is positive",
  },
  // Trigger.
  {
    endpoint: "createTriggerOrder",
    rule: "makingAmount required",
    body: { ...trigger, params: { takingAmount: "2000" } },
    param: "params.makingAmount",
    says: "is required",
  },
  {
    endpoint: "createTriggerOrder",
    rule: "takingAmount required",
    body: { ...trigger, params: { makingAmount: "1000" } },
    param: "params.takingAmount",
    says: "is required",
  },
  {
    endpoint: "createTriggerOrder",
    rule: "makingAmount positive",
    body: { ...trigger, params: { ...trigger.params, makingAmount: "0" } },
    param: "params.makingAmount",
    says: "positive",
  },
  {
    endpoint: "createTriggerOrder",
    rule: "params required",
    body: without(trigger, "params"),
    param: "params",
    says: "is required",
  },
  {
    endpoint: "createTriggerOrder",
    rule: "maker required",
    body: without(trigger, "maker"),
    param: "maker",
    says: "is required",
  },
  {
    endpoint: "createTriggerOrder",
    rule: "payer required",
    body: without(trigger, "payer"),
    param: "payer",
    says: "is required",
  },
  {
    endpoint: "createTriggerOrder",
    rule: "feeAccount with feeBps",
    body: { ...trigger, params: { ...trigger.params, feeBps: "10" } },
    param: "feeAccount",
  },
  {
    endpoint: "createTriggerOrder",
    rule: "slippageBps > 10000",
    body: { ...trigger, params: { ...trigger.params, slippageBps: "10001" } },
    param: "params.slippageBps",
    says: "0 to 10000",
  },
  {
    endpoint: "createTriggerOrder",
    rule: "feeBps > 10000",
    body: { ...trigger, feeAccount: PK, params: { ...trigger.params, feeBps: "10001" } },
    param: "params.feeBps",
    says: "0 to 10000",
  },
  {
    endpoint: "createTriggerOrder",
    rule: "computeUnitPrice auto or microlamports",
    body: { ...trigger, computeUnitPrice: "fast" },
    param: "computeUnitPrice",
    says: "auto",
  },
  {
    endpoint: "createTriggerOrder",
    rule: "outputMint differs from inputMint",
    body: { ...trigger, outputMint: trigger.inputMint },
    param: "outputMint",
    says: "differ from inputMint",
  },
  {
    endpoint: "createTriggerOrder",
    rule: "takingAmount integer string",
    body: { ...trigger, params: { ...trigger.params, takingAmount: "1e6" } },
    param: "params.takingAmount",
    says: "integer string",
  },
  {
    endpoint: "createTriggerOrder",
    rule: "inputMint required",
    body: without(trigger, "inputMint"),
    param: "inputMint",
    says: "is required",
  },
  {
    endpoint: "createTriggerOrder",
    rule: "outputMint required",
    body: without(trigger, "outputMint"),
    param: "outputMint",
    says: "is required",
  },
  {
    endpoint: "createTriggerOrder",
    rule: "wrapAndUnwrapSol boolean",
    body: { ...trigger, wrapAndUnwrapSol: "yes" },
    param: "wrapAndUnwrapSol",
    says: "boolean",
  },
  {
    endpoint: "cancelTriggerOrder",
    rule: "maker required",
    body: without(cancel, "maker"),
    param: "maker",
    says: "is required",
  },
  {
    endpoint: "cancelTriggerOrder",
    rule: "order required",
    body: without(cancel, "order"),
    param: "order",
    says: "is required",
  },
  {
    endpoint: "cancelTriggerOrder",
    rule: "order shape",
    body: { ...cancel, order: "not-an-order" },
    param: "order",
    says: "public key",
  },
  {
    endpoint: "cancelTriggerOrders",
    rule: "maker required",
    body: { orders: [MINT_A] },
    param: "maker",
    says: "is required",
  },
  {
    endpoint: "cancelTriggerOrders",
    rule: "orders not empty",
    body: { maker: PK, orders: [] },
    param: "orders",
    says: "at least one order",
  },
  {
    endpoint: "cancelTriggerOrders",
    rule: "each order a public key",
    body: { maker: PK, orders: [MINT_A, "not-an-order"] },
    param: "orders.1",
    says: "public key",
  },
  {
    endpoint: "cancelTriggerOrders",
    rule: "at most 100 orders",
    body: { maker: PK, orders: Array.from({ length: 101 }, () => MINT_A) },
    param: "orders",
    says: "at most 100",
  },
  {
    endpoint: "getTriggerOrders",
    rule: "user required",
    query: { orderStatus: "active" },
    param: "user",
    says: "is required",
  },
  {
    endpoint: "getTriggerOrders",
    rule: "orderStatus enum",
    ...q("getTriggerOrders", { orderStatus: "open" }),
    param: "orderStatus",
    says: "active, history",
  },
  {
    endpoint: "getTriggerOrders",
    rule: "orderStatus required",
    query: { user: PK },
    param: "orderStatus",
    says: "active, history",
  },
  {
    endpoint: "getTriggerOrders",
    rule: "page >= 1",
    ...q("getTriggerOrders", { page: "0" }),
    param: "page",
    says: ">= 1",
  },
  {
    endpoint: "getTriggerOrders",
    rule: "inputMint shape",
    ...q("getTriggerOrders", { inputMint: "usdc" }),
    param: "inputMint",
  },
  {
    endpoint: "executeTrigger",
    rule: "requestId required",
    body: without(execute, "requestId"),
    param: "requestId",
    says: "is required",
  },
  {
    endpoint: "executeTrigger",
    rule: "signedTransaction required",
    body: without(execute, "signedTransaction"),
    param: "signedTransaction",
    says: "is required",
  },
  {
    endpoint: "executeTrigger",
    rule: "requestId empty",
    body: { ...execute, requestId: "" },
    param: "requestId",
  },
  // Recurring.
  {
    endpoint: "createRecurringOrder",
    rule: "both time and price",
    body: { ...recurring, params: { time, price } },
    param: "params",
    says: "exactly one of time or price",
  },
  {
    endpoint: "createRecurringOrder",
    rule: "neither time nor price",
    body: { ...recurring, params: {} },
    param: "params",
    says: "exactly one of time or price",
  },
  {
    endpoint: "createRecurringOrder",
    rule: "numberOfOrders >= 2",
    body: { ...recurring, params: { time: { ...time, numberOfOrders: 1 } } },
    param: "params.time.numberOfOrders",
    says: "at least 2",
  },
  {
    endpoint: "createRecurringOrder",
    rule: "user required",
    body: without(recurring, "user"),
    param: "user",
    says: "is required",
  },
  {
    endpoint: "createRecurringOrder",
    rule: "interval > 0",
    body: { ...recurring, params: { time: { ...time, interval: 0 } } },
    param: "params.time.interval",
    says: "positive",
  },
  {
    endpoint: "createRecurringOrder",
    rule: "inAmount integer",
    body: { ...recurring, params: { time: { ...time, inAmount: 1.5 } } },
    param: "params.time.inAmount",
    says: "integer",
  },
  {
    endpoint: "createRecurringOrder",
    rule: "minPrice <= maxPrice",
    body: { ...recurring, params: { time: { ...time, minPrice: 2, maxPrice: 1 } } },
    param: "params.time.minPrice",
    says: "maxPrice",
  },
  {
    endpoint: "createRecurringOrder",
    rule: "inputMint required",
    body: without(recurring, "inputMint"),
    param: "inputMint",
    says: "is required",
  },
  {
    endpoint: "createRecurringOrder",
    rule: "outputMint required",
    body: without(recurring, "outputMint"),
    param: "outputMint",
    says: "is required",
  },
  {
    endpoint: "cancelRecurringOrder",
    rule: "order required",
    body: { user: PK },
    param: "order",
    says: "is required",
  },
  {
    endpoint: "cancelRecurringOrder",
    rule: "user required",
    body: { order: MINT_A },
    param: "user",
    says: "is required",
  },
  {
    endpoint: "cancelRecurringOrder",
    rule: "recurringType enum",
    body: { user: PK, order: MINT_A, recurringType: "all" },
    param: "recurringType",
    says: "time, price",
  },
  {
    endpoint: "getRecurringOrders",
    rule: "recurringType required",
    query: { user: PK, orderStatus: "active" },
    param: "recurringType",
    says: "time, price, all",
  },
  {
    endpoint: "getRecurringOrders",
    rule: "orderStatus enum",
    ...q("getRecurringOrders", { orderStatus: "done" }),
    param: "orderStatus",
    says: "active, history",
  },
  {
    endpoint: "getRecurringOrders",
    rule: "includeFailedTx boolean",
    ...q("getRecurringOrders", { includeFailedTx: "yes" }),
    param: "includeFailedTx",
    says: "true, false",
  },
  {
    endpoint: "getRecurringOrders",
    rule: "user shape",
    ...q("getRecurringOrders", { user: "someone" }),
    param: "user",
  },
  {
    endpoint: "executeRecurring",
    rule: "requestId required",
    body: without(execute, "requestId"),
    param: "requestId",
    says: "is required",
  },
  {
    endpoint: "executeRecurring",
    rule: "signedTransaction required",
    body: without(execute, "signedTransaction"),
    param: "signedTransaction",
    says: "is required",
  },
  // Send.
  { endpoint: "inviteHistory", rule: "address required", query: {}, param: "address", says: "is required" },
  { endpoint: "inviteHistory", rule: "address shape", query: { address: "someone" }, param: "address" },
  {
    endpoint: "inviteHistory",
    rule: "page >= 1",
    ...q("inviteHistory", { page: "0" }),
    param: "page",
    says: ">= 1",
  },
];

let sandbox: RunningServer;
beforeAll(async () => {
  sandbox = await startTestServer();
});
afterAll(() => sandbox.close());

function request(
  endpoint: EndpointName,
  input: { path?: string; query?: Record<string, string>; body?: unknown },
) {
  const def = endpoints[endpoint];
  const base = input.path ?? valid[endpoint].path ?? def.path;
  const query = input.query ?? valid[endpoint].query;
  const search =
    query === undefined || Object.keys(query).length === 0 ? "" : `?${new URLSearchParams(query)}`;
  if (def.method === "GET") return sandbox.get(`${base}${search}`);
  const body = "body" in input ? input.body : valid[endpoint].body;
  return body === undefined
    ? fetch(`${sandbox.url}${base}${search}`, { method: def.method, headers: { "x-api-key": "test-key" } })
    : sandbox.send(def.method, `${base}${search}`, body);
}

describe("sandbox parameter rules", () => {
  it.each(Object.keys(valid) as EndpointName[])("%s accepts its valid input", async (endpoint) => {
    const response = await request(endpoint, valid[endpoint]);
    expect(response.status, await response.clone().text()).toBe(200);
    expect(((await response.json()) as { endpoint: string }).endpoint).toBe(endpoint);
  });

  it.each(cases.map((c) => [`${c.endpoint}: ${c.rule}`, c] as const))(
    "%s → 400 naming the field",
    async (_, c) => {
      const response = await request(c.endpoint, c);
      await expectAreaError(response, {
        status: 400,
        area: endpoints[c.endpoint].area,
        param: c.param,
        rule: c.says,
      });
    },
  );

  it("covers every endpoint that has a rule", () => {
    const withRules = (Object.keys(endpoints) as EndpointName[]).filter(
      (name) => "params" in endpoints[name] || "body" in endpoints[name],
    );
    const covered = new Set(cases.map((c) => c.endpoint));
    expect(withRules.filter((name) => !covered.has(name))).toEqual([]);
  });

  it("a body that is not JSON is a 400 in the area's shape naming the body", async () => {
    const response = await sandbox.send("POST", "/trigger/v1/createOrder", "{not json");
    await expectAreaError(response, { status: 400, area: "trigger", param: "body" });
  });

  it("an id of one blank character is a legal id, passed to the handler as is", async () => {
    const response = await sandbox.get("/prediction/v1/events/%20");
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ params: { eventId: " " } });
  });
});
