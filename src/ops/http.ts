import Fastify, { type FastifyInstance } from "fastify";
import type { Logger } from "pino";
import { ConfigError } from "../core/errors.js";
import { HostAllowList } from "./allowed-hosts.js";
import { registerFrameHeaders } from "./frame-headers.js";
import { registerHostGuard } from "./host-guard.js";
import type { HealthVerdict } from "./watchdog.js";
import { OpsTimeoutError, withTimeout } from "./with-timeout.js";

/** What the server needs from the metrics module. */
export interface MetricsSource {
  readonly contentType: string;
  render(): Promise<string>;
}

/**
 * Readiness checks. A check that is not given is not part of readiness (the scheduler role has no
 * RPC to reach, for instance).
 */
export interface ReadinessChecks {
  /** Resolves when Redis answers (a PING). */
  redis?: () => Promise<void>;
  /** Resolves when Redis accepts a write (not a read-only replica, not full under noeviction). */
  redisWritable?: () => Promise<void>;
  /** Resolves when the RPC node answers (getHealth or getSlot). */
  rpc?: () => Promise<void>;
  /** Every wallet polled recently enough. */
  lastPollFresh?: () => HealthVerdict;
}

export interface OpsServerOptions {
  /** Loopback by default: metrics and health are not for the internet. */
  host?: string;
  /** 0 picks a free port (tests). */
  port: number;
  /**
   * Host names answered besides loopback, `host` and IP addresses (ops.allowedHosts): any other Host
   * header is refused with 421.
   */
  allowedHosts?: readonly string[];
  metrics: MetricsSource;
  checks: ReadinessChecks;
  /** The liveness verdict, usually `() => watchdog.check()`. */
  liveness: () => HealthVerdict;
  logger: Logger;
  /** How long each readiness check may take. Default 1000 ms. */
  checkTimeoutMs?: number;
  /** Routes beside the three of its own (the status page): ops knows nothing of the application. */
  plugins?: readonly OpsPlugin[];
  /** Counts a request refused for its Host header. */
  onHostRefused?: () => void;
}

/** Extra routes mounted on the ops server, after its host guard and frame headers. */
export interface OpsPlugin {
  /** Changes state (operator actions): warned about on a non-loopback address over plain HTTP. */
  readonly acceptsWrites?: boolean;
  register(app: FastifyInstance): Promise<void>;
}

export interface OpsServer {
  readonly host: string;
  readonly port: number;
  /** Base URL, e.g. `http://127.0.0.1:9464`. */
  readonly url: string;
  close(): Promise<void>;
}

type CheckName = keyof ReadinessChecks;

export interface ReadinessReport {
  ok: boolean;
  failing: CheckName[];
  checks: Partial<Record<CheckName, HealthVerdict>>;
}

export async function startOpsServer(options: OpsServerOptions): Promise<OpsServer> {
  const host = options.host ?? "127.0.0.1";
  const app = await buildOpsApp(options);
  if (options.plugins?.some((plugin) => plugin.acceptsWrites) && !isLoopbackHost(host))
    options.logger.warn(
      { host },
      "the ops server offers operator actions on a non-loopback address over plain HTTP: put TLS in front of it",
    );
  try {
    await app.listen({ host, port: options.port });
  } catch (error) {
    await app.close();
    throw listenError(error, host, options.port);
  }
  const address = app.server.address();
  const port = typeof address === "object" && address !== null ? address.port : options.port;
  const urlHost = host.includes(":") ? `[${host}]` : host;
  options.logger.info({ host, port }, "ops server listening");
  return {
    host,
    port,
    url: `http://${urlHost}:${port}`,
    close: () => app.close(),
  };
}

