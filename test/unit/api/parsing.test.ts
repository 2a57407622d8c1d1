import { describe, expect, it } from "vitest";
import { createApiClient } from "../../../src/api/client.js";
import { parseErrorBody } from "../../../src/api/error-body.js";
import { ValidationError } from "../../../src/api/errors.js";
import { buildUrl, encodeJsonBody, encodeValue } from "../../../src/api/request-url.js";
import { serverRequestedDelayMs } from "../../../src/api/retry-after.js";
import { formatPath } from "../../../src/api/validate.js";
import type { Area } from "../../../src/core/schemas/common.js";

describe("error bodies of every area", () => {
  it.each<[string, Area, unknown, { message: string; code?: string; param?: string; requestId?: string }]>([
    [
      "prediction",
      "prediction",
      {
        type: "invalid_request_error",
        message: "limit: must be 1 to 100",
        code: "invalid_param",
        param: "limit",
        request_id: "r-1",
      },
      { message: "limit: must be 1 to 100", code: "invalid_param", param: "limit", requestId: "r-1" },
    ],
    [
      "prediction without code",
      "prediction",
      { type: "api_error", message: "boom", request_id: "r-2" },
      { message: "boom", code: "api_error", requestId: "r-2" },
    ],
    [
      "trigger",
      "trigger",
      { error: "order too small", code: 400, cause: "min_order_usd" },
      { message: "order too small (min_order_usd)", code: "400" },
    ],
    [
      "trigger without cause",
      "trigger",
      { error: "bad maker", code: "E42" },
      { message: "bad maker", code: "E42" },
    ],
    [
      "recurring",
      "recurring",
      { code: 400, error: "params: exactly one", status: "Bad Request" },
      { message: "params: exactly one", code: "400" },
    ],
    ["token search", "ultra", { error: "query: is required" }, { message: "query: is required" }],
    [
      "swap",
      "swap",
      { error: "slippageBps: must be 0 to 10000" },
      { message: "slippageBps: must be 0 to 10000" },
    ],
    ["send", "send", { error: "page: must be >= 1" }, { message: "page: must be >= 1" }],
    [
      "another area's shape (a gateway)",
      "swap",
      { type: "x", message: "from prediction", request_id: "r-3" },
      { message: "from prediction", code: "x", requestId: "r-3" },
    ],
  ])("%s", (_name, area, body, expected) => {
    const parsed = parseErrorBody(area, JSON.stringify(body), "Bad Request");
    expect(parsed).toEqual({ code: undefined, param: undefined, requestId: undefined, ...expected });
  });

  it.each([
    ["<html>502 Bad Gateway</html>", "<html>502 Bad Gateway</html>"],
    ["", "Service Unavailable"],
    ['{"unexpected":true}', '{"unexpected":true}'],
    ["x".repeat(1000), `${"x".repeat(200)}…`],
  ])("falls back to the raw text for %j", (text, message) => {
    expect(parseErrorBody("prediction", text, "Service Unavailable").message).toBe(message);
  });

  it.each<[string, Area, unknown]>([
    ["prediction", "prediction", { type: "t", message: "m", code: "c", param: "p", request_id: "r" }],
    ["trigger", "trigger", { error: "m", code: "c", cause: "k" }],
    ["recurring", "recurring", { error: "m", code: "c", status: "s" }],
    ["plain", "swap", { error: "m" }],
  ])("cuts every field of a long %s error body to the raw text's bound", (_name, area, body) => {
    const long = Object.fromEntries(
      Object.entries(body as Record<string, string>).map(([k, v]) => [k, v.repeat(100_000)]),
    );
    const parsed = parseErrorBody(area, JSON.stringify(long), "Bad Request");
    for (const value of Object.values(parsed))
      if (value !== undefined) {
        expect(value.length).toBeLessThanOrEqual(201);
        expect(value.endsWith("…")).toBe(true);
      }
  });
});

describe("server-requested delay of a 429", () => {
  const now = Date.parse("2026-01-01T00:00:00Z");
  it.each<[string, Record<string, string>, number | undefined]>([
    ["Retry-After seconds", { "retry-after": "2" }, 2000],
    ["Retry-After fractional seconds", { "retry-after": "0.25" }, 250],
    ["Retry-After HTTP date", { "retry-after": "Thu, 01 Jan 2026 00:00:03 GMT" }, 3000],
    ["Retry-After date in the past", { "retry-after": "Wed, 31 Dec 2025 23:59:00 GMT" }, 0],
    [
      "Retry-After wins over x-ratelimit-reset",
      { "retry-after": "1", "x-ratelimit-reset": String(now / 1000 + 30) },
      1000,
    ],
    ["x-ratelimit-reset (Unix seconds)", { "x-ratelimit-reset": String(now / 1000 + 5) }, 5000],
    ["x-ratelimit-reset in the past", { "x-ratelimit-reset": String(now / 1000 - 5) }, 0],
    [
      "garbage Retry-After falls through to reset",
      { "retry-after": "soon", "x-ratelimit-reset": String(now / 1000 + 1) },
      1000,
    ],
    ["nothing", {}, undefined],
  ])("%s", (_name, headers, expected) => {
    expect(serverRequestedDelayMs(new Headers(headers), now)).toBe(expected);
  });
});

