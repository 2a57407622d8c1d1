import { Writable } from "node:stream";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { type ApiClientOptions, createApiClient } from "../../../src/api/client.js";
import {
  ApiError,
  NetworkError,
  PaginationError,
  PermanentApiError,
  RateLimitedError,
  TimeoutError,
  TransientApiError,
  ValidationError,
} from "../../../src/api/errors.js";
import type { RequestObservation } from "../../../src/api/http.js";
import { collectAll, iteratePositions } from "../../../src/api/pagination.js";
import { position, WALLET } from "../../helpers/fixtures.js";
import { json, type StubHandler, sleep, startStub } from "./stub-server.js";

const API_KEY = "integration-secret-key-91c2";

const market = {
  marketId: "m-1",
  status: "open",
  result: null,
  openTime: 1_700_000_000,
  closeTime: 1_800_000_000,
  resolveAt: null,
  pricing: {
    buyYesPriceUsd: 650_000,
    buyNoPriceUsd: 350_000,
    sellYesPriceUsd: 640_000,
    sellNoPriceUsd: 340_000,
    volume: 12,
  },
};
const executed = { signature: "5ig", status: "Success", code: 0 };

let stub: Awaited<ReturnType<typeof startStub>> | undefined;
afterEach(async () => {
  await stub?.close();
  stub = undefined;
});

async function setup(handler: StubHandler, options: Partial<ApiClientOptions> = {}) {
  stub = await startStub(handler);
  const observations: RequestObservation[] = [];
  const client = createApiClient({
    baseUrl: stub.url,
    apiKey: API_KEY,
    timeoutMs: 2_000,
    retries: 3,
    minRetryDelayMs: 10,
    maxRetryDelayMs: 50,
    hooks: { onRequest: (o) => observations.push(o) },
    ...options,
  });
  return { client, arrivals: stub.arrivals, observations };
}

/** Answers from a script, one entry per arrival; the last entry repeats. */
function script(...steps: StubHandler[]): StubHandler {
  let n = 0;
  return (request, reply, arrival) => {
    const step = steps[Math.min(n, steps.length - 1)];
    n += 1;
    return step?.(request, reply, arrival);
  };
}

const fail = (error: unknown) => error;

describe("429", () => {
  it("waits at least Retry-After before the next attempt (gap measured at the server)", async () => {
    const { client, arrivals } = await setup(
      script(
        (_q, r) =>
          json(
            r,
            429,
            { type: "rate_limit_error", message: "slow down", request_id: "q1" },
            { "retry-after": "1" },
          ),
        (_q, r) => json(r, 200, market),
      ),
    );
    expect(await client.prediction.getMarket("m-1")).toMatchObject({ marketId: "m-1" });
    expect(arrivals).toHaveLength(2);
    expect((arrivals[1]?.atMs ?? 0) - (arrivals[0]?.atMs ?? 0)).toBeGreaterThanOrEqual(1000);
  });

  it("waits until x-ratelimit-reset when there is no Retry-After", async () => {
    let resetUnixSeconds = 0;
    const { client, arrivals } = await setup(
      script(
        (_q, r) => {
          resetUnixSeconds = Math.ceil(Date.now() / 1000) + 1;
          return json(r, 429, { error: "rate limited" }, { "x-ratelimit-reset": String(resetUnixSeconds) });
        },
        (_q, r) => json(r, 200, []),
      ),
    );
    expect(await client.tokens.search({ query: "SOL" })).toEqual([]);
    expect(arrivals).toHaveLength(2);
    expect(arrivals[1]?.wallMs).toBeGreaterThanOrEqual(resetUnixSeconds * 1000);
  });

  it("is retried even on a non-idempotent execute (nothing took effect)", async () => {
    const { client, arrivals } = await setup(
      script(
        (_q, r) => json(r, 429, { error: "busy", code: 429 }, { "retry-after": "0" }),
        (_q, r) => json(r, 200, executed),
      ),
    );
    expect(await client.trigger.execute({ requestId: "r1", signedTransaction: "AQID" })).toMatchObject(
      executed,
    );
    expect(arrivals).toHaveLength(2);
  });

  it("surfaces RateLimitedError with the delay when the service keeps refusing", async () => {
    const { client, arrivals } = await setup(
      (_q, r) =>
        json(r, 429, { code: 429, error: "plan limit", status: "Too Many Requests" }, { "retry-after": "0" }),
      { retries: 2 },
    );
    const error = await client.recurring.execute({ requestId: "r1", signedTransaction: "AQID" }).catch(fail);
    expect(error).toBeInstanceOf(RateLimitedError);
    expect((error as RateLimitedError).retryAfterMs).toBe(0);
    expect(arrivals).toHaveLength(3);
  });

  it("does not wait out a Retry-After beyond maxRetryAfterMs", async () => {
    const { client, arrivals } = await setup(
      (_q, r) => json(r, 429, { error: "later" }, { "retry-after": "3600" }),
      {
        maxRetryAfterMs: 5_000,
      },
    );
    const error = await client.tokens.search({ query: "SOL" }).catch(fail);
    expect(error).toBeInstanceOf(RateLimitedError);
    expect((error as RateLimitedError).retryAfterMs).toBe(3_600_000);
    expect(arrivals).toHaveLength(1);
  });
});

