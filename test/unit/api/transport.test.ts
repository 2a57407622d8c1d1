import { inspect } from "node:util";
import { describe, expect, it, vi } from "vitest";
import { createApiClient } from "../../../src/api/client.js";
import {
  ApiError,
  NetworkError,
  PermanentApiError,
  RateLimitedError,
  TimeoutError,
  TransientApiError,
  ValidationError,
} from "../../../src/api/errors.js";
import { HttpTransport, type RequestObservation } from "../../../src/api/http.js";
import { PermanentError, TransientError } from "../../../src/core/errors.js";
import { OTHER_WALLET, position, WALLET } from "../../helpers/fixtures.js";

const API_KEY = "unit-secret-key-7f3a";
const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(typeof body === "string" ? body : JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });

/** A fetch that answers from a list and remembers every request it got. */
function stubFetch(...answers: Array<() => Response>) {
  const requests: Request[] = [];
  const fetchSpy = vi.fn<typeof fetch>(async (input, init) => {
    requests.push(new Request(input, init));
    const answer = answers[Math.min(requests.length - 1, answers.length - 1)];
    if (answer === undefined) throw new Error("no answer configured");
    return answer();
  });
  return { fetchSpy, requests };
}

const client = (fetchSpy: typeof fetch, extra: Partial<Parameters<typeof createApiClient>[0]> = {}) =>
  createApiClient({
    baseUrl: "http://127.0.0.1:9",
    apiKey: API_KEY,
    send: fetchSpy,
    minRetryDelayMs: 1,
    ...extra,
  });

const page = (data: unknown[]) => ({
  data,
  pagination: { start: 0, end: data.length, total: data.length, hasNext: false },
});

describe("responses", () => {
  it("a body that breaks the schema names the endpoint and the field, and is not retried", async () => {
    // A list item alone would be skipped (see api-live-shapes); the page's own fields are not.
    const broken = {
      ...page([position(), position()]),
      pagination: { start: 0, end: 2, total: "2", hasNext: false },
    };
    const { fetchSpy } = stubFetch(() => json(broken));
    const error = await client(fetchSpy)
      .prediction.listPositions({ ownerPubkey: WALLET })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).message).toBe(
      "listPositions: response pagination.total: Invalid input: expected number, received string",
    );
    expect((error as ValidationError).phase).toBe("response");
    expect(fetchSpy).toHaveBeenCalledTimes(1);
  });

  it("malformed or truncated JSON is a ValidationError naming the endpoint", async () => {
    const text = JSON.stringify(page([position()]));
    const { fetchSpy } = stubFetch(() => json(text.slice(0, text.length / 2)));
    const error = await client(fetchSpy)
      .prediction.listPositions()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).field).toBe("(body)");
    expect((error as Error).message).toMatch(/^listPositions: response \(body\): not valid JSON/);
  });

  it("keeps fields the schema does not list, at every level", async () => {
    const p = {
      ...position(),
      futureField: { nested: [1, 2] },
      eventMetadata: { ...position().eventMetadata, extra: "e" },
    };
    const { fetchSpy } = stubFetch(() => json({ ...page([p]), cursor: "next-token" }));
    const answer = await client(fetchSpy).prediction.listPositions();
    expect(answer.cursor).toBe("next-token");
    expect(answer.data[0]?.futureField).toEqual({ nested: [1, 2] });
    expect(answer.data[0]?.eventMetadata.extra).toBe("e");
  });
});

describe("requests", () => {
  it("sends the key, the method, path parameters and a JSON body", async () => {
    const { fetchSpy, requests } = stubFetch(() => json({ data: [] }));
    await client(fetchSpy).prediction.closeAllPositions({ ownerPubkey: WALLET, minSellPriceSlippageBps: 50 });
    const [request] = requests;
    expect(request?.method).toBe("DELETE");
    expect(request?.headers.get("x-api-key")).toBe(API_KEY);
    expect(request?.headers.get("content-type")).toBe("application/json");
    expect(await request?.json()).toEqual({ ownerPubkey: WALLET, minSellPriceSlippageBps: 50 });
  });

  it("encodes a bigint amount exactly in the query", async () => {
    const { fetchSpy, requests } = stubFetch(() => json({}));
    await client(fetchSpy)
      .swap.build({ inputMint: WALLET, outputMint: OTHER_WALLET, taker: WALLET, amount: 2n ** 80n })
      .catch(() => undefined);
    expect(new URL(requests[0]?.url ?? "").searchParams.get("amount")).toBe("1208925819614629174706176");
  });
});

