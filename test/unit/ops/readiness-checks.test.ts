import { describe, expect, it } from "vitest";
import { checkReadiness } from "../../../src/ops/http.js";
import { redisReachable, rpcReachable } from "../../../src/ops/readiness-checks.js";

function fakeFetch(status: number, body: unknown): typeof fetch {
  return (async () => new Response(JSON.stringify(body), { status })) as typeof fetch;
}

describe("rpcReachable", () => {
  it.each([
    ["healthy", 200, { jsonrpc: "2.0", id: 1, result: "ok" }, undefined],
    [
      "without getHealth",
      200,
      { jsonrpc: "2.0", id: 1, error: { code: -32601, message: "Method not found" } },
      undefined,
    ],
    [
      "behind",
      200,
      { jsonrpc: "2.0", id: 1, error: { code: -32005, message: "Node is behind" } },
      /Node is behind/,
    ],
    ["HTTP error", 502, {}, /HTTP 502/],
  ])("a node %s", async (_case, status, body, failure) => {
    const check = rpcReachable("http://rpc.invalid", fakeFetch(status, body));
    if (failure) await expect(check()).rejects.toThrow(failure);
    else await expect(check()).resolves.toBeUndefined();
  });
});

describe("checkReadiness", () => {
  it("names every failing check and cuts URLs out of details", async () => {
    const report = await checkReadiness(
      {
        redis: redisReachable({ ping: async () => "PONG" }),
        rpc: async () => {
          throw new Error("connect failed to https://rpc.example/?api-key=abc123");
        },
        lastPollFresh: () => ({ ok: false, detail: "1 of 1 wallets stale (W)" }),
      },
      100,
    );
    expect(report.ok).toBe(false);
    expect(report.failing).toEqual(["rpc", "lastPollFresh"]);
    expect(report.checks.redis).toEqual({ ok: true, detail: "reachable" });
    expect(report.checks.rpc?.detail).toBe("Error: connect failed to [url]");
  });

  it("is ready when no check is configured", async () => {
    expect(await checkReadiness({}, 100)).toEqual({ ok: true, failing: [], checks: {} });
  });
});