describe("5xx", () => {
  it("is retried on an idempotent endpoint, then surfaced as ApiError with the request id", async () => {
    let n = 0;
    const { client, arrivals } = await setup((_q, r) => {
      n += 1;
      return json(
        r,
        503,
        { type: "api_error", message: "overloaded", request_id: `body-${n}` },
        { "x-request-id": `req-${n}` },
      );
    });
    const error = await client.prediction.getMarket("m-1").catch(fail);
    expect(arrivals).toHaveLength(4);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toBeInstanceOf(TransientApiError);
    expect(error).toMatchObject({
      status: 503,
      requestId: "req-4",
      code: "api_error",
      endpoint: "getMarket",
    });
    expect((error as Error).message).toContain("req-4");
  });

  it("then success returns the answer", async () => {
    const { client, arrivals } = await setup(
      script(
        (_q, r) => json(r, 500, { type: "api_error", message: "x", request_id: "a" }),
        (_q, r) => json(r, 502, "<html>bad gateway</html>"),
        (_q, r) => json(r, 200, market),
      ),
    );
    expect(await client.prediction.getMarket("m-1")).toMatchObject(market);
    expect(arrivals).toHaveLength(3);
  });

  it("waits out a 503's Retry-After before the next attempt", async () => {
    const { client, arrivals } = await setup(
      script(
        (_q, r) => json(r, 503, { type: "api_error", message: "maintenance" }, { "retry-after": "1" }),
        (_q, r) => json(r, 200, market),
      ),
    );
    expect(await client.prediction.getMarket("m-1")).toMatchObject({ marketId: "m-1" });
    expect(arrivals).toHaveLength(2);
    expect((arrivals[1]?.atMs ?? 0) - (arrivals[0]?.atMs ?? 0)).toBeGreaterThanOrEqual(1000);
  });

  it("surfaces a 503 at once when its Retry-After is beyond maxRetryAfterMs", async () => {
    const { client, arrivals } = await setup(
      (_q, r) => json(r, 503, { type: "api_error", message: "down for an hour" }, { "retry-after": "3600" }),
      { maxRetryAfterMs: 5_000 },
    );
    const error = await client.prediction.getMarket("m-1").catch(fail);
    expect(error).toBeInstanceOf(TransientApiError);
    expect((error as TransientApiError).retryAfterMs).toBe(3_600_000);
    expect(arrivals).toHaveLength(1);
  });

  it.each([
    [
      "trigger",
      (c: ReturnType<typeof createApiClient>) =>
        c.trigger.execute({ requestId: "r", signedTransaction: "AQID" }),
    ],
    [
      "recurring",
      (c: ReturnType<typeof createApiClient>) =>
        c.recurring.execute({ requestId: "r", signedTransaction: "AQID" }),
    ],
  ])("is NOT retried on the %s execute (it may have taken effect)", async (_area, call) => {
    const { client, arrivals } = await setup((_q, r) => json(r, 500, { error: "internal", code: 500 }));
    const error = await call(client).catch(fail);
    expect(error).toBeInstanceOf(TransientApiError);
    expect(arrivals).toHaveLength(1);
  });
});

