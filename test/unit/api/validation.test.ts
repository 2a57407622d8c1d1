import { describe, expect, it, vi } from "vitest";
import { type ApiClient, createApiClient } from "../../../src/api/client.js";
import { ValidationError } from "../../../src/api/errors.js";
import { OTHER_WALLET, WALLET } from "../../helpers/fixtures.js";

/**
 * Every parameter rule of the spec's Limits and parameter tables and of api-gaps: the client refuses
 * the request before anything is sent, with an error that names the parameter and the rule.
 */

const SOL = "So11111111111111111111111111111111111111112";
const USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const NOT_BASE58 = "0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl"; // 0, O, I and l are not base58
const SHORT_KEY = "abc";

const swap = { inputMint: SOL, outputMint: USDC, amount: "1000000", taker: WALLET };
const trigger = {
  inputMint: SOL,
  outputMint: USDC,
  maker: WALLET,
  payer: WALLET,
  params: { makingAmount: "1000000000", takingAmount: "150000000" },
};
const time = { inAmount: 200_000_000, numberOfOrders: 4, interval: 86_400 };
const recurring = { user: WALLET, inputMint: USDC, outputMint: SOL, params: { time } };
const terms = (n: number) => Array.from({ length: n }, (_, i) => `TOKEN${i}`).join(",");

// Wrong types are what a JavaScript caller or a config file could still pass; the cast says so.
const untyped = <T>(value: unknown) => value as T;

type Case = readonly [rule: string, call: (c: ApiClient) => Promise<unknown>, field: string, text: string];

