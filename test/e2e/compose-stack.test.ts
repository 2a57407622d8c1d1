import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, posix } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { readDockerignore } from "../helpers/dockerignore.js";
import { eventually, runCli, spawnCli } from "../helpers/keeper-harness.js";
import { freePort } from "../helpers/password-redis.js";
import { promqlReferences } from "../helpers/promql-references.js";

/**
 * compose.yaml, checked without a Docker engine (none runs where the tests run, and the Docker client
 * here has no compose plugin): the file is read as Compose would read it and every reference in it is
 * followed, to the repo's files, to the other services, and to what Keeper accepts. Keeper's service
 * is then started as the file starts it (its command and KEEPER_* environment, with only Redis, the
 * ports and the bind address swapped for the test's), and its /metrics is read as Prometheus would.
 * What this cannot show: that the images pull and the containers start; docs/operations.md says so.
 */
const ROOT = process.cwd();

interface Service {
  image?: string;
  build?: string | { context: string; dockerfile?: string };
  user?: string;
  command?: string[];
  environment?: Record<string, string>;
  secrets?: string[];
  networks?: string[];
  ports?: string[];
  volumes?: string[];
  tmpfs?: string[];
  read_only?: boolean;
  cap_drop?: string[];
  security_opt?: string[];
  depends_on?: string[] | Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
}
const compose = parseYaml(readFileSync(join(ROOT, "compose.yaml"), "utf8")) as {
  services: Record<string, Service>;
  secrets?: Record<string, { file: string }>;
  networks?: Record<string, { internal?: boolean } | null>;
  volumes?: Record<string, unknown>;
};
const dockerfile = readFileSync(join(ROOT, "Dockerfile"), "utf8");
/** `name:tag@sha256:<64 hex>`: the tag says which version, the digest makes it that exact build. */
const PINNED = /^[\w./-]+:v?\d+(\.\d+)+[\w.-]*@sha256:[0-9a-f]{64}$/;
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

/** Where a service's secret is mounted: /run/secrets/<name>, when the service mounts it. */
function secretPath(name: string, secret: string): string | undefined {
  return (service(name).secrets ?? []).includes(secret) ? `/run/secrets/${secret}` : undefined;
}

/** A command or healthcheck as the container gets it: compose turns `$$` into `$` (and no other `$` is used). */
function interpolated(text: string): string {
  expect(text.replaceAll("$$", "")).not.toContain("$");
  return text.replaceAll("$$", "$");
}

/** A copy of a secret file on this machine, mode 0600 as a secret file must be. */
async function writeSecret(value: string): Promise<{ file: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "keeper-compose-secret-"));
  const file = join(dir, "secret");
  await writeFile(file, `${value}\n`, { mode: 0o600 });
  return { file, remove: () => rm(dir, { recursive: true, force: true }) };
}