describe("network errors and timeouts", () => {
  const dropConnection: StubHandler = (request, reply) => {
    reply.hijack();
    request.raw.socket.destroy();
  };

  it("a dropped connection is retried on an idempotent endpoint", async () => {
    const { client, arrivals } = await setup(script(dropConnection, (_q, r) => json(r, 200, market)));
    expect(await client.prediction.getMarket("m-1")).toMatchObject(market);
    expect(arrivals).toHaveLength(2);
  });

  it("a dropped connection on execute is not retried: it may have been sent", async () => {
    const { client, arrivals } = await setup(dropConnection);
    const error = await client.trigger.execute({ requestId: "r", signedTransaction: "AQID" }).catch(fail);
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).delivery).toBe("maybe-sent");
    expect(arrivals).toHaveLength(1);
  });

  it("a refused connection is retried even for execute: nothing was sent", async () => {
    const closed = await startStub(() => undefined);
    const url = closed.url;
    await closed.close();
    const observations: RequestObservation[] = [];
    const client = createApiClient({
      baseUrl: url,
      apiKey: API_KEY,
      retries: 2,
      minRetryDelayMs: 5,
      hooks: { onRequest: (o) => observations.push(o) },
    });
    const error = await client.trigger.execute({ requestId: "r", signedTransaction: "AQID" }).catch(fail);
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).delivery).toBe("not-sent");
    expect(observations.map((o) => o.outcome)).toEqual(["network_error", "network_error", "network_error"]);
  });

  it("no answer within timeoutMs is a TimeoutError, retried only where safe", async () => {
    const slow: StubHandler = async (_q, r) => {
      await sleep(1_000);
      return json(r, 200, market);
    };
    const { client, arrivals } = await setup(slow, { timeoutMs: 100, retries: 1 });
    const read = await client.prediction.getMarket("m-1").catch(fail);
    expect(read).toBeInstanceOf(TimeoutError);
    expect(arrivals).toHaveLength(2);
    const execute = await client.trigger.execute({ requestId: "r", signedTransaction: "AQID" }).catch(fail);
    expect(execute).toBeInstanceOf(TimeoutError);
    expect((execute as Error).message).toContain("executeTrigger");
    expect(arrivals).toHaveLength(3);
  });
});

describe("bodies", () => {
  it("malformed JSON is a ValidationError naming the endpoint", async () => {
    const { client } = await setup((_q, r) => json(r, 200, '{"marketId":"m-1","status":'));
    const error = await client.prediction.getMarket("m-1").catch(fail);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toMatch(/^getMarket: response \(body\): not valid JSON/);
  });

  it("a body that breaks the schema names endpoint and field", async () => {
    const { client } = await setup((_q, r) =>
      json(r, 200, { ...market, pricing: { ...market.pricing, volume: "12" } }),
    );
    const error = await client.prediction.getMarket("m-1").catch(fail);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).field).toBe("pricing.volume");
    expect((error as Error).message).toContain("getMarket: response pricing.volume:");
  });

  it("unknown fields are kept", async () => {
    const { client } = await setup((_q, r) =>
      json(r, 200, { ...market, newField: 7, pricing: { ...market.pricing, spread: 1 } }),
    );
    const answer = await client.prediction.getMarket("m-1");
    expect(answer.newField).toBe(7);
    expect(answer.pricing?.spread).toBe(1);
  });
});

