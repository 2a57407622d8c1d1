import { existsSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { join, posix } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { eventually, runCli, spawnCli } from "../helpers/keeper-harness.js";
import { promqlReferences } from "../helpers/promql-references.js";
import { REDIS_URL, testRedis } from "../helpers/redis.js";

/**
 * compose.yaml, checked without a Docker engine (none runs where the tests run, and the Docker client
 * here has no compose plugin): the file is read as Compose would read it and every reference in it is
 * followed, to the repo's files, to the other services, and to what Keeper accepts. Keeper's service
 * is then started as the file starts it (its command and KEEPER_* environment, with only Redis, the
 * ports and the bind address swapped for the test's), and its /metrics is read as Prometheus would.
 * What this cannot show: that the images pull and the containers start; README says so.
 */
const ROOT = process.cwd();

interface Service {
  image?: string;
  build?: string | { context: string; dockerfile?: string };
  command?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  volumes?: string[];
  depends_on?: string[] | Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
}
const compose = parseYaml(readFileSync(join(ROOT, "compose.yaml"), "utf8")) as {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
};
const services = compose.services;
const service = (name: string): Service => {
  const found = services[name];
  if (!found) throw new Error(`compose.yaml has no service ${name}`);
  return found;
};
const keeperEnv = service("keeper").environment ?? {};

/** A service's volumes: bind mounts (host path from the repo root) and named volumes. */
function mountsOf(name: string) {
  return (service(name).volumes ?? []).map((spec) => {
    const [source = "", target = "", mode] = spec.split(":");
    const bind = source.startsWith(".") || source.startsWith("/");
    return { source, target, readOnly: mode === "ro", bind, hostPath: bind ? join(ROOT, source) : undefined };
  });
}
/** The repo file that is mounted at `containerPath`, directly or inside a mounted directory. */
function hostPathOf(name: string, containerPath: string): string | undefined {
  for (const mount of mountsOf(name)) {
    if (!mount.hostPath) continue;
    if (containerPath === mount.target) return mount.hostPath;
    if (containerPath.startsWith(`${mount.target}/`))
      return join(mount.hostPath, posix.relative(mount.target, containerPath));
  }
  return undefined;
}
function hostPort(url: string): { host: string; port: string } {
  const parsed = new URL(url);
  return { host: parsed.hostname, port: parsed.port };
}

describe("compose.yaml, statically", () => {
  it("runs Keeper, Redis, Prometheus and Grafana, each image pinned by a version tag", () => {
    expect(Object.keys(services).sort()).toEqual(["grafana", "keeper", "prometheus", "redis"]);
    for (const [name, s] of Object.entries(services)) {
      if (s.build !== undefined) continue;
      expect(s.image, name).toMatch(/^[\w./-]+:v?\d+(\.\d+)+[\w.-]*$/);
    }
    // Keeper is built from the repo's Dockerfile, whose base images are pinned too.
    expect(service("keeper").build).toBe(".");
    expect(existsSync(join(ROOT, "Dockerfile"))).toBe(true);
    const bases = [...readFileSync(join(ROOT, "Dockerfile"), "utf8").matchAll(/^FROM\s+(\S+)/gm)].map(
      (m) => m[1],
    );
    expect(bases.length).toBeGreaterThan(0);
    for (const base of bases) expect(base).toMatch(/:\d+(\.\d+)+/);
  });

  it("publishes every port on loopback only", () => {
    const published = Object.entries(services).flatMap(([name, s]) => (s.ports ?? []).map((p) => [name, p]));
    expect(published.map(([name]) => name).sort()).toEqual(["grafana", "keeper", "prometheus"]);
    for (const [name, port] of published) expect(port, name).toMatch(/^127\.0\.0\.1:\d+:\d+$/);
  });

  it("keeps Redis's data on a volume, with AOF persistence and noeviction, and Keeper waits for it", () => {
    const redis = service("redis");
    const command = (redis.command ?? []).join(" ");
    expect(command).toMatch(/^redis-server /);
    expect(command).toContain("--appendonly yes");
    expect(command).toContain("--maxmemory-policy noeviction");
    const data = mountsOf("redis").find((m) => m.target === "/data");
    expect(data?.bind).toBe(false);
    expect(Object.keys(compose.volumes ?? {})).toContain(data?.source);
    expect(redis.healthcheck?.test).toEqual(["CMD", "redis-cli", "ping"]);
    expect(service("keeper").depends_on).toEqual({ redis: { condition: "service_healthy" } });
    expect(hostPort(keeperEnv.KEEPER_REDIS_URL ?? "")).toEqual({ host: "redis", port: "6379" });
  });

  it("declares every named volume it mounts", () => {
    for (const name of Object.keys(services))
      for (const mount of mountsOf(name).filter((m) => !m.bind))
        expect(Object.keys(compose.volumes ?? {}), `${name}: ${mount.source}`).toContain(mount.source);
  });

  it("mounts only repo files that exist, read-only", () => {
    for (const name of Object.keys(services))
      for (const mount of mountsOf(name).filter((m) => m.bind)) {
        expect(existsSync(mount.hostPath ?? ""), `${name}: ${mount.source}`).toBe(true);
        expect(mount.readOnly, `${name}: ${mount.source}`).toBe(true);
      }
  });

  it("has Prometheus scrape Keeper's ops port by service name, with the alert rules loaded", () => {
    const flags = service("prometheus").command ?? [];
    const configPath = flags.find((f) => f.startsWith("--config.file="))?.split("=")[1] ?? "";
    expect(hostPathOf("prometheus", configPath)).toBe(join(ROOT, "ops/prometheus/prometheus.yml"));
    const config = parseYaml(readFileSync(join(ROOT, "ops/prometheus/prometheus.yml"), "utf8")) as {
      rule_files: string[];
      scrape_configs: Array<{
        job_name: string;
        metrics_path?: string;
        static_configs: Array<{ targets: string[] }>;
      }>;
    };
    const rulesInContainer = config.rule_files.map((f) => posix.resolve(posix.dirname(configPath), f));
    expect(rulesInContainer.map((f) => hostPathOf("prometheus", f))).toEqual([
      join(ROOT, "ops/prometheus/alerts.yml"),
    ]);
    const keeperJob = config.scrape_configs.find((job) => job.job_name === "keeper");
    expect(keeperJob?.metrics_path ?? "/metrics").toBe("/metrics");
    expect(keeperJob?.static_configs.flatMap((c) => c.targets)).toEqual([
      `keeper:${keeperEnv.KEEPER_OPS_PORT}`,
    ]);
    // Bound to every interface inside the container, or Prometheus's connection is refused.
    expect(keeperEnv.KEEPER_OPS_HOST).toBe("0.0.0.0");
    // And answering to the name Prometheus scrapes by, or each scrape is refused (421).
    const scrapedHosts = keeperJob?.static_configs.flatMap((c) => c.targets).map((t) => t.split(":")[0]);
    const allowed = (keeperEnv.KEEPER_OPS_ALLOWED_HOSTS ?? "").split(",").map((h) => h.trim());
    for (const host of scrapedHosts ?? []) expect(allowed).toContain(host);
    expect(service("keeper").ports).toEqual([
      `127.0.0.1:${keeperEnv.KEEPER_OPS_PORT}:${keeperEnv.KEEPER_OPS_PORT}`,
    ]);
  });

  it("provisions Grafana with the Prometheus service as its datasource and the Keeper dashboard", () => {
    const provisioning = hostPathOf("grafana", "/etc/grafana/provisioning");
    expect(provisioning).toBe(join(ROOT, "ops/grafana/provisioning"));
    const datasources = parseYaml(
      readFileSync(join(ROOT, "ops/grafana/provisioning/datasources/prometheus.yml"), "utf8"),
    ) as { datasources: Array<{ type: string; url: string; isDefault?: boolean }> };
    expect(datasources.datasources).toHaveLength(1);
    const [datasource] = datasources.datasources;
    expect(datasource?.type).toBe("prometheus");
    expect(datasource?.isDefault).toBe(true);
    // Prometheus's default listen port, which compose.yaml does not change and publishes.
    expect(hostPort(datasource?.url ?? "")).toEqual({ host: "prometheus", port: "9090" });
    expect((service("prometheus").command ?? []).some((f) => f.startsWith("--web.listen-address"))).toBe(
      false,
    );
    expect(service("prometheus").ports).toEqual(["127.0.0.1:9090:9090"]);

    const providers = parseYaml(
      readFileSync(join(ROOT, "ops/grafana/provisioning/dashboards/keeper.yml"), "utf8"),
    ) as { providers: Array<{ type: string; options: { path: string } }> };
    const [provider] = providers.providers;
    expect(provider?.type).toBe("file");
    const dashboardInContainer = posix.join(provider?.options.path ?? "", "keeper.json");
    expect(hostPathOf("grafana", dashboardInContainer)).toBe(join(ROOT, "ops/grafana/keeper.json"));
    expect(service("grafana").environment?.GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH).toBe(
      dashboardInContainer,
    );
  });

  it("gives Keeper only KEEPER_* settings that its config check accepts", async () => {
    expect(Object.keys(keeperEnv).every((name) => name.startsWith("KEEPER_"))).toBe(true);
    const check = await runCli(["config", "check"], { ...keeperEnv, KEEPER_CONFIG: "" });
    expect(check.stderr).toBe("");
    expect(check.stdout).toContain("valid: mode");
    expect(check.code).toBe(0);
  });
});

describe("README's compose lines", () => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const lines = [...readme.matchAll(/docker compose[^`\n]*/g)].map((m) => m[0].replace(/\s+#.*$/, "").trim());

  it("use the repo's compose.yaml and name only its services (they are not run here: no Docker engine)", () => {
    expect(lines.some((line) => /^docker compose up\b/.test(line))).toBe(true);
    for (const line of lines) {
      const words = line.split(/\s+/).slice(2);
      // The subcommand comes first: no `-f` or `--project-directory` pointing at another file.
      const [subcommand, ...rest] = words;
      expect(["up", "down", "logs", "ps", "stop", "restart", "build", "pull"], line).toContain(subcommand);
      for (const word of rest.filter((w) => !w.startsWith("-")))
        expect(Object.keys(services), `${line}: ${word}`).toContain(word);
    }
  });

  it("open Grafana and Prometheus where compose.yaml publishes them", () => {
    const start = readme.indexOf("## Dashboards, alerts and compose");
    const section = readme.slice(start, readme.indexOf("\n## ", start + 1));
    const urls = [...section.matchAll(/http:\/\/127\.0\.0\.1:(\d+)/g)].map((m) => m[1]);
    const published = Object.values(services).flatMap((s) => (s.ports ?? []).map((p) => p.split(":")[1]));
    expect(urls.length).toBeGreaterThan(1);
    for (const port of urls) expect(published).toContain(port);
  });
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  return typeof address === "object" && address ? address.port : 0;
}

describe("Keeper's service as compose.yaml starts it", () => {
  let redis: Awaited<ReturnType<typeof testRedis>>;
  beforeAll(async () => {
    redis = await testRedis("e2e-compose");
  });
  afterAll(async () => {
    await redis?.cleanup();
  });

  it("runs the embedded demo, serves every metric the dashboard and the alert rules read, and confirms claims", async () => {
    const opsPort = await freePort();
    const env = {
      ...keeperEnv,
      // Swapped for this machine: the test's Redis and prefix, free ports, loopback.
      KEEPER_REDIS_URL: REDIS_URL,
      KEEPER_REDIS_PREFIX: redis.prefix,
      KEEPER_OPS_HOST: "127.0.0.1",
      KEEPER_OPS_PORT: String(opsPort),
      KEEPER_SERVICE_URL: `http://127.0.0.1:${await freePort()}`,
      KEEPER_RPC_URL: `http://127.0.0.1:${await freePort()}`,
      KEEPER_CONFIG: "",
    };
    const run = spawnCli(service("keeper").command ?? [], env, "compose-keeper");
    try {
      await eventually(
        "the demo is up",
        async () => (/demo: keeper live/.test(run.output()) ? true : undefined),
        90_000,
      );
      const metrics = await eventually(
        "/metrics answers",
        async () => {
          const response = await fetch(`http://127.0.0.1:${opsPort}/metrics`);
          return response.ok ? response.text() : undefined;
        },
        30_000,
      );
      const families = new Set([...metrics.matchAll(/^# TYPE (\S+) (\w+)/gm)].map((m) => m[1]));
      const read = new Set<string>();
      const dashboard = JSON.parse(readFileSync(join(ROOT, "ops/grafana/keeper.json"), "utf8")) as {
        panels: Array<{ targets?: Array<{ expr: string }> }>;
      };
      const rules = parseYaml(readFileSync(join(ROOT, "ops/prometheus/alerts.yml"), "utf8")) as {
        groups: Array<{ rules: Array<{ expr: string }> }>;
      };
      const exprs = [
        ...dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr)),
        ...rules.groups.flatMap((g) => g.rules.map((r) => r.expr)),
      ];
      for (const expr of exprs) for (const { name } of promqlReferences(expr).selectors) read.add(name);
      read.delete("up"); // Prometheus's own
      const missing = [...read].filter(
        (name) => !families.has(name) && !families.has(name.replace(/_(?:bucket|sum|count)$/, "")),
      );
      expect(missing).toEqual([]);
      expect(read.size).toBeGreaterThan(15);
      expect((await fetch(`http://127.0.0.1:${opsPort}/healthz`)).ok).toBe(true);

      // The demo resolves a market every twenty seconds: the dashboard's claim panels get data.
      const claimed = await eventually(
        "a claim confirmed on /metrics",
        async () => {
          const text = await (await fetch(`http://127.0.0.1:${opsPort}/metrics`)).text();
          const confirmed = /^keeper_transactions_total\{kind="claim",outcome="confirmed"\} (\d+)/m.exec(
            text,
          );
          const usd = /^keeper_claimed_usd_total (\S+)/m.exec(text);
          return confirmed && Number(confirmed[1]) > 0 ? Number(usd?.[1]) : undefined;
        },
        120_000,
      );
      expect(claimed).toBeGreaterThan(0);
    } catch (error) {
      await run.kill("SIGKILL");
      throw new Error(`${(error as Error).message}\n${run.output()}`);
    }
    run.child.kill("SIGTERM");
    expect(await run.exited, run.output()).toBe(0);
  }, 240_000);
});
