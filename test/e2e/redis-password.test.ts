import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningSandbox } from "../../src/sandbox/index.js";
import {
  eventually,
  runCli,
  spawnKeeper,
  startTestSandbox,
  writeKeeperConfig,
} from "../helpers/keeper-harness.js";
import { startPasswordRedis } from "../helpers/password-redis.js";

const PASSWORD = "redis-requirepass-e2e-8d2b6f0c4a9e1d7b";

/**
 * Keeper against a Redis that requires a password, as compose.yaml runs it: the password comes from
 * a file (redis.passwordFile / KEEPER_REDIS_PASSWORD_FILE) or the URL, every connection Keeper opens
 * (its own, BullMQ's, the CLI's) gets in, and the password shows in no output.
 */
describe("keeper with a Redis that requires a password", () => {
  let sandbox: RunningSandbox;
  let server: Awaited<ReturnType<typeof startPasswordRedis>>;
  let configFile: string;
  beforeAll(async () => {
    server = await startPasswordRedis(PASSWORD);
    ({ sandbox } = await startTestSandbox({ walletCount: 2 }));
    configFile = await writeKeeperConfig(sandbox, "t-redis-password");
  });
  afterAll(async () => {
    await sandbox?.close();
    await server?.stop();
  });

  it("refuses to start without the password: exit 2, one line naming redis.passwordFile and the rule", async () => {
    const run = spawnKeeper(configFile, { KEEPER_REDIS_URL: server.url, KEEPER_LOG_LEVEL: "debug" });
    expect(await run.exited).toBe(2);
    expect(run.stderr()).toContain(
      `redis.passwordFile: Redis at ${server.url} requires a password (NOAUTH): set redis.passwordFile or KEEPER_REDIS_PASSWORD_FILE`,
    );
    expect(run.output()).not.toMatch(/^\s+at /m);
  }, 90_000);

  it("runs a scheduler (password file) and a worker (password in the URL) whose polls land, and prints neither", async () => {
    const withFile = { KEEPER_REDIS_URL: server.url, KEEPER_REDIS_PASSWORD_FILE: server.passwordFile };
    const withUrl = { KEEPER_REDIS_URL: `redis://:${PASSWORD}@127.0.0.1:${server.port}` };
    const scheduler = spawnKeeper(configFile, withFile, ["--role", "scheduler"]);
    const worker = spawnKeeper(configFile, withUrl, ["--role", "worker"]);
    try {
      // The worker's polls reach the service through BullMQ's connections and are recorded in Redis:
      // `keeper status` (a connection of the CLI's own) reads them back.
      const polled = await eventually(
        "every wallet polled",
        async () => {
          const status = await runCli(["status", "--json", "--config", configFile], withFile);
          if (status.code !== 0) throw new Error(status.stderr);
          const { lastPolls } = JSON.parse(status.stdout) as { lastPolls: Record<string, string> };
          return sandbox.wallets.every((w) => lastPolls[w] !== undefined) ? lastPolls : undefined;
        },
        60_000,
      );
      expect(Object.keys(polled).sort()).toEqual([...sandbox.wallets].sort());
    } finally {
      await scheduler.kill("SIGTERM");
      await worker.kill("SIGTERM");
    }
    for (const run of [scheduler, worker]) {
      expect(run.output().length).toBeGreaterThan(0);
      expect(run.output()).not.toContain(PASSWORD);
    }
  }, 90_000);

  it("`keeper status` without the password exits 2 with the rule, and with a wrong one names the file", async () => {
    const without = await runCli(["status", "--config", configFile], { KEEPER_REDIS_URL: server.url });
    expect(without.code).toBe(2);
    expect(without.stderr).toContain("redis.passwordFile: ");
    expect(without.stderr).toContain("(NOAUTH)");
    const wrong = await runCli(["status", "--config", configFile], {
      KEEPER_REDIS_URL: `redis://:not-the-password-0123456789@127.0.0.1:${server.port}`,
    });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain(`redis.url: Redis at ${server.url} refused the password in the URL`);
    expect(wrong.stderr).not.toContain("not-the-password-0123456789");
    expect(wrong.stderr).not.toMatch(/^\s+at /m);
  }, 120_000);
});