describe("error bodies of each area", () => {
  type Call = (c: ReturnType<typeof createApiClient>) => Promise<unknown>;
  it.each<[string, Call, unknown, Record<string, unknown>]>([
    [
      "prediction",
      (c) => c.prediction.leaderboards({ limit: 5 }),
      {
        type: "invalid_request_error",
        message: "limit: bad",
        code: "invalid_param",
        param: "limit",
        request_id: "pr-1",
      },
      { code: "invalid_param", param: "limit", serviceMessage: "limit: bad", area: "prediction" },
    ],
    [
      "trigger",
      (c) => c.trigger.cancelOrder({ maker: WALLET, order: WALLET }),
      { error: "order not found", code: 404, cause: "no_order" },
      { code: "404", serviceMessage: "order not found (no_order)", area: "trigger" },
    ],
    [
      "recurring",
      (c) => c.recurring.execute({ requestId: "r", signedTransaction: "AQID" }),
      { code: 400, error: "bad transaction", status: "Bad Request" },
      { code: "400", serviceMessage: "bad transaction", area: "recurring" },
    ],
    [
      "ultra",
      (c) => c.tokens.search({ query: "SOL" }),
      { error: "bad query" },
      { serviceMessage: "bad query", area: "ultra" },
    ],
    [
      "swap",
      (c) => c.swap.build({ inputMint: WALLET, outputMint: WALLET, amount: "1", taker: WALLET }),
      { error: "no route" },
      { serviceMessage: "no route", area: "swap" },
    ],
    [
      "send",
      (c) => c.send.inviteHistory({ address: WALLET }),
      { error: "unknown address" },
      { serviceMessage: "unknown address", area: "send" },
    ],
  ])("%s", async (_area, call, body, expected) => {
    const { client } = await setup((_q, r) => json(r, 400, body, { "x-request-id": "hdr" }));
    const error = await call(client).catch(fail);
    expect(error).toBeInstanceOf(PermanentApiError);
    // The x-request-id header wins over a request id in the body.
    expect(error).toMatchObject({ status: 400, requestId: "hdr", ...expected });
  });

  it("prediction's request_id is kept when there is no x-request-id header", async () => {
    const body = { type: "invalid_request_error", message: "m", request_id: "pr-1" };
    const { client } = await setup((_q, r) => json(r, 400, body));
    expect(await client.prediction.leaderboards().catch(fail)).toMatchObject({ requestId: "pr-1" });
  });
});

describe("the API key", () => {
  it("is sent on every request and appears in no error message and no log line", async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const logger = pino({ level: "trace" }, sink);
    const { client, arrivals } = await setup(
      script(
        (_q, r) => json(r, 503, { type: "api_error", message: "x", request_id: "a" }),
        (_q, r) =>
          json(r, 429, { type: "rate_limit_error", message: "x", request_id: "b" }, { "retry-after": "0" }),
        (_q, r) => json(r, 200, market),
        (_q, r) => json(r, 401, { error: `invalid key ${API_KEY}` }),
        (_q, r) => json(r, 200, "{broken"),
      ),
      { logger },
    );
    const errors: unknown[] = [];
    await client.prediction.getMarket("m-1");
    errors.push(await client.tokens.search({ query: "SOL" }).catch(fail));
    errors.push(await client.prediction.getMarket("m-1").catch(fail));
    errors.push(await client.prediction.getMarket("").catch(fail));
    expect(arrivals.length).toBeGreaterThanOrEqual(5);
    expect(arrivals.every((a) => a.headers["x-api-key"] === API_KEY)).toBe(true);
    expect(lines.length).toBeGreaterThan(5);
    expect(lines.some((l) => l.includes('"msg":"api request"'))).toBe(true);
    for (const line of lines) expect(line).not.toContain(API_KEY);
    for (const error of errors) {
      expect(error).toBeInstanceOf(Error);
      expect(String((error as Error).message)).not.toContain(API_KEY);
      expect(JSON.stringify(error)).not.toContain(API_KEY);
    }
  });
});