describe("error classes", () => {
  it.each<[number, new (...a: never[]) => Error, new (...a: never[]) => Error]>([
    [400, PermanentApiError, PermanentError],
    [401, PermanentApiError, PermanentError],
    [403, PermanentApiError, PermanentError],
    [404, PermanentApiError, PermanentError],
    [408, TransientApiError, TransientError],
    [429, RateLimitedError, TransientError],
    [500, TransientApiError, TransientError],
    [503, TransientApiError, TransientError],
  ])("HTTP %i is a %o, a %o and an ApiError", async (status, cls, base) => {
    const { fetchSpy } = stubFetch(() =>
      json({ type: "t", message: "m", request_id: "body-id" }, status, { "x-request-id": "hdr-id" }),
    );
    const error = await client(fetchSpy, { retries: 0 })
      .prediction.getMarket("m-1")
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(cls);
    expect(error).toBeInstanceOf(base);
    expect(error).toBeInstanceOf(ApiError);
    const api = error as ApiError;
    expect([api.status, api.endpoint, api.area, api.requestId, api.code]).toEqual([
      status,
      "getMarket",
      "prediction",
      "hdr-id",
      "t",
    ]);
  });

  it("refusals before sending, timeouts and network errors have their classes too", () => {
    expect(new ValidationError("e", "request", [])).toBeInstanceOf(PermanentError);
    expect(new TimeoutError("e", 1)).toBeInstanceOf(TransientError);
    expect(new NetworkError("e", "not-sent", "x")).toBeInstanceOf(TransientError);
    expect(new TimeoutError("e", 1)).not.toBeInstanceOf(ApiError);
  });
});

describe("the API key stays secret", () => {
  it("is absent from util.inspect and JSON of the client and the transport", () => {
    const { fetchSpy } = stubFetch(() => json({}));
    const c = client(fetchSpy);
    const transport = new HttpTransport({ baseUrl: "http://127.0.0.1:9", apiKey: API_KEY });
    for (const text of [
      inspect(c, { depth: 10, showHidden: true }),
      inspect(transport, { showHidden: true }),
      JSON.stringify(transport),
    ])
      expect(text).not.toContain(API_KEY);
  });

  it("is redacted when the service echoes it in an error", async () => {
    const { fetchSpy } = stubFetch(() => json({ error: `unknown key ${API_KEY}` }, 401));
    const error = (await client(fetchSpy)
      .tokens.search({ query: "SOL" })
      .catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(PermanentApiError);
    expect(error.message).toContain("unknown key [redacted]");
    expect(error.message).not.toContain(API_KEY);
  });
});

describe("hooks", () => {
  it("observe every attempt, and a throwing hook does not fail the request", async () => {
    const seen: RequestObservation[] = [];
    const { fetchSpy } = stubFetch(
      () => json({ error: "busy" }, 503),
      () => json({ error: "slow down" }, 429, { "retry-after": "0" }),
      () => json({ data: [] }),
    );
    const hooks = {
      onRequest: (o: RequestObservation) => {
        seen.push(o);
        throw new Error("metrics bug");
      },
    };
    await client(fetchSpy, { hooks }).prediction.closeAllPositions({
      ownerPubkey: WALLET,
      minSellPriceSlippageBps: 100,
    });
    expect(seen.map((o) => [o.endpoint, o.status, o.rateLimited, o.outcome, o.attempt])).toEqual([
      ["closeAllPositions", 503, false, "http_error", 1],
      ["closeAllPositions", 429, true, "http_error", 2],
      ["closeAllPositions", 200, false, "ok", 3],
    ]);
    expect(seen.every((o) => o.durationMs >= 0)).toBe(true);
  });
});
