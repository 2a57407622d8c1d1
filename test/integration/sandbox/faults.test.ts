import { afterEach, describe, expect, it } from "vitest";
import { endpoints } from "../../../src/api/endpoints.js";
import type { FaultSettings } from "../../../src/sandbox/http/faults.js";
import { expectAreaError } from "./error-shapes.js";
import { echoHandlers, PK, type RunningServer, startTestServer } from "./http-harness.js";

const INVITES = `/send/v1/invite-history?address=${PK}`;
const validInvites = { invites: [], hasMoreData: false };

let sandbox: RunningServer | undefined;
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});

async function start(faults: FaultSettings = {}) {
  sandbox = await startTestServer({ faults, handlers: echoHandlers({ inviteHistory: () => validInvites }) });
  return sandbox;
}

describe("sandbox fault knobs", () => {
  it("an error rate of 1 fails every request of that endpoint with a 5xx in its shape, and no other", async () => {
    const s = await start({ endpoints: { listPositions: { errorRate: 1 } } });
    await expectAreaError(await s.get("/prediction/v1/positions"), { status: 503, area: "prediction" });
    expect((await s.get("/prediction/v1/orders")).status).toBe(200);
    s.server.faults.configure("*", { errorRate: 1, errorStatus: 500 });
    await expectAreaError(await s.get(INVITES), { status: 500, area: "send" });
  });

  it("error draws are deterministic for a seed", async () => {
    const statuses = async (seed: number) => {
      const s = await start({ seed, all: { errorRate: 0.5 } });
      const seen: number[] = [];
      for (let i = 0; i < 24; i++) seen.push((await s.get("/prediction/v1/orders")).status);
      await s.close();
      sandbox = undefined;
      return seen;
    };
    const first = await statuses(42);
    expect(await statuses(42)).toEqual(first);
    expect(new Set(first)).toEqual(new Set([200, 503]));
    expect(await statuses(43)).not.toEqual(first);
  });

  it("added latency delays the answer by at least that much", async () => {
    const s = await start({ endpoints: { inviteHistory: { latencyMs: 120 } } });
    const started = performance.now();
    expect((await s.get(INVITES)).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(115);
  });

  it("a malformed body is a 200 whose body is not JSON", async () => {
    const s = await start({ all: { malformedRate: 1 } });
    const response = await s.get(INVITES);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    const text = await response.text();
    expect(() => JSON.parse(text)).toThrow(SyntaxError);
  });

  it("a truncated body is a 200 that stops halfway", async () => {
    const s = await start({ endpoints: { inviteHistory: { truncatedRate: 1 } } });
    const text = await (await s.get(INVITES)).text();
    expect(JSON.stringify(validInvites).startsWith(text)).toBe(true);
    expect(text.length).toBeLessThan(JSON.stringify(validInvites).length);
    expect(() => JSON.parse(text)).toThrow(SyntaxError);
  });

  it("a schema-breaking body is valid JSON that fails the endpoint's response schema", async () => {
    const s = await start({ endpoints: { inviteHistory: { schemaBreakRate: 1 } } });
    const body: unknown = await (await s.get(INVITES)).json();
    expect(endpoints.inviteHistory.response.safeParse(validInvites).success).toBe(true);
    expect(endpoints.inviteHistory.response.safeParse(body).success).toBe(false);
  });

  it("a 429 burst refuses the next N requests with rate-limit headers, then lets them through", async () => {
    const s = await start({ burst429: 2, burstRetryAfterSeconds: 4 });
    for (let i = 0; i < 2; i++) {
      const response = await s.get(INVITES);
      await expectAreaError(response, { status: 429, area: "send" });
      expect(response.headers.get("retry-after")).toBe("4");
      expect(response.headers.get("x-ratelimit-remaining")).toBe("0");
      expect(Number(response.headers.get("x-ratelimit-reset"))).toBeGreaterThan(Date.now() / 1000);
    }
    expect((await s.get(INVITES)).status).toBe(200);
    s.server.faults.burst429(1);
    const response = await s.get(INVITES);
    expect(response.status).toBe(429);
    expect(response.headers.get("retry-after")).toBeNull();
  });

  it("a body-less or form POST, as another site's page can send, leaves the knobs as they were (415)", async () => {
    const s = await start({ endpoints: { inviteHistory: { errorRate: 1 } } });
    const before = s.server.faults.current();
    for (const init of [
      { method: "POST" },
      { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "all=" },
      { method: "POST", headers: { "content-type": "text/plain" }, body: "{}" },
    ]) {
      const answer = await fetch(`${s.url}/__sandbox/faults`, init);
      expect(answer.status, JSON.stringify(init)).toBe(415);
    }
    const crossSite = await fetch(`${s.url}/__sandbox/faults`, {
      method: "DELETE",
      headers: { origin: "http://evil.example" },
    });
    expect(crossSite.status).toBe(403);
    expect(s.server.faults.current()).toEqual(before);
    expect((await s.get(INVITES)).status).toBe(503);
  });

  it("the loopback admin route reads, sets and clears the knobs without an API key", async () => {
    const s = await start();
    const admin = (method: string, body?: unknown) =>
      fetch(`${s.url}/__sandbox/faults`, {
        method,
        ...(body === undefined
          ? {}
          : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
      });
    expect((await admin("POST", { endpoints: { inviteHistory: { errorRate: 1 } } })).status).toBe(200);
    expect((await s.get(INVITES)).status).toBe(503);
    expect(await (await admin("GET")).json()).toMatchObject({
      endpoints: { inviteHistory: { errorRate: 1 } },
    });
    const refused = await admin("POST", { all: { errorRate: 2 } });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toEqual({ error: "all.errorRate: must be 0 to 1" });
    expect((await admin("DELETE")).status).toBe(200);
    expect((await s.get(INVITES)).status).toBe(200);
  });
});