describe("redirects", () => {
  /** A second listener (another origin) the service's answer points to; it records what reaches it. */
  async function elsewhere() {
    const other = await startStub((_q, r) => json(r, 200, market));
    return other;
  }

  it.each([301, 302, 303, 307, 308])(
    "a %i is a PermanentApiError naming the status, not followed: the key never reaches the other origin",
    async (status) => {
      const other = await elsewhere();
      try {
        const { client, arrivals, observations } = await setup((_q, r) =>
          r
            .code(status)
            .header("location", `${other.url}/prediction/v1/markets/m-1?token=elsewhere-secret`)
            .send(""),
        );
        const error = await client.prediction.getMarket("m-1").catch(fail);
        expect(error).toBeInstanceOf(PermanentApiError);
        const refusal = error as PermanentApiError;
        expect(refusal.status).toBe(status);
        expect(refusal.code).toBe("redirect_refused");
        expect(refusal.message).toContain(`getMarket: HTTP ${status} redirect_refused`);
        expect(refusal.message).toContain(`redirect (to ${other.url})`);
        expect(refusal.message).not.toContain("elsewhere-secret");
        expect(refusal.message).not.toContain(API_KEY);
        expect(other.arrivals).toHaveLength(0);
        // Not retried either: the same request would be redirected again.
        expect(arrivals).toHaveLength(1);
        expect(observations.map((o) => [o.status, o.outcome])).toEqual([[status, "http_error"]]);
      } finally {
        await other.close();
      }
    },
  );

  it("a 307 on execute (a POST with a signed transaction) carries neither key nor body elsewhere", async () => {
    const other = await elsewhere();
    try {
      const { client, arrivals } = await setup((_q, r) =>
        r.code(307).header("location", `${other.url}/trigger/v1/execute`).send(""),
      );
      const error = await client.trigger.execute({ requestId: "r", signedTransaction: "AQID" }).catch(fail);
      expect(error).toBeInstanceOf(PermanentApiError);
      expect((error as PermanentApiError).status).toBe(307);
      expect(arrivals).toHaveLength(1);
      expect(other.arrivals).toHaveLength(0);
    } finally {
      await other.close();
    }
  });
});

describe("pagination", () => {
  it("walks positions to the end with the page size", async () => {
    const all = Array.from({ length: 23 }, () => position());
    const { client, arrivals } = await setup((request, reply) => {
      const q = request.query as { start?: string; end?: string; ownerPubkey?: string };
      const start = Number(q.start ?? 0);
      const end = Math.min(Number(q.end ?? 10), all.length);
      return json(reply, 200, {
        data: all.slice(start, end),
        pagination: { start, end, total: all.length, hasNext: end < all.length },
      });
    });
    const walked = await collectAll(iteratePositions(client, { ownerPubkey: WALLET }, { pageSize: 5 }));
    expect(walked.map((p) => p.pubkey)).toEqual(all.map((p) => p.pubkey));
    expect(arrivals.map((a) => new URL(a.url, "http://x").searchParams.toString())).toEqual([
      `start=0&end=5&ownerPubkey=${WALLET}`,
      `start=5&end=10&ownerPubkey=${WALLET}`,
      `start=10&end=15&ownerPubkey=${WALLET}`,
      `start=15&end=20&ownerPubkey=${WALLET}`,
      `start=20&end=25&ownerPubkey=${WALLET}`,
    ]);
  });
});

