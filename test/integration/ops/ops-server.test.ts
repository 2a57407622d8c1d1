import { createServer, type Server } from "node:net";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError } from "../../../src/core/errors.js";
import { createCaptureStream } from "../../../src/ops/capture-stream.js";
import { type OpsServer, type OpsServerOptions, startOpsServer } from "../../../src/ops/http.js";
import { createLogger } from "../../../src/ops/logger.js";
import { createMetrics } from "../../../src/ops/metrics.js";
import { PollTracker } from "../../../src/ops/poll-tracker.js";
import { redisReachable, rpcReachable } from "../../../src/ops/readiness-checks.js";
import { Watchdog } from "../../../src/ops/watchdog.js";
import { rawRequest } from "../../helpers/raw-http.js";
import { REDIS_URL } from "../../helpers/redis.js";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function serve(overrides: Partial<OpsServerOptions> = {}): Promise<OpsServer> {
  const server = await startOpsServer({
    port: 0,
    metrics: createMetrics({ defaultMetrics: false }),
    checks: {},
    liveness: () => ({ ok: true, detail: "test" }),
    logger: createLogger({ level: "silent", pretty: false, destination: createCaptureStream() }),
    ...overrides,
  });
  cleanups.push(() => server.close());
  return server;
}

function redisClient(url: string): Redis {
  // One connection attempt per command, no reconnect storm: the check's timeout decides.
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
  redis.on("error", () => {
    // Connection errors surface as the PING's rejection; the emitter needs a listener.
  });
  cleanups.push(() => redis.disconnect());
  return redis;
}

/** A port that was free a moment ago: a listener is opened, its port noted, and closed. */
async function unusedPort(): Promise<number> {
  const probe: Server = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  if (typeof address !== "object" || address === null) throw new Error("no port");
  return address.port;
}

