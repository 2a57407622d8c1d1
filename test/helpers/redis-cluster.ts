import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { redisServerInstalled } from "../../src/cli/private-redis.js";

/**
 * A three-master Redis Cluster on loopback ports for the cluster tests: the one named by
 * KEEPER_TEST_REDIS_CLUSTER (host:port,host:port,... as `.ci/run` starts it), or else one of the test's
 * own, started here and stopped by `stop()` (always its own with `ownCluster`). Never skipped: without
 * redis-server the test fails saying so.
 */
export interface TestCluster {
  /** Seed nodes, host:port, as `redis.cluster` takes them. */
  readonly nodes: readonly string[];
  /** Kills the master on `port` (SIGKILL) and starts it again on the same port with its own files. */
  restartMaster(port: number): Promise<void>;
  /** Deletes every key that holds `prefix` (tagged keys start with `{`), on every master. */
  deleteKeys(prefix: string): Promise<void>;
  /** Stops the cluster if this helper started it; one named by the environment is left running. */
  stop(): Promise<void>;
}

export const CLUSTER_ENV = "KEEPER_TEST_REDIS_CLUSTER";

export async function testCluster(options: { ownCluster?: boolean } = {}): Promise<TestCluster> {
  // A test that changes a node's configuration starts its own: others may share the named one.
  const fromEnv = options.ownCluster ? undefined : process.env[CLUSTER_ENV]?.trim();
  if (fromEnv) {
    const nodes = fromEnv.split(",").map((n) => n.trim());
    await waitForClusterOk(nodes.map(portOf));
    const ports = nodes.map(portOf);
    return {
      nodes,
      restartMaster: (port) => restartNode(port),
      deleteKeys: (prefix) => deleteKeysOn(ports, prefix),
      stop: async () => {},
    };
  }
  if (!redisServerInstalled())
    throw new Error(
      `${CLUSTER_ENV} is not set and redis-server is not installed (apt-get install redis-server)`,
    );
  return startOwnCluster();
}