const cases: Case[] = [
  // GET /prediction/v1/events
  // Providers and categories are open sets on the live service: only an empty name is refused.
  ["events provider non-empty", (c) => c.prediction.listEvents({ provider: "" }), "provider", "polymarket"],
  ["events category non-empty", (c) => c.prediction.listEvents({ category: "" }), "category", "crypto"],
  ["events sortBy enum", (c) => c.prediction.listEvents({ sortBy: untyped("name") }), "sortBy", "volume"],
  [
    "events sortDirection enum",
    (c) => c.prediction.listEvents({ sortDirection: untyped("up") }),
    "sortDirection",
    "asc",
  ],
  ["events filter enum", (c) => c.prediction.listEvents({ filter: untyped("hot") }), "filter", "trending"],
  [
    "events includeMarkets boolean",
    (c) => c.prediction.listEvents({ includeMarkets: untyped("yes") }),
    "includeMarkets",
    "expected a boolean",
  ],
  ["events start >= 0", (c) => c.prediction.listEvents({ start: -1 }), "start", ">= 0"],
  ["events end >= 0", (c) => c.prediction.listEvents({ end: -5 }), "end", ">= 0"],
  ["events start integer", (c) => c.prediction.listEvents({ start: 1.5 }), "start", "integer"],
  [
    "events end integer string",
    (c) => c.prediction.listEvents({ end: untyped("ten") }),
    "end",
    "expected an integer",
  ],
  [
    "events unknown parameter",
    (c) => c.prediction.listEvents(untyped({ page: 2 })),
    "page",
    "not a known parameter",
  ],
  // GET /prediction/v1/events/{eventId}
  ["eventId min length 1", (c) => c.prediction.getEvent(""), "eventId", "at least 1 character"],
  [
    "event includeMarkets boolean",
    (c) => c.prediction.getEvent("evt-1", { includeMarkets: untyped(1) }),
    "includeMarkets",
    "expected a boolean",
  ],
  // GET /prediction/v1/events/search
  ["search query min length 1", (c) => c.prediction.searchEvents({ query: "" }), "query", "1 to 200"],
  [
    "search query max length 200",
    (c) => c.prediction.searchEvents({ query: "x".repeat(201) }),
    "query",
    "1 to 200",
  ],
  ["search query required", (c) => c.prediction.searchEvents(untyped({})), "query", "required"],
  ["search limit >= 1", (c) => c.prediction.searchEvents({ query: "btc", limit: 0 }), "limit", "1 to 20"],
  ["search limit <= 20", (c) => c.prediction.searchEvents({ query: "btc", limit: 21 }), "limit", "1 to 20"],
  [
    "search provider non-empty",
    (c) => c.prediction.searchEvents({ query: "btc", provider: "" }),
    "provider",
    "kalshi",
  ],
  // GET /prediction/v1/events/{eventId}/markets and .../markets/{marketId}, /markets/{marketId}
  [
    "event markets eventId min 1",
    (c) => c.prediction.listEventMarkets(""),
    "eventId",
    "at least 1 character",
  ],
  ["event markets start >= 0", (c) => c.prediction.listEventMarkets("evt-1", { start: -1 }), "start", ">= 0"],
  ["event markets end >= 0", (c) => c.prediction.listEventMarkets("evt-1", { end: -1 }), "end", ">= 0"],
  [
    "event market eventId min 1",
    (c) => c.prediction.getEventMarket("", "mkt-1"),
    "eventId",
    "at least 1 character",
  ],
  [
    "event market marketId min 1",
    (c) => c.prediction.getEventMarket("evt-1", ""),
    "marketId",
    "at least 1 character",
  ],
  ["market marketId min 1", (c) => c.prediction.getMarket(""), "marketId", "at least 1 character"],
  // GET /prediction/v1/positions
  ["positions start >= 0", (c) => c.prediction.listPositions({ start: -1 }), "start", ">= 0"],
  ["positions end >= 0", (c) => c.prediction.listPositions({ end: -1 }), "end", ">= 0"],
  [
    "positions owner too short",
    (c) => c.prediction.listPositions({ ownerPubkey: SHORT_KEY }),
    "ownerPubkey",
    "32 to 44",
  ],
  [
    "positions owner not base58",
    (c) => c.prediction.listPositions({ ownerPubkey: NOT_BASE58 }),
    "ownerPubkey",
    "base58",
  ],
  [
    "positions owner too long",
    (c) => c.prediction.listPositions({ ownerPubkey: `${WALLET}abc` }),
    "ownerPubkey",
    "32 to 44",
  ],
  [
    "positions isYes boolean",
    (c) => c.prediction.listPositions({ isYes: untyped("maybe") }),
    "isYes",
    "expected a boolean",
  ],
  [
    "positions marketPubkey shape",
    (c) => c.prediction.listPositions({ marketPubkey: SHORT_KEY }),
    "marketPubkey",
    "base58",
  ],
  // GET /prediction/v1/orders
  ["orders start >= 0", (c) => c.prediction.listOrders({ start: -1 }), "start", ">= 0"],
  ["orders end >= 0", (c) => c.prediction.listOrders({ end: -1 }), "end", ">= 0"],
  [
    "orders have no market filter",
    (c) => c.prediction.listOrders(untyped({ marketId: "m-1" })),
    "marketId",
    "not a known parameter",
  ],
  [
    "orders owner shape",
    (c) => c.prediction.listOrders({ ownerPubkey: NOT_BASE58 }),
    "ownerPubkey",
    "base58",
  ],
  // GET /prediction/v1/history
  ["history id >= 1", (c) => c.prediction.listHistory({ id: 0 }), "id", ">= 1"],
  ["history start >= 0", (c) => c.prediction.listHistory({ start: -1 }), "start", ">= 0"],
  ["history end >= 0", (c) => c.prediction.listHistory({ end: -1 }), "end", ">= 0"],
  [
    "history owner shape",
    (c) => c.prediction.listHistory({ ownerPubkey: SHORT_KEY }),
    "ownerPubkey",
    "base58",
  ],
  [
    "history position shape",
    (c) => c.prediction.listHistory({ positionPubkey: NOT_BASE58 }),
    "positionPubkey",
    "base58",
  ],
  // DELETE /prediction/v1/positions, DELETE /positions/{pubkey}, POST /positions/{pubkey}/claim
  ["close all owner required", (c) => c.prediction.closeAllPositions(untyped({})), "ownerPubkey", "required"],
  [
    "close all owner shape",
    (c) => c.prediction.closeAllPositions({ ownerPubkey: SHORT_KEY, minSellPriceSlippageBps: 100 }),
    "ownerPubkey",
    "base58",
  ],
  [
    "close all slippage required",
    (c) => c.prediction.closeAllPositions(untyped({ ownerPubkey: WALLET })),
    "minSellPriceSlippageBps",
    "required",
  ],
  [
    "close position body is the owner only",
    (c) =>
      c.prediction.closePosition(
        OTHER_WALLET,
        untyped({ ownerPubkey: WALLET, minSellPriceSlippageBps: 100 }),
      ),
    "minSellPriceSlippageBps",
    "not a known parameter",
  ],
  [
    "close all slippage <= 10000",
    (c) => c.prediction.closeAllPositions({ ownerPubkey: WALLET, minSellPriceSlippageBps: 10_001 }),
    "minSellPriceSlippageBps",
    "0 to 10000",
  ],
  [
    "close position pubkey shape",
    (c) => c.prediction.closePosition(SHORT_KEY, { ownerPubkey: WALLET }),
    "positionPubkey",
    "base58",
  ],
  [
    "close position owner shape",
    (c) => c.prediction.closePosition(OTHER_WALLET, { ownerPubkey: NOT_BASE58 }),
    "ownerPubkey",
    "base58",
  ],
  [
    "claim pubkey shape",
    (c) => c.prediction.claimPosition(NOT_BASE58, { ownerPubkey: WALLET }),
    "positionPubkey",
    "base58",
  ],
  [
    "claim owner required",
    (c) => c.prediction.claimPosition(OTHER_WALLET, untyped({})),
    "ownerPubkey",
    "required",
  ],
  // GET /prediction/v1/leaderboards
  ["leaderboard limit >= 1", (c) => c.prediction.leaderboards({ limit: 0 }), "limit", "1 to 100"],
  ["leaderboard limit <= 100", (c) => c.prediction.leaderboards({ limit: 101 }), "limit", "1 to 100"],
  [
    "leaderboard period enum",
    (c) => c.prediction.leaderboards({ period: untyped("daily") }),
    "period",
    "weekly",
  ],
  [
    "leaderboard metric enum",
    (c) => c.prediction.leaderboards({ metric: untyped("roi") }),
    "metric",
    "win_rate",
  ],
  // GET /ultra/v1/search
  ["token search query required", (c) => c.tokens.search({ query: "" }), "query", "required"],
  ["token search blank query", (c) => c.tokens.search({ query: "   " }), "query", "required"],
  ["token search at most 100 terms", (c) => c.tokens.search({ query: terms(101) }), "query", "at most 100"],
  // GET /swap/v2/build
  ["swap slippageBps >= 0", (c) => c.swap.build({ ...swap, slippageBps: -1 }), "slippageBps", "0 to 10000"],
  [
    "swap slippageBps <= 10000",
    (c) => c.swap.build({ ...swap, slippageBps: 10_001 }),
    "slippageBps",
    "0 to 10000",
  ],
  [
    "swap platformFeeBps <= 10000",
    (c) => c.swap.build({ ...swap, platformFeeBps: 10_001, feeAccount: WALLET }),
    "platformFeeBps",
    "0 to 10000",
  ],
  [
    "swap platformFeeBps >= 0",
    (c) => c.swap.build({ ...swap, platformFeeBps: -1 }),
    "platformFeeBps",
    "0 to 10000",
  ],
  ["swap maxAccounts >= 1", (c) => c.swap.build({ ...swap, maxAccounts: 0 }), "maxAccounts", "1 to 64"],
  ["swap maxAccounts <= 64", (c) => c.swap.build({ ...swap, maxAccounts: 65 }), "maxAccounts", "1 to 64"],
  [
    "swap blockhashSlotsToExpiry >= 1",
    (c) => c.swap.build({ ...swap, blockhashSlotsToExpiry: 0 }),
    "blockhashSlotsToExpiry",
    "1 to 300",
  ],
  [
    "swap blockhashSlotsToExpiry <= 300",
    (c) => c.swap.build({ ...swap, blockhashSlotsToExpiry: 301 }),
    "blockhashSlotsToExpiry",
    "1 to 300",
  ],
  [
    "swap dexes vs excludeDexes",
    (c) => c.swap.build({ ...swap, dexes: "Orca", excludeDexes: "Raydium" }),
    "excludeDexes",
    "mutually exclusive with dexes",
  ],
  [
    "swap destinationTokenAccount vs nativeDestinationAccount",
    (c) => c.swap.build({ ...swap, destinationTokenAccount: WALLET, nativeDestinationAccount: OTHER_WALLET }),
    "nativeDestinationAccount",
    "mutually exclusive with destinationTokenAccount",
  ],
  [
    "swap feeAccount with platformFeeBps > 0",
    (c) => c.swap.build({ ...swap, platformFeeBps: 20 }),
    "feeAccount",
    "required when platformFeeBps is positive",
  ],
  ["swap mode enum", (c) => c.swap.build({ ...swap, mode: untyped("slow") }), "mode", "fast"],
  ["swap amount integer string", (c) => c.swap.build({ ...swap, amount: "1.5" }), "amount", "integer string"],
  ["swap amount not negative", (c) => c.swap.build({ ...swap, amount: -5n }), "amount", "integer string"],
  ["swap taker required", (c) => c.swap.build(untyped({ ...swap, taker: undefined })), "taker", "required"],
  ["swap inputMint shape", (c) => c.swap.build({ ...swap, inputMint: SHORT_KEY }), "inputMint", "base58"],
  [
    "swap inputMint required",
    (c) => c.swap.build(untyped({ ...swap, inputMint: undefined })),
    "inputMint",
    "required",
  ],
  [
    "swap outputMint required",
    (c) => c.swap.build(untyped({ ...swap, outputMint: undefined })),
    "outputMint",
    "required",
  ],
  [
    "swap amount required",
    (c) => c.swap.build(untyped({ ...swap, amount: undefined })),
    "amount",
    "required",
  ],
  [
    "swap wrapAndUnwrapSol boolean",
    (c) => c.swap.build({ ...swap, wrapAndUnwrapSol: untyped("no") }),
    "wrapAndUnwrapSol",
    "expected a boolean",
  ],
  ["swap payer shape", (c) => c.swap.build({ ...swap, payer: NOT_BASE58 }), "payer", "base58"],
  [
    "swap feeAccount shape",
    (c) => c.swap.build({ ...swap, platformFeeBps: 5, feeAccount: NOT_BASE58 }),
    "feeAccount",
    "base58",
  ],
  // POST /trigger/v1/createOrder, /cancelOrder, /execute
  [
    "trigger makingAmount positive",
    (c) => c.trigger.createOrder({ ...trigger, params: { ...trigger.params, makingAmount: "0" } }),
    "params.makingAmount",
    "positive",
  ],
  [
    "trigger takingAmount integer string",
    (c) => c.trigger.createOrder({ ...trigger, params: { ...trigger.params, takingAmount: "1e6" } }),
    "params.takingAmount",
    "integer string",
  ],
  [
    "trigger params required",
    (c) => c.trigger.createOrder(untyped({ ...trigger, params: undefined })),
    "params",
    "required",
  ],
  [
    "trigger feeBps without feeAccount",
    (c) => c.trigger.createOrder({ ...trigger, params: { ...trigger.params, feeBps: "25" } }),
    "feeAccount",
    "required when params.feeBps is positive",
  ],
  [
    "trigger slippageBps <= 10000",
    (c) => c.trigger.createOrder({ ...trigger, params: { ...trigger.params, slippageBps: "10001" } }),
    "params.slippageBps",
    "0 to 10000",
  ],
  ["trigger maker shape", (c) => c.trigger.createOrder({ ...trigger, maker: SHORT_KEY }), "maker", "base58"],
  [
    "trigger maker required",
    (c) => c.trigger.createOrder(untyped({ ...trigger, maker: undefined })),
    "maker",
    "required",
  ],
  [
    "trigger payer required",
    (c) => c.trigger.createOrder(untyped({ ...trigger, payer: undefined })),
    "payer",
    "required",
  ],
  [
    "trigger inputMint required",
    (c) => c.trigger.createOrder(untyped({ ...trigger, inputMint: undefined })),
    "inputMint",
    "required",
  ],
  [
    "trigger outputMint required",
    (c) => c.trigger.createOrder(untyped({ ...trigger, outputMint: undefined })),
    "outputMint",
    "required",
  ],
  [
    "trigger makingAmount required",
    (c) => c.trigger.createOrder(untyped({ ...trigger, params: { takingAmount: "150000000" } })),
    "params.makingAmount",
    "required",
  ],
  [
    "trigger takingAmount required",
    (c) => c.trigger.createOrder(untyped({ ...trigger, params: { makingAmount: "1000000000" } })),
    "params.takingAmount",
    "required",
  ],
  [
    "trigger wrapAndUnwrapSol boolean",
    (c) => c.trigger.createOrder({ ...trigger, wrapAndUnwrapSol: untyped("true") }),
    "wrapAndUnwrapSol",
    "boolean",
  ],
  [
    "trigger feeBps <= 10000",
    (c) =>
      c.trigger.createOrder({
        ...trigger,
        feeAccount: WALLET,
        params: { ...trigger.params, feeBps: "10001" },
      }),
    "params.feeBps",
    "0 to 10000",
  ],
  [
    "trigger mints differ",
    (c) => c.trigger.createOrder({ ...trigger, outputMint: SOL }),
    "outputMint",
    "differ from inputMint",
  ],
  [
    "trigger computeUnitPrice",
    (c) => c.trigger.createOrder({ ...trigger, computeUnitPrice: "fast" }),
    "computeUnitPrice",
    "auto",
  ],
  ["cancel order required", (c) => c.trigger.cancelOrder(untyped({ maker: WALLET })), "order", "required"],
  [
    "cancel maker required",
    (c) => c.trigger.cancelOrder(untyped({ order: OTHER_WALLET })),
    "maker",
    "required",
  ],
  [
    "cancel order shape",
    (c) => c.trigger.cancelOrder({ maker: WALLET, order: NOT_BASE58 }),
    "order",
    "base58",
  ],
  [
    "trigger execute requestId",
    (c) => c.trigger.execute({ requestId: "", signedTransaction: "AQID" }),
    "requestId",
    "required",
  ],
  [
    "trigger execute signedTransaction",
    (c) => c.trigger.execute({ requestId: "r1", signedTransaction: "" }),
    "signedTransaction",
    "required",
  ],
  // POST /trigger/v1/cancelOrders, GET /trigger/v1/getTriggerOrders (live, beyond the spec)
  [
    "cancelOrders maker required",
    (c) => c.trigger.cancelOrders(untyped({ orders: [OTHER_WALLET] })),
    "maker",
    "required",
  ],
  [
    "cancelOrders orders not empty",
    (c) => c.trigger.cancelOrders({ maker: WALLET, orders: [] }),
    "orders",
    "at least one order",
  ],
  [
    "cancelOrders each order a public key",
    (c) => c.trigger.cancelOrders({ maker: WALLET, orders: [OTHER_WALLET, NOT_BASE58] }),
    "orders[1]",
    "base58",
  ],
  [
    "cancelOrders at most 100",
    (c) => c.trigger.cancelOrders({ maker: WALLET, orders: Array.from({ length: 101 }, () => OTHER_WALLET) }),
    "orders",
    "at most 100",
  ],
  [
    "getTriggerOrders user required",
    (c) => c.trigger.getOrders(untyped({ orderStatus: "active" })),
    "user",
    "required",
  ],
  [
    "getTriggerOrders orderStatus enum",
    (c) => c.trigger.getOrders({ user: WALLET, orderStatus: untyped("open") }),
    "orderStatus",
    '"active" or "history"',
  ],
  [
    "getTriggerOrders page >= 1",
    (c) => c.trigger.getOrders({ user: WALLET, orderStatus: "history", page: 0 }),
    "page",
    ">= 1",
  ],
  // POST /recurring/v1/cancelOrder, GET /recurring/v1/getRecurringOrders (live, beyond the spec)
  [
    "recurring cancel order required",
    (c) => c.recurring.cancelOrder(untyped({ user: WALLET })),
    "order",
    "required",
  ],
  [
    "recurring cancel user shape",
    (c) => c.recurring.cancelOrder({ user: SHORT_KEY, order: OTHER_WALLET }),
    "user",
    "base58",
  ],
  [
    "recurring cancel recurringType enum",
    (c) => c.recurring.cancelOrder({ user: WALLET, order: OTHER_WALLET, recurringType: untyped("all") }),
    "recurringType",
    '"time" or "price"',
  ],
  [
    "getRecurringOrders recurringType required",
    (c) => c.recurring.getOrders(untyped({ user: WALLET, orderStatus: "active" })),
    "recurringType",
    "required",
  ],
  [
    "getRecurringOrders orderStatus enum",
    (c) => c.recurring.getOrders({ user: WALLET, orderStatus: untyped("done"), recurringType: "time" }),
    "orderStatus",
    '"active" or "history"',
  ],
  [
    "getRecurringOrders includeFailedTx boolean",
    (c) =>
      c.recurring.getOrders({
        user: WALLET,
        orderStatus: "active",
        recurringType: "all",
        includeFailedTx: untyped("yes"),
      }),
    "includeFailedTx",
    "boolean",
  ],
  // POST /recurring/v1/createOrder, /execute
  [
    "recurring exactly one of time or price (both)",
    (c) =>
      c.recurring.createOrder({
        ...recurring,
        params: { time, price: { depositAmount: 1_000_000, incrementUsdcValue: 10, interval: 60 } },
      }),
    "params",
    "exactly one of time or price",
  ],
  [
    "recurring exactly one of time or price (none)",
    (c) => c.recurring.createOrder({ ...recurring, params: {} }),
    "params",
    "exactly one of time or price",
  ],
  [
    "recurring numberOfOrders >= 2",
    (c) => c.recurring.createOrder({ ...recurring, params: { time: { ...time, numberOfOrders: 1 } } }),
    "params.time.numberOfOrders",
    "at least 2",
  ],
  [
    "recurring interval positive",
    (c) => c.recurring.createOrder({ ...recurring, params: { time: { ...time, interval: 0 } } }),
    "params.time.interval",
    "positive",
  ],
  [
    "recurring inAmount integer",
    (c) => c.recurring.createOrder({ ...recurring, params: { time: { ...time, inAmount: 1.5 } } }),
    "params.time.inAmount",
    "integer",
  ],
  [
    "recurring minPrice <= maxPrice",
    (c) => c.recurring.createOrder({ ...recurring, params: { time: { ...time, minPrice: 2, maxPrice: 1 } } }),
    "params.time.minPrice",
    "maxPrice",
  ],
  [
    "recurring user shape",
    (c) => c.recurring.createOrder({ ...recurring, user: SHORT_KEY }),
    "user",
    "base58",
  ],
  [
    "recurring user required",
    (c) => c.recurring.createOrder(untyped({ ...recurring, user: undefined })),
    "user",
    "required",
  ],
  [
    "recurring inputMint required",
    (c) => c.recurring.createOrder(untyped({ ...recurring, inputMint: undefined })),
    "inputMint",
    "required",
  ],
  [
    "recurring outputMint required",
    (c) => c.recurring.createOrder(untyped({ ...recurring, outputMint: undefined })),
    "outputMint",
    "required",
  ],
  [
    "recurring execute requestId",
    (c) => c.recurring.execute({ requestId: "", signedTransaction: "AQID" }),
    "requestId",
    "required",
  ],
  [
    "recurring execute signedTransaction",
    (c) => c.recurring.execute({ requestId: "r1", signedTransaction: "" }),
    "signedTransaction",
    "required",
  ],
  [
    "recurring execute signedTransaction missing",
    (c) => c.recurring.execute(untyped({ requestId: "r1" })),
    "signedTransaction",
    "required",
  ],
  // GET /send/v1/invite-history
  ["invite page >= 1", (c) => c.send.inviteHistory({ address: WALLET, page: 0 }), "page", ">= 1"],
  ["invite address required", (c) => c.send.inviteHistory(untyped({})), "address", "required"],
  ["invite address shape", (c) => c.send.inviteHistory({ address: NOT_BASE58 }), "address", "base58"],
];

