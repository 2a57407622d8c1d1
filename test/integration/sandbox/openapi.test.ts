import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { buildOpenApiDocument } from "../../../src/api/openapi.js";
import { createCaptureStream } from "../../../src/ops/capture-stream.js";
import { createLogger } from "../../../src/ops/logger.js";
import { ResponseCheck } from "../../../src/sandbox/http/response-check.js";
import { type RunningSandbox, startSandbox } from "../../../src/sandbox/index.js";
import { buildSandboxServer, type SandboxServer } from "../../../src/sandbox/server.js";
import { DrivenClock } from "../../../src/sandbox/world/clock.js";
import { createHandlers } from "../../../src/sandbox/world/handlers.js";
import { createWorld } from "../../../src/sandbox/world/world.js";
import { startCheckedSandbox } from "../../helpers/checked-sandbox.js";

const MARKET_ROUTE = "/prediction/v1/markets/:marketId";

let sandbox: RunningSandbox;
let check: ResponseCheck;
beforeAll(async () => {
  sandbox = await startCheckedSandbox({ port: 0, clock: new DrivenClock(), rateLimit: false, chain: false });
  if (sandbox.responseCheck === undefined) throw new Error("the checked sandbox has no response check");
  check = sandbox.responseCheck;
});
afterAll(() => sandbox.close());
afterEach(() => sandbox.faults.clear());

const withKey = () => ({ headers: { "x-api-key": sandbox.apiKey } });

async function firstMarketId(): Promise<string> {
  const response = await fetch(`${sandbox.url}/prediction/v1/events?includeMarkets=true`, withKey());
  const page = (await response.json()) as { data: { markets?: { marketId: string }[] }[] };
  const id = page.data.find((e) => e.markets?.length)?.markets?.[0]?.marketId;
  if (id === undefined) throw new Error("the sandbox lists no market");
  return id;
}