async function startOwnCluster(): Promise<TestCluster> {
  const dir = mkdtempSync(join(tmpdir(), "keeper-cluster-"));
  const ports: number[] = [];
  for (let i = 0; i < 3; i += 1) ports.push(await freeClusterPort(ports));
  for (const port of ports) startNode({ port, dir: join(dir, String(port)) });
  for (const port of ports) await waitForPing(port);
  const created = spawnSync(
    "redis-cli",
    [
      "--cluster",
      "create",
      ...ports.map((p) => `127.0.0.1:${p}`),
      "--cluster-replicas",
      "0",
      "--cluster-yes",
    ],
    { encoding: "utf8" },
  );
  if (created.status !== 0)
    throw new Error(`redis-cli --cluster create failed: ${created.stdout}${created.stderr}`);
  await waitForClusterOk(ports);
  return {
    nodes: ports.map((p) => `127.0.0.1:${p}`),
    restartMaster: (port) => restartNode(port),
    deleteKeys: (prefix) => deleteKeysOn(ports, prefix),
    async stop() {
      // FORCE: a node still writing its first append-only file (a test turned `appendonly` off and on)
      // refuses a plain SHUTDOWN and would outlive the test run; one that ignores even that is killed.
      for (const port of ports) {
        const pid = Number(/process_id:(\d+)/.exec(redisCli(port, "info", "server"))?.[1]);
        redisCli(port, "shutdown", "nosave", "force");
        for (let i = 0; i < 100 && pid > 0 && isAlive(pid); i += 1) await sleep(50);
        if (pid > 0 && isAlive(pid)) process.kill(pid, "SIGKILL");
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * One node: a cluster member with its own node file and an append-only file in `dir`, so a restarted
 * master comes back with its slots and its data (every write a client saw acknowledged is in the file
 * before the reply, whatever kills the process).
 */
function startNode(options: { port: number; dir: string; nodesFile?: string }): void {
  spawnSync("mkdir", ["-p", options.dir]);
  const started = spawnSync(
    "redis-server",
    [
      "--port",
      String(options.port),
      "--bind",
      "127.0.0.1",
      "--cluster-enabled",
      "yes",
      "--cluster-config-file",
      options.nodesFile ?? `nodes-${options.port}.conf`,
      "--dir",
      options.dir,
      "--appendonly",
      "yes",
      "--save",
      "",
      "--maxmemory-policy",
      "noeviction",
      "--daemonize",
      "yes",
      "--logfile",
      join(options.dir, "redis.log"),
    ],
    { encoding: "utf8" },
  );
  if (started.status !== 0)
    throw new Error(`redis-server on ${options.port} did not start: ${started.stderr}`);
}

/** Reads where the node keeps its files, kills it and starts it again on them. */
async function restartNode(port: number): Promise<void> {
  const redis = new Redis({ port, host: "127.0.0.1", lazyConnect: true });
  await redis.connect();
  const [, dir] = (await redis.config("GET", "dir")) as string[];
  const [, nodesFile] = (await redis.config("GET", "cluster-config-file")) as string[];
  const info = await redis.info("server");
  redis.disconnect();
  const pid = Number(/process_id:(\d+)/.exec(info)?.[1]);
  process.kill(pid, "SIGKILL");
  for (let i = 0; i < 100 && isAlive(pid); i += 1) await sleep(50);
  startNode({ port, dir: dir ?? "", ...(nodesFile ? { nodesFile } : {}) });
  await waitForPing(port);
  await waitForClusterOk([port]);
}

async function deleteKeysOn(ports: readonly number[], prefix: string): Promise<void> {
  for (const port of ports) {
    const node = new Redis({ port, host: "127.0.0.1", lazyConnect: true });
    await node.connect();
    try {
      // Each node is asked for its own keys: a key is deleted where it lives.
      if ((await node.role())[0] !== "master") continue;
      let cursor = "0";
      do {
        const [next, keys] = await node.scan(cursor, "MATCH", `*${prefix}*`, "COUNT", 500);
        cursor = next;
        for (const key of keys) await node.del(key);
      } while (cursor !== "0");
    } finally {
      node.disconnect();
    }
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitForPing(port: number): Promise<void> {
  for (let i = 0; i < 100; i += 1) {
    if (spawnSync("redis-cli", ["-p", String(port), "ping"], { encoding: "utf8" }).stdout.trim() === "PONG")
      return;
    await sleep(100);
  }
  throw new Error(`redis-server on ${port} did not answer`);
}

/** Every node says the cluster is ok (all slots served). */
async function waitForClusterOk(ports: readonly number[]): Promise<void> {
  for (let i = 0; i < 200; i += 1) {
    const ok = ports.every((port) =>
      spawnSync("redis-cli", ["-p", String(port), "cluster", "info"], { encoding: "utf8" }).stdout.includes(
        "cluster_state:ok",
      ),
    );
    if (ok) return;
    await sleep(100);
  }
  throw new Error(`the cluster on ${ports.join(",")} did not reach cluster_state:ok`);
}

/** A free loopback port whose cluster bus port (port + 10000) is free too. */
async function freeClusterPort(taken: readonly number[]): Promise<number> {
  for (let i = 0; i < 50; i += 1) {
    const port = 20_000 + Math.floor(Math.random() * 30_000);
    if (taken.includes(port)) continue;
    if ((await isFree(port)) && (await isFree(port + 10_000))) return port;
  }
  throw new Error("no free port pair for a cluster node");
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

export function portOf(node: string): number {
  return Number(node.slice(node.lastIndexOf(":") + 1));
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function redisCli(port: number, ...args: string[]): string {
  return spawnSync("redis-cli", ["-p", String(port), ...args], { encoding: "utf8" }).stdout ?? "";
}