describe("compose.yaml, statically", () => {
  it("runs Keeper, Redis, Prometheus and Grafana, each image pinned by a version tag and a digest", () => {
    expect(Object.keys(services).sort()).toEqual(["grafana", "keeper", "prometheus", "redis"]);
    for (const [name, s] of Object.entries(services)) {
      if (s.build !== undefined) continue;
      expect(s.image, name).toMatch(PINNED);
    }
    // Keeper is built from the repo's Dockerfile, whose base images (both stages) are pinned the same way.
    expect(service("keeper").build).toBe(".");
    const bases = [...dockerfile.matchAll(/^FROM\s+(\S+)/gm)].map((m) => m[1]);
    expect(bases).toHaveLength(2);
    for (const base of bases) expect(base).toMatch(PINNED);
  });

  it("publishes every port on loopback only", () => {
    const published = Object.entries(services).flatMap(([name, s]) => (s.ports ?? []).map((p) => [name, p]));
    expect(published.map(([name]) => name).sort()).toEqual(["grafana", "keeper", "prometheus"]);
    for (const [name, port] of published) expect(port, name).toMatch(/^127\.0\.0\.1:\d+:\d+$/);
  });

  it("keeps Redis's data on a volume, with AOF persistence and noeviction, and Keeper waits for it", () => {
    const [shell, flag, script = ""] = service("redis").command ?? [];
    expect([shell, flag]).toEqual(["sh", "-c"]);
    expect(interpolated(script)).toMatch(/^exec redis-server - /);
    expect(script).toContain("--appendonly yes");
    expect(script).toContain("--maxmemory-policy noeviction");
    const data = mountsOf("redis").find((m) => m.target === "/data");
    expect(data?.bind).toBe(false);
    expect(Object.keys(compose.volumes ?? {})).toContain(data?.source);
    expect(service("keeper").depends_on).toEqual({ redis: { condition: "service_healthy" } });
    expect(hostPort(keeperEnv.KEEPER_REDIS_URL ?? "")).toEqual({ host: "redis", port: "6379" });
  });

  it("has Redis require the password in its secret file, and Keeper read the same file", () => {
    const passwordFile = secretPath("redis", "redis-password");
    expect(passwordFile).toBeDefined();
    expect(interpolated(service("redis").command?.[2] ?? "")).toContain(`requirepass $(cat ${passwordFile})`);
    expect(keeperEnv.KEEPER_REDIS_PASSWORD_FILE).toBe(secretPath("keeper", "redis-password"));
    // The URL holds no password: it lives in the file alone.
    expect(new URL(keeperEnv.KEEPER_REDIS_URL ?? "").password).toBe("");
    // Compose mounts a file secret with the host file's owner and mode: its two readers share a user.
    expect(service("redis").user).toBe("999:999");
    expect(service("keeper").user).toBe(service("redis").user);
    const [kind, check = ""] = service("redis").healthcheck?.test ?? [];
    expect(kind).toBe("CMD-SHELL");
    expect(interpolated(check)).toContain(`REDISCLI_AUTH="$(cat ${passwordFile})" redis-cli ping`);
  });

  it("reads every secret from a file under secrets/, which neither git nor the build context holds", () => {
    const declared = Object.entries(compose.secrets ?? {});
    expect(declared.map(([name]) => name).sort()).toEqual(["grafana-admin-password", "redis-password"]);
    const excluded = readDockerignore(join(ROOT, ".dockerignore"));
    for (const [name, { file }] of declared) {
      expect(file, name).toMatch(/^\.\/secrets\/[\w-]+$/);
      // git check-ignore exits 0 for a path git ignores, 1 for one it would track.
      expect(spawnSync("git", ["check-ignore", "-q", file], { cwd: ROOT }).status, file).toBe(0);
      expect(excluded(file), file).toBe(true);
    }
    for (const [name, s] of Object.entries(services))
      for (const secret of s.secrets ?? [])
        expect(Object.keys(compose.secrets ?? {}), name).toContain(secret);
    // Grafana's admin password comes from its file; none (admin/admin) is given in the clear.
    const grafanaEnv = service("grafana").environment ?? {};
    expect(grafanaEnv.GF_SECURITY_ADMIN_PASSWORD__FILE).toBe(secretPath("grafana", "grafana-admin-password"));
    expect(Object.keys(grafanaEnv)).not.toContain("GF_SECURITY_ADMIN_PASSWORD");
  });

  it("puts Redis on an internal network that only Keeper joins", () => {
    const networks = compose.networks ?? {};
    const redisNetworks = service("redis").networks ?? [];
    expect(redisNetworks).toHaveLength(1);
    const [redisNetwork = ""] = redisNetworks;
    expect(networks[redisNetwork]?.internal).toBe(true);
    const members = Object.entries(services).filter(([, s]) => (s.networks ?? []).includes(redisNetwork));
    expect(members.map(([name]) => name).sort()).toEqual(["keeper", "redis"]);
    // Prometheus reaches Keeper, and Grafana Prometheus, on a network Keeper shares and Redis is not on.
    for (const name of ["prometheus", "grafana"]) {
      const joined = service(name).networks ?? [];
      expect(joined.length, name).toBeGreaterThan(0);
      for (const network of joined) expect(service("keeper").networks, name).toContain(network);
    }
    for (const [name, s] of Object.entries(services))
      for (const network of s.networks ?? []) expect(Object.keys(networks), name).toContain(network);
  });

  it("runs every container read-only, with no capabilities and no privilege gain", () => {
    for (const [name, s] of Object.entries(services)) {
      expect(s.read_only, name).toBe(true);
      expect(s.cap_drop, name).toEqual(["ALL"]);
      expect(s.security_opt, name).toContain("no-new-privileges:true");
    }
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
    const secret = await writeSecret(randomBytes(32).toString("hex"));
    try {
      // The secret's path swapped for this machine's copy of it; everything else as the file says.
      const check = await runCli(["config", "check"], {
        ...keeperEnv,
        KEEPER_REDIS_PASSWORD_FILE: secret.file,
        KEEPER_CONFIG: "",
      });
      expect(check.stderr).toBe("");
      expect(check.stdout).toContain("valid: mode");
      expect(check.code).toBe(0);
    } finally {
      await secret.remove();
    }
  });
});