describe("ops server", () => {
  it("listens on loopback by default", async () => {
    const server = await serve();
    expect(server.host).toBe("127.0.0.1");
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
  });

  it.each([
    [
      "a port in use",
      "127.0.0.1",
      "in-use",
      /^ops\.port: the ops server cannot listen on 127\.0\.0\.1:\d+: the port is in use .*\(EADDRINUSE\)$/,
    ],
    [
      "an address of no interface here",
      "192.0.2.1",
      0,
      /^ops\.host: the ops server cannot listen on 192\.0\.2\.1:0: no interface of this machine has that address \(EADDRNOTAVAIL\)$/,
    ],
    [
      "a name that does not resolve",
      "no-such-host.invalid",
      0,
      /^ops\.host: the ops server cannot listen on no-such-host\.invalid:0: .*\((ENOTFOUND|EAI_AGAIN)\)$/,
    ],
  ] as const)(
    "refuses %s with a ConfigError naming the key and the cause",
    async (_label, host, port, problem) => {
      const listenPort = port === "in-use" ? (await serve()).port : port;
      const refused = await serve({ host, port: listenPort }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(ConfigError);
      expect((refused as ConfigError).problems).toHaveLength(1);
      expect((refused as ConfigError).problems[0]).toMatch(problem);
    },
  );

  it("serves the counters as Prometheus text on /metrics", async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    metrics.recordTransaction("claim", "confirmed", 1.2);
    metrics.addClaimedMicroUsd(2_250_000n);
    const server = await serve({ metrics });
    const response = await fetch(`${server.url}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/plain/);
    const text = await response.text();
    expect(text).toContain('keeper_transactions_total{kind="claim",outcome="confirmed"} 1');
    expect(text).toContain("keeper_claimed_usd_total 2.25");
    expect(text).toContain("# TYPE keeper_confirmation_duration_seconds histogram");
  });

  it("answers only Host names it is meant to: a rebound name gets 421 on every path, without the data", async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    metrics.recordTransaction("claim", "confirmed", 1.2);
    const server = await serve({ metrics, allowedHosts: ["keeper"] });
    const withHost = (path: string, host: string) =>
      rawRequest(`${server.url}${path}`, { headers: { host } });
    for (const path of ["/metrics", "/healthz", "/readyz", "/"]) {
      for (const host of [
        "evil.example",
        `evil.example:${server.port}`,
        "keeper.evil.example",
        "localhost.evil",
      ]) {
        const answer = await withHost(path, host);
        expect(answer.status, `${path} ${host}`).toBe(421);
        expect(answer.text).toContain("ops.allowedHosts");
        expect(answer.text).not.toContain("keeper_transactions_total");
      }
    }
    // Loopback names, any IP address (an address cannot be a rebound name) and the configured names.
    for (const host of [
      `localhost:${server.port}`,
      `127.0.0.1:${server.port}`,
      `[::1]:${server.port}`,
      "10.1.2.3:9464",
      "keeper:9464",
      "KEEPER",
    ]) {
      const answer = await withHost("/metrics", host);
      expect(answer.status, host).toBe(200);
      expect(answer.text).toContain("keeper_transactions_total");
    }
  });

  it("forbids framing on every answer, /metrics and /healthz included", async () => {
    const server = await serve();
    for (const path of ["/metrics", "/healthz", "/nothing-here"]) {
      const response = await fetch(`${server.url}${path}`);
      expect(response.headers.get("x-frame-options"), path).toBe("DENY");
      expect(response.headers.get("content-security-policy"), path).toBe("frame-ancestors 'none'");
    }
  });

  it("answers /healthz 200 while loops stamp, then 503 once a stamp is older than two intervals", async () => {
    const clock = { nowMs: 1_000_000 };
    const watchdog = new Watchdog(() => clock.nowMs);
    watchdog.register("scheduler", 5_000);
    const server = await serve({ liveness: () => watchdog.check() });

    const healthy = await fetch(`${server.url}/healthz`);
    expect(healthy.status).toBe(200);
    expect(await healthy.json()).toMatchObject({ ok: true });

    clock.nowMs += 10_001;
    const stuck = await fetch(`${server.url}/healthz`);
    expect(stuck.status).toBe(503);
    expect(await stuck.json()).toEqual({
      ok: false,
      detail: "scheduler last ran 10001 ms ago (interval 5000 ms)",
    });
  });

  it("answers /readyz 503 naming Redis when nothing listens on its port", async () => {
    const port = await unusedPort();
    const server = await serve({
      checks: { redis: redisReachable(redisClient(`redis://127.0.0.1:${port}`)) },
      checkTimeoutMs: 500,
    });
    const response = await fetch(`${server.url}/readyz`);
    expect(response.status).toBe(503);
    const body = (await response.json()) as {
      ok: boolean;
      failing: string[];
      checks: Record<string, unknown>;
    };
    expect(body.ok).toBe(false);
    expect(body.failing).toEqual(["redis"]);
    expect(JSON.stringify(body)).not.toContain(`redis://`);
  });

  it("answers /readyz 503 naming a check that hangs, within its timeout", async () => {
    const server = await serve({
      checks: {
        redis: async () => {},
        rpc: () => new Promise<void>(() => {}),
      },
      checkTimeoutMs: 100,
    });
    const response = await fetch(`${server.url}/readyz`);
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({
      failing: ["rpc"],
      checks: { redis: { ok: true }, rpc: { ok: false, detail: "no answer within 100 ms" } },
    });
  });

  it("answers /readyz 503 naming stale polls", async () => {
    const clock = { nowMs: 0 };
    const tracker = new PollTracker(() => clock.nowMs);
    tracker.recordSuccess("WalletA", 0);
    clock.nowMs = 300_000;
    const server = await serve({ checks: { lastPollFresh: () => tracker.freshness(120_000) } });
    const response = await fetch(`${server.url}/readyz`);
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({
      failing: ["lastPollFresh"],
      checks: { lastPollFresh: { ok: false, detail: "1 of 1 wallets stale (WalletA)" } },
    });
  });

  it("answers /readyz 200 with a real Redis, a reachable RPC and fresh polls", async () => {
    // A stand-in RPC node on loopback that answers getHealth like a validator does.
    const rpc = await startFakeRpc();
    const tracker = new PollTracker();
    tracker.recordSuccess("WalletA");
    const server = await serve({
      checks: {
        redis: redisReachable(redisClient(REDIS_URL)),
        rpc: rpcReachable(rpc.url),
        lastPollFresh: () => tracker.freshness(120_000),
      },
    });
    const response = await fetch(`${server.url}/readyz`);
    expect(await response.json()).toMatchObject({ ok: true, failing: [] });
    expect(response.status).toBe(200);
  });
});

async function startFakeRpc(): Promise<{ url: string }> {
  const { default: Fastify } = await import("fastify");
  const app = Fastify();
  app.post("/", async () => ({ jsonrpc: "2.0", id: 1, result: "ok" }));
  await app.listen({ host: "127.0.0.1", port: 0 });
  cleanups.push(() => app.close());
  const address = app.server.address();
  if (typeof address !== "object" || address === null) throw new Error("no port");
  return { url: `http://127.0.0.1:${address.port}/` };
}