describe("request URLs", () => {
  it("fills path parameters, encoded, and puts the rest in the query", () => {
    const url = buildUrl("http://h:1/base/", "/prediction/v1/events/:eventId/markets/:marketId", {
      eventId: "a/b c",
      marketId: "m?1",
      start: 0,
      includeMarkets: false,
      skipped: undefined,
      nulled: null,
    });
    expect(url.pathname).toBe("/base/prediction/v1/events/a%2Fb%20c/markets/m%3F1");
    expect([...url.searchParams]).toEqual([
      ["start", "0"],
      ["includeMarkets", "false"],
    ]);
  });

  it.each<[unknown, string]>([
    [123_456_789_012_345_678_901_234_567_890n, "123456789012345678901234567890"],
    [1e21, "1000000000000000000000"],
    [42, "42"],
    [0.5, "0.5"],
    [true, "true"],
    ["x", "x"],
  ])("encodes %s exactly", (value, text) => {
    expect(encodeValue(value)).toBe(text);
  });

  it("refuses values that have no exact text", () => {
    expect(() => encodeValue(Number.NaN)).toThrow();
    expect(() => encodeValue({})).toThrow();
  });

  it("writes bigints in JSON bodies as decimal strings", () => {
    expect(encodeJsonBody({ a: 2n ** 70n, b: [1n] })).toBe('{"a":"1180591620717411303424","b":["1"]}');
  });
});

describe("field paths", () => {
  it.each<[PropertyKey[], string]>([
    [["data", 3, "pnlUsd"], "data[3].pnlUsd"],
    [[0, "id"], "[0].id"],
    [["params", "time", "numberOfOrders"], "params.time.numberOfOrders"],
    [[], ""],
  ])("%j → %s", (path, text) => {
    expect(formatPath(path)).toBe(text);
  });
});

describe("trigger and recurring answers as the live service sends them", () => {
  const MAKER = "8Vx4Wq1GkJv3rT9uPzN2mYc5Hd7LbE6sFa1QwXyZk3Pn";
  const ORDER = "5Fh1kT9qWz3Rr8NcVb2Lm4Xy6Pd7Js1Qa9Ge3Ku5Tw2M";
  const MINT = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
  const SOL = "So11111111111111111111111111111111111111112";
  const answering = (body: unknown) =>
    createApiClient({
      baseUrl: "http://127.0.0.1:9",
      apiKey: "unit-key",
      retries: 0,
      send: async () => new Response(JSON.stringify(body), { status: 200 }),
    });
  const execute = { requestId: "r1", signedTransaction: "AQID" };

  it("reads a trigger execute success without code, and a failure with one", async () => {
    expect(await answering({ signature: "5ig", status: "Success" }).trigger.execute(execute)).toEqual({
      signature: "5ig",
      status: "Success",
    });
    const failed = { signature: "5ig", status: "Failed", code: 6001, error: "slippage" };
    expect(await answering(failed).trigger.execute(execute)).toEqual(failed);
  });

  it("reads a recurring execute success with error: null", async () => {
    const answer = { signature: "5ig", status: "Success", order: ORDER, error: null };
    expect(await answering(answer).recurring.execute(execute)).toEqual(answer);
  });

  it("reads a trigger createOrder answer without order", async () => {
    const built = await answering({ requestId: "r1", transaction: "AQID" }).trigger.createOrder({
      inputMint: MINT,
      outputMint: SOL,
      maker: MAKER,
      payer: MAKER,
      params: { makingAmount: "10000000", takingAmount: "1" },
    });
    expect(built).toEqual({ requestId: "r1", transaction: "AQID" });
  });

  it.each<[string, unknown, string]>([
    ["a status outside Success/Failed", { signature: "5ig", status: "Pending" }, "status"],
    ["no signature", { status: "Success" }, "signature"],
    ["a code that is not a number", { signature: "5ig", status: "Success", code: "zero" }, "code"],
  ])("an execute answer with %s is a response ValidationError naming the field", async (_n, body, field) => {
    const error = await answering(body)
      .trigger.execute(execute)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).phase).toBe("response");
    expect((error as ValidationError).field).toBe(field);
    expect((error as ValidationError).message).toContain(`executeTrigger: response ${field}: `);
  });

  it("reads order lists with ISO or numeric times and unknown extra members", async () => {
    const trigger = await answering({
      user: MAKER,
      orderStatus: "history",
      orders: [
        {
          orderKey: ORDER,
          userPubkey: MAKER,
          inputMint: MINT,
          outputMint: SOL,
          makingAmount: "10.5",
          takingAmount: "0.07",
          status: "Completed",
          createdAt: "2026-01-01T00:00:00Z",
          expiredAt: null,
          trades: [],
        },
      ],
      page: 1,
      totalPages: 1,
    }).trigger.getOrders({ user: MAKER, orderStatus: "history" });
    expect(trigger.orders[0]).toMatchObject({ orderKey: ORDER, status: "Completed", trades: [] });
    const recurring = await answering({
      time: [
        {
          orderKey: ORDER,
          userPubkey: MAKER,
          inputMint: MINT,
          outputMint: SOL,
          createdAt: 1_767_225_600,
          userClosed: false,
        },
      ],
    }).recurring.getOrders({ user: MAKER, orderStatus: "active", recurringType: "time" });
    expect(recurring.time?.[0]?.orderKey).toBe(ORDER);
  });
});