/** The routes without listening, for composition and tests (`app.inject`). */
export async function buildOpsApp(options: OpsServerOptions): Promise<FastifyInstance> {
  const { metrics, logger } = options;
  const checkTimeoutMs = options.checkTimeoutMs ?? 1_000;
  // Fastify's own request logging is off: three fixed routes, scraped every few seconds, would drown
  // the logs; failures are logged below with context.
  const app = Fastify({ logger: false });
  // First, so that no route of any plugin below runs for a refused host, and every answer carries them.
  registerHostGuard(
    app,
    new HostAllowList({ boundHost: options.host ?? "127.0.0.1", names: options.allowedHosts ?? [] }),
    logger,
    () => options.onHostRefused?.(),
  );
  registerFrameHeaders(app);

  app.get("/metrics", async (_request, reply) => {
    const text = await metrics.render();
    return reply.type(metrics.contentType).send(text);
  });

  app.get("/healthz", async (_request, reply) => {
    const verdict = options.liveness();
    if (!verdict.ok) logger.warn({ detail: verdict.detail }, "liveness failing");
    return reply.code(verdict.ok ? 200 : 503).send(verdict);
  });

  app.get("/readyz", async (_request, reply) => {
    const report = await checkReadiness(options.checks, checkTimeoutMs);
    if (!report.ok) logger.warn({ failing: report.failing }, "readiness failing");
    return reply.code(report.ok ? 200 : 503).send(report);
  });

  app.setErrorHandler((error, _request, reply) => {
    logger.error({ err: error }, "ops request failed");
    return reply.code(500).send({ ok: false, detail: "internal error" });
  });

  for (const plugin of options.plugins ?? []) await plugin.register(app);

  return app;
}

/** Why the OS refused the address, by the setting to change; anything else is not the config's fault. */
const LISTEN_FAULTS: Readonly<Record<string, { key: string; why: string }>> = {
  EADDRINUSE: { key: "ops.port", why: "the port is in use by another process" },
  EACCES: { key: "ops.port", why: "permission denied (ports below 1024 need privileges)" },
  EADDRNOTAVAIL: { key: "ops.host", why: "no interface of this machine has that address" },
  ENOTFOUND: { key: "ops.host", why: "the host name does not resolve" },
  EAI_AGAIN: { key: "ops.host", why: "the host name could not be resolved (DNS did not answer)" },
};

/** A listen the config made impossible becomes a ConfigError naming the key; the rest pass through. */
function listenError(error: unknown, host: string, port: number): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const fault = code === undefined ? undefined : LISTEN_FAULTS[code];
  if (fault === undefined) return error;
  return new ConfigError([
    `${fault.key}: the ops server cannot listen on ${host}:${port}: ${fault.why} (${code})`,
  ]);
}

function isLoopbackHost(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** What a passing reachability check says. */
const PASSED = { redis: "reachable", redisWritable: "accepts writes", rpc: "reachable" } as const;

/** Runs the reachability checks in parallel, each bounded by `timeoutMs`. */
export async function checkReadiness(checks: ReadinessChecks, timeoutMs: number): Promise<ReadinessReport> {
  const reachability = (["redis", "redisWritable", "rpc"] as const).flatMap((name) => {
    const check = checks[name];
    return check ? [[name, check] as const] : [];
  });
  const results = await Promise.all(
    reachability.map(async ([name, check]): Promise<[CheckName, HealthVerdict]> => {
      try {
        await withTimeout(check(), timeoutMs, name);
        return [name, { ok: true, detail: PASSED[name] }];
      } catch (error) {
        return [name, { ok: false, detail: describeFailure(error, timeoutMs) }];
      }
    }),
  );
  if (checks.lastPollFresh) results.push(["lastPollFresh", safeVerdict(checks.lastPollFresh)]);
  const report: ReadinessReport = { ok: true, failing: [], checks: {} };
  for (const [name, verdict] of results) {
    report.checks[name] = verdict;
    if (!verdict.ok) report.failing.push(name);
  }
  report.ok = report.failing.length === 0;
  return report;
}

function safeVerdict(check: () => HealthVerdict): HealthVerdict {
  try {
    return check();
  } catch (error) {
    return { ok: false, detail: describeFailure(error, 0) };
  }
}

/**
 * A failure as a short sentence for the response body. URLs are cut out: an RPC or Redis URL can
 * carry a token or password, and error messages sometimes quote them.
 */
function describeFailure(error: unknown, timeoutMs: number): string {
  if (error instanceof OpsTimeoutError) return `no answer within ${timeoutMs} ms`;
  const text = error instanceof Error ? `${error.name}: ${error.message}` : "check failed";
  return text.replace(/[a-z][a-z0-9+.-]*:\/\/\S+/gi, "[url]").slice(0, 300);
}