describe(".dockerignore", () => {
  const excluded = readDockerignore(join(ROOT, ".dockerignore"));
  const copySources = [...dockerfile.matchAll(/^COPY\s+(.+)$/gm)]
    .map((m) => (m[1] ?? "").split(/\s+/))
    .filter((words) => !words.some((w) => w.startsWith("--from=")))
    .flatMap((words) => words.filter((w) => !w.startsWith("--")).slice(0, -1));

  it("keeps every file the Dockerfile copies in the build context", () => {
    expect(copySources).toEqual(expect.arrayContaining(["package.json", "src", "config"]));
    for (const source of copySources) {
      expect(existsSync(join(ROOT, source)), source).toBe(true);
      expect(excluded(source), source).toBe(false);
      // Nor any file git tracks below it (a pattern too broad would drop part of the sources).
      const tracked = spawnSync("git", ["ls-files", "--", source], { cwd: ROOT, encoding: "utf8" }).stdout;
      for (const file of tracked.split("\n").filter(Boolean)) expect(excluded(file), file).toBe(false);
    }
  });

  it("keeps installed modules, git, Keeper's state, secrets, keys, logs and build output out", () => {
    for (const path of [
      "node_modules",
      "node_modules/ioredis/package.json",
      "strategies/node_modules/x",
      ".git",
      ".git/config",
      ".keeper",
      ".keeper/state.json",
      "secrets/redis-password",
      "keys/wallet.json",
      "dist/src/cli.js",
      "coverage/index.html",
      "reports/mutation.html",
      "keeper.log",
      "src/debug.log",
      ".env",
      "compose.override.yaml",
    ])
      expect(excluded(path), path).toBe(true);
  });
});

