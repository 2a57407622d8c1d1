import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Area } from "../../../src/core/schemas/common.js";
import { SandboxError } from "../../../src/sandbox/world/errors.js";
import { expectAreaError } from "./error-shapes.js";
import { echoHandlers, KEY, PK, type RunningServer, startTestServer } from "./http-harness.js";

/** One GET per area, each valid apart from the key. */
const perArea: ReadonlyArray<readonly [Area, string]> = [
  ["prediction", `/prediction/v1/positions?ownerPubkey=${PK}`],
  ["ultra", "/ultra/v1/search?query=SOL"],
  ["swap", `/swap/v2/build?inputMint=${PK}&outputMint=${PK}&amount=1&taker=${PK}`],
  ["trigger", "/trigger/v1/execute"],
  ["recurring", "/recurring/v1/execute"],
  ["send", `/send/v1/invite-history?address=${PK}`],
];

let sandbox: RunningServer;
beforeAll(async () => {
  sandbox = await startTestServer({
    handlers: echoHandlers({
      getMarket: ({ params }) => {
        throw new SandboxError(404, {
          code: "market_not_found",
          message: `no market ${params.marketId}`,
          param: "marketId",
        });
      },
      getEvent: () => {
        throw new TypeError("a bug in the world");
      },
      listOrders: () => ({ big: 2n ** 70n }),
    }),
  });
});
afterAll(() => sandbox.close());

function call(path: string, headers: Record<string, string>) {
  const isPost = path.includes("execute");
  return fetch(`${sandbox.url}${path}`, {
    method: isPost ? "POST" : "GET",
    headers: isPost ? { ...headers, "content-type": "application/json" } : headers,
    ...(isPost ? { body: JSON.stringify({ requestId: "r", signedTransaction: "AQAB" }) } : {}),
  });
}

describe("sandbox auth", () => {
  it.each(perArea)(
    "%s: no key is answered at the keyless limits, as the live service does",
    async (_, path) => {
      const response = await call(path, {});
      expect(response.status).toBe(200);
      // The live gateway's request id header, on every answer.
      expect(response.headers.get("x-api-gateway-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    },
  );

  it.each(perArea)("%s: an unknown key is a 401 that does not repeat the key", async (area, path) => {
    const response = await call(path, { "x-api-key": "guessed-secret-123" });
    const body = await expectAreaError(response, { status: 401, area, param: "x-api-key" });
    expect(JSON.stringify(body)).not.toContain("guessed-secret-123");
  });

  it.each(perArea)("%s: the right key gets through", async (_, path) => {
    expect((await call(path, { "x-api-key": KEY })).status).toBe(200);
  });
});

describe("sandbox routing and errors", () => {
  it("an unknown path is a JSON 404", async () => {
    const response = await sandbox.get("/nowhere");
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: "no endpoint GET /nowhere" });
  });

  it("an unknown path inside an area is a 404 in that area's shape, without a key too", async () => {
    await expectAreaError(await sandbox.get("/prediction/v1/nothing", {}), {
      status: 404,
      area: "prediction",
    });
    await expectAreaError(await sandbox.get("/recurring/v1/nothing"), { status: 404, area: "recurring" });
  });

  it("a handler's SandboxError keeps its status, code and parameter", async () => {
    const body = await expectAreaError(await sandbox.get("/prediction/v1/markets/m-9"), {
      status: 404,
      area: "prediction",
      param: "marketId",
      rule: "no market m-9",
    });
    expect(body.code).toBe("market_not_found");
  });

  it("any other handler failure is a 500 in the area's shape that hides the cause", async () => {
    const body = await expectAreaError(await sandbox.get("/prediction/v1/events/e-1"), {
      status: 500,
      area: "prediction",
    });
    expect(body.type).toBe("api_error");
    expect(JSON.stringify(body)).not.toContain("bug");
  });

  it("bigints in handler results go out as exact decimal strings", async () => {
    const response = await sandbox.get("/prediction/v1/orders");
    expect(await response.json()).toEqual({ big: (2n ** 70n).toString() });
  });

  it("every response carries a fresh x-request-id", async () => {
    const responses = await Promise.all([
      sandbox.get("/prediction/v1/orders"),
      sandbox.get("/prediction/v1/orders"),
      sandbox.get("/prediction/v1/leaderboards?limit=0"),
      sandbox.get("/prediction/v1/orders", {}),
      sandbox.get("/nowhere"),
    ]);
    const ids = responses.map((r) => r.headers.get("x-request-id"));
    for (const id of ids) expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("a request id sent by the client is not echoed back", async () => {
    const response = await sandbox.get("/prediction/v1/orders", { "x-api-key": KEY, "x-request-id": "mine" });
    expect(response.headers.get("x-request-id")).not.toBe("mine");
  });
});