describe("a hostile service", () => {
  it("gets no secret into an error through the request id header, code, param or request_id", async () => {
    const { client } = await setup(
      script(
        (_q, r) =>
          json(r, 400, {
            type: "invalid_request_error",
            message: `bad key ${API_KEY}`,
            code: `c_${API_KEY}`,
            param: `p_${API_KEY}`,
            request_id: `r_${API_KEY}`,
          }),
        (_q, r) =>
          json(r, 401, { error: "no" }, { "x-api-gateway-request-id": `gw ${API_KEY} ${"z".repeat(5_000)}` }),
      ),
    );
    const fromBody = await client.prediction.getEvent("ev1").catch(fail);
    const fromHeader = await client.prediction.getEvent("ev1").catch(fail);
    for (const error of [fromBody, fromHeader]) {
      expect(error).toBeInstanceOf(PermanentApiError);
      expect((error as Error).message).not.toContain(API_KEY);
      expect(JSON.stringify(error)).not.toContain(API_KEY);
      expect((error as PermanentApiError).requestId ?? "").not.toContain(API_KEY);
      expect((error as Error).message.length).toBeLessThan(1_000);
    }
    expect(fromBody).toMatchObject({
      code: "c_[redacted]",
      param: "p_[redacted]",
      requestId: "r_[redacted]",
    });
  });

  it("cuts a JSON error message of 1 MB to the raw text's bound", async () => {
    const { client } = await setup((_q, r) => json(r, 400, { error: "x".repeat(1024 * 1024) }));
    const error = (await client.tokens.search({ query: "SOL" }).catch(fail)) as PermanentApiError;
    expect(error).toBeInstanceOf(PermanentApiError);
    expect(error.serviceMessage).toBe(`${"x".repeat(200)}…`);
    expect(error.message.length).toBeLessThan(300);
  });

  it("names the network failure once when the connection breaks mid-body", async () => {
    const { client } = await setup(
      (request, reply) => {
        reply.hijack();
        reply.raw.writeHead(200, { "content-type": "application/json", "content-length": "100" });
        reply.raw.write('{"marketId":');
        setTimeout(() => request.raw.socket.destroy(), 20);
      },
      { retries: 0 },
    );
    const error = (await client.prediction.getMarket("m-1").catch(fail)) as NetworkError;
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.message.match(/network error/g)).toHaveLength(1);
    expect(error.message).toMatch(/^getMarket: network error \(may have been sent\): /);
  });

  it("refuses a list answer flooding its page (over ten times the items asked for), at once", async () => {
    const { client, arrivals } = await setup((_q, r) =>
      json(r, 200, {
        data: new Array(5_000).fill(0),
        pagination: { start: 0, end: 100, total: 100, hasNext: false },
      }),
    );
    const error = await client.prediction
      .listPositions({ ownerPubkey: WALLET, start: 0, end: 100 })
      .catch(fail);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toBe(
      "listPositions: response data: holds 5000 items, more than the 1000 a page of this request may hold",
    );
    expect(arrivals).toHaveLength(1);
  });

  it("logs a few of the items it skips and their count, not one line per item", async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const skipped: number[] = [];
    const { client } = await setup(
      (_q, r) =>
        json(r, 200, {
          data: [position(), ...new Array(99).fill(0)],
          pagination: { start: 0, end: 100, total: 100, hasNext: false },
        }),
      { logger: pino({ level: "info" }, sink), hooks: { onItemsSkipped: (_e, n) => skipped.push(n) } },
    );
    const page = await client.prediction.listPositions({ ownerPubkey: WALLET, start: 0, end: 100 });
    expect(page.data).toHaveLength(1);
    expect(skipped).toEqual([99]);
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0] ?? "{}");
    expect(line).toMatchObject({ endpoint: "listPositions", skipped: 99 });
    expect(line.items).toHaveLength(3);
  });

  it("stops at an empty page that claims more instead of walking pages without end", async () => {
    const { client, arrivals } = await setup((request, reply) => {
      const q = request.query as { start?: string; end?: string };
      const start = Number(q.start ?? 0);
      const end = Number(q.end ?? 0);
      return json(reply, 200, { data: [], pagination: { start, end, total: 1_000, hasNext: true } });
    });
    const error = await collectAll(iteratePositions(client, { ownerPubkey: WALLET })).catch(fail);
    expect(error).toBeInstanceOf(PaginationError);
    expect((error as Error).message).toMatch(/^listPositions: /);
    expect((error as Error).message).toContain("holds no item yet says hasNext");
    expect(arrivals).toHaveLength(1);
  });

  it("takes a page whose end reaches the total as the last, whatever hasNext says", async () => {
    const { client, arrivals } = await setup((request, reply) => {
      const q = request.query as { start?: string; end?: string };
      const start = Number(q.start ?? 0);
      const end = Number(q.end ?? 0);
      return json(reply, 200, { data: [], pagination: { start, end, total: 0, hasNext: true } });
    });
    expect(await collectAll(iteratePositions(client, { ownerPubkey: WALLET }))).toEqual([]);
    expect(arrivals).toHaveLength(1);
  });
});