describe("the docs' compose lines", () => {
  const docs = [
    "README.md",
    ...readdirSync(join(ROOT, "docs"))
      .filter((name) => name.endsWith(".md"))
      .map((name) => `docs/${name}`),
  ];
  const text = docs.map((file) => readFileSync(join(ROOT, file), "utf8")).join("\n");
  const lines = [...text.matchAll(/docker compose[^`\n]*/g)].map((m) => m[0].replace(/\s+#.*$/, "").trim());

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
    const operations = readFileSync(join(ROOT, "docs/operations.md"), "utf8");
    const start = operations.indexOf("## Dashboards, alerts and compose");
    expect(start, "docs/operations.md has its compose section").toBeGreaterThanOrEqual(0);
    const section = operations.slice(start, operations.indexOf("\n## ", start + 1));
    const urls = [...section.matchAll(/http:\/\/127\.0\.0\.1:(\d+)/g)].map((m) => m[1]);
    const published = Object.values(services).flatMap((s) => (s.ports ?? []).map((p) => p.split(":")[1]));
    expect(urls.length).toBeGreaterThan(1);
    for (const port of urls) expect(published).toContain(port);
  });
});

/**
 * Redis started by compose.yaml's own command and checked by its own healthcheck, swapped for this
 * machine only where they must be: the secret file's path, a free loopback port (redis-server's and
 * redis-cli's), and a temporary directory for /data.
 */
async function startComposeRedis(secretFile: string) {
  const [shell = "sh", flag = "-c", script = ""] = service("redis").command ?? [];
  const [, check = ""] = service("redis").healthcheck?.test ?? [];
  const secretInContainer = secretPath("redis", "redis-password") ?? "";
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), "keeper-compose-redis-"));
  const forThisMachine = (text: string) => interpolated(text).replaceAll(secretInContainer, secretFile);
  const local = forThisMachine(script).replace(
    "exec redis-server - ",
    `exec redis-server - --bind 127.0.0.1 --port ${port} `,
  );
  const child: ChildProcess = spawn(shell, [flag, local], { cwd: dir, stdio: "ignore" });
  const healthcheck = forThisMachine(check).replace("redis-cli ping", `redis-cli -p ${port} ping`);
  const healthy = () => spawnSync("sh", ["-c", healthcheck], { cwd: dir }).status === 0;
  await eventually("compose's redis is healthy", async () => (healthy() ? true : undefined), 10_000);
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    pid: child.pid ?? 0,
    healthy,
    async stop() {
      child.kill();
      await new Promise((resolve) => (child.exitCode === null ? child.once("exit", resolve) : resolve(null)));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

describe("Redis as compose.yaml starts it", () => {
  const password = randomBytes(32).toString("hex");
  let secret: Awaited<ReturnType<typeof writeSecret>>;
  let redis: Awaited<ReturnType<typeof startComposeRedis>>;
  beforeAll(async () => {
    secret = await writeSecret(password);
    redis = await startComposeRedis(secret.file);
  }, 20_000);
  afterAll(async () => {
    await redis?.stop();
    await secret?.remove();
  });

  it("refuses a client without the password, lets one with it in, and keeps it off its command line", async () => {
    const anonymous = spawnSync("redis-cli", ["-p", String(redis.port), "ping"], { encoding: "utf8" });
    expect(anonymous.stdout.trim()).toBe("NOAUTH Authentication required.");

    const client = new Redis(redis.url, { password, lazyConnect: true });
    await client.connect();
    try {
      expect(await client.config("GET", "appendonly")).toEqual(["appendonly", "yes"]);
      expect(await client.config("GET", "maxmemory-policy")).toEqual(["maxmemory-policy", "noeviction"]);
    } finally {
      client.disconnect();
    }
    // The process the shell exec'd into: its arguments are what ps and `docker top` show.
    const cmdline = await readFile(`/proc/${redis.pid}/cmdline`, "utf8");
    expect(cmdline).toContain("redis-server");
    expect(cmdline).not.toContain(password);
  });

  it("is healthy by its healthcheck only with the right password in the file", async () => {
    expect(redis.healthy()).toBe(true);
    await writeFile(secret.file, "a-password-redis-does-not-have\n");
    try {
      expect(redis.healthy()).toBe(false);
    } finally {
      await writeFile(secret.file, `${password}\n`);
    }
  });
});

describe("Keeper's service as compose.yaml starts it", () => {
  const password = randomBytes(32).toString("hex");
  let secret: Awaited<ReturnType<typeof writeSecret>>;
  let redis: Awaited<ReturnType<typeof startComposeRedis>>;
  beforeAll(async () => {
    secret = await writeSecret(password);
    redis = await startComposeRedis(secret.file);
  }, 20_000);
  afterAll(async () => {
    await redis?.stop();
    await secret?.remove();
  });

  it("runs the embedded demo against the password-protected Redis, serves every metric the dashboard and the alert rules read, and confirms claims", async () => {
    const opsPort = await freePort();
    const env = {
      ...keeperEnv,
      // Swapped for this machine: Redis as compose starts it, its secret file, free ports, loopback.
      KEEPER_REDIS_URL: redis.url,
      KEEPER_REDIS_PASSWORD_FILE: secret.file,
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
    expect(run.output()).not.toContain(password);
  }, 240_000);
});