describe("GET /openapi.json", () => {
  it("serves the generated document without an API key, and is not itself counted as a checked response", async () => {
    const before = check.validated;
    const response = await fetch(`${sandbox.url}/openapi.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await response.json()).toEqual(JSON.parse(JSON.stringify(buildOpenApiDocument())));
    expect(check.validated).toBe(before);
  });
});

describe("the sandbox's responses checked against the document", () => {
  it("counts successes and errors of every area shape, and finds the real world's answers valid", async () => {
    const before = check.validated;
    const marketId = await firstMarketId();
    expect((await fetch(`${sandbox.url}/prediction/v1/markets/${marketId}`, withKey())).status).toBe(200);
    expect((await fetch(`${sandbox.url}/prediction/v1/markets/nope`, withKey())).status).toBe(404);
    expect((await fetch(`${sandbox.url}/swap/v2/build?inputMint=x`, withKey())).status).toBe(400);
    // No key is served at the keyless limits (as the live service does): a bodiless execute is a 400.
    const unkeyed = await fetch(`${sandbox.url}/trigger/v1/execute`, { method: "POST" });
    expect(unkeyed.status).toBe(400);
    // Not a route of the document: answered, not counted.
    expect((await fetch(`${sandbox.url}/prediction/v1/nothing-here`, withKey())).status).toBe(404);
    expect(check.validated - before).toBe(5);
    expect(check.violations).toEqual([]);
  });

  it("leaves out a body a fault knob broke on purpose", async () => {
    const marketId = await firstMarketId();
    const before = check.validated;
    sandbox.faults.configure("getMarket", { schemaBreakRate: 1 });
    const response = await fetch(`${sandbox.url}/prediction/v1/markets/${marketId}`, withKey());
    expect(response.status).toBe(200);
    expect(check.validated).toBe(before);
    expect(check.violations).toEqual([]);
  });

  it("close() throws listing a violation", async () => {
    // Started bare, so this deliberate violation stays out of the run's tally.
    const own = await startSandbox({
      port: 0,
      clock: new DrivenClock(),
      rateLimit: false,
      chain: false,
      checkResponses: true,
    });
    own.responseCheck?.check("GET", MARKET_ROUTE, 200, JSON.stringify({ marketId: "m" }));
    await expect(own.close()).rejects.toThrow(
      /1 sandbox response\(s\) did not match \/openapi\.json:\n.*getMarket/,
    );
  });
});

describe("a sandbox started with the defaults, as the demo starts one", () => {
  it("checks its answers: a violation is warned of through its logger, counted, and close() does not throw", async () => {
    const logs = createCaptureStream();
    const own = await startSandbox({
      port: 0,
      clock: new DrivenClock(),
      rateLimit: false,
      chain: false,
      logger: createLogger({ level: "warn", pretty: false, destination: logs }),
    });
    const market = own.world.markets[0];
    if (market === undefined) throw new Error("the sandbox has no market");
    (market as { title: unknown }).title = 42;
    const response = await fetch(`${own.url}/prediction/v1/markets/${market.marketId}`, {
      headers: { "x-api-key": own.apiKey },
    });
    expect(response.status).toBe(200);
    expect(own.responseCheck?.violationCount).toBe(1);
    expect(logs.records()).toContainEqual(
      expect.objectContaining({
        level: "warn",
        msg: "sandbox response does not match /openapi.json",
        operation: "getMarket",
        status: 200,
        rule: "body/title must be string",
      }),
    );
    await own.close();
  });
});

describe("a sandbox that drifts from the document", () => {
  let server: SandboxServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it("is caught: a price sent as a string is a violation naming the operation and the field", async () => {
    const world = createWorld({ seed: 1, clock: new DrivenClock() });
    const handlers = createHandlers(world);
    const responseCheck = new ResponseCheck();
    server = buildSandboxServer({
      apiKeys: ["k"],
      responseCheck,
      handlers: {
        ...handlers,
        getMarket: async (input) => {
          const market = (await handlers.getMarket(input)) as { pricing: Record<string, unknown> };
          return { ...market, pricing: { ...market.pricing, buyYesPriceUsd: "0.42" } };
        },
      },
    });
    const url = await server.listen({ port: 0, host: "127.0.0.1" });
    const events = await fetch(`${url}/prediction/v1/events?includeMarkets=true`, {
      headers: { "x-api-key": "k" },
    });
    const page = (await events.json()) as { data: { markets?: { marketId: string }[] }[] };
    const marketId = page.data.find((e) => e.markets?.length)?.markets?.[0]?.marketId ?? "";
    const response = await fetch(`${url}/prediction/v1/markets/${marketId}`, {
      headers: { "x-api-key": "k" },
    });
    // The answer still goes out (the client's own check is tested elsewhere); the run is what fails.
    expect(response.status).toBe(200);
    expect(responseCheck.validated).toBe(2);
    expect(responseCheck.violationCount).toBe(1);
    expect([...responseCheck.byOperation]).toEqual([
      ["listEvents 200", 1],
      ["getMarket 200", 1],
    ]);
    expect(responseCheck.violations[0]).toBe(
      // A price may be null on the live service, never a string.
      `GET ${MARKET_ROUTE} -> 200 (getMarket): body/pricing/buyYesPriceUsd must be number,null`,
    );
    expect(() => responseCheck.assertNoViolations()).toThrow(/did not match \/openapi\.json/);
  });
});

describe("the tests' own sandboxes", () => {
  // Started bare only where a test means to (this file, and the helper that checks every other one).
  const BARE_ALLOWED = ["test/helpers/checked-sandbox.ts", "test/integration/sandbox/openapi.test.ts"];

  it("are all started checked: no other test calls startSandbox directly", () => {
    const root = join(import.meta.dirname, "../../..");
    const files = readdirSync(join(root, "test"), { recursive: true, encoding: "utf8" })
      .filter((f) => f.endsWith(".ts"))
      .map((f) => relative(root, join(root, "test", f)));
    const bare = files.filter(
      (f) => !BARE_ALLOWED.includes(f) && /\bstartSandbox\(/.test(readFileSync(join(root, f), "utf8")),
    );
    expect(files.length).toBeGreaterThan(50);
    expect(bare, "start them with startCheckedSandbox (test/helpers/checked-sandbox.ts)").toEqual([]);
  });
});