describe("the client refuses every broken rule before sending", () => {
  it.each(cases)("%s", async (_rule, call, field, text) => {
    const fetchSpy = vi.fn<typeof fetch>();
    const client = createApiClient({ baseUrl: "http://127.0.0.1:9", apiKey: "unit-key", send: fetchSpy });
    const error = await call(client).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ValidationError);
    const v = error as ValidationError;
    expect(v.phase).toBe("request");
    const issue = v.issues.find((i) => i.field === field);
    expect(issue, `issues: ${JSON.stringify(v.issues)}`).toBeDefined();
    expect(issue?.rule).toContain(text);
    expect(v.message).toContain(`${field}: `);
    expect(fetchSpy).not.toHaveBeenCalled();
  });

  it("accepts the limits themselves (both ends of every range)", async () => {
    const ok = () => new Response("{}", { status: 200 });
    const fetchSpy = vi.fn<typeof fetch>(async () => ok());
    const client = createApiClient({
      baseUrl: "http://127.0.0.1:9",
      apiKey: "unit-key",
      send: fetchSpy,
      retries: 0,
    });
    const edges: Array<(c: ApiClient) => Promise<unknown>> = [
      (c) => c.prediction.searchEvents({ query: "x".repeat(200), limit: 20 }),
      (c) => c.prediction.searchEvents({ query: "x", limit: 1 }),
      (c) => c.prediction.leaderboards({ limit: 100 }),
      (c) => c.prediction.leaderboards({ limit: 1 }),
      (c) => c.prediction.listPositions({ start: 0, end: 0 }),
      (c) => c.prediction.listHistory({ id: 1 }),
      (c) => c.send.inviteHistory({ address: WALLET, page: 1 }),
      (c) => c.tokens.search({ query: terms(100) }),
      (c) =>
        c.swap.build({
          ...swap,
          slippageBps: 0,
          maxAccounts: 64,
          blockhashSlotsToExpiry: 300,
          platformFeeBps: 0,
        }),
      (c) => c.swap.build({ ...swap, slippageBps: 10_000, maxAccounts: 1, blockhashSlotsToExpiry: 1 }),
      (c) => c.recurring.createOrder({ ...recurring, params: { time: { ...time, numberOfOrders: 2 } } }),
      (c) =>
        c.trigger.cancelOrders({ maker: WALLET, orders: Array.from({ length: 100 }, () => OTHER_WALLET) }),
      (c) => c.trigger.cancelOrders({ maker: WALLET }),
      (c) => c.trigger.getOrders({ user: WALLET, orderStatus: "active", page: 1 }),
      (c) => c.recurring.getOrders({ user: WALLET, orderStatus: "history", recurringType: "all", page: 1 }),
    ];
    for (const call of edges) {
      // The empty answer breaks the response schema: what matters is that the request was sent.
      await call(client).catch((e: unknown) => {
        expect(e).toBeInstanceOf(ValidationError);
        expect((e as ValidationError).phase).toBe("response");
      });
    }
    expect(fetchSpy).toHaveBeenCalledTimes(edges.length);
  });
});
