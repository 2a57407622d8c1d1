import { existsSync } from "node:fs";
import { chmod, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import bs58 from "bs58";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningSandbox } from "../../src/sandbox/index.js";
import { eventually, spawnKeeper, startTestSandbox, writeKeeperConfig } from "../helpers/keeper-harness.js";
import { testRedis } from "../helpers/redis.js";
import { recordTestSecret } from "../helpers/test-secrets.js";

const KEY_VARIABLE = "KEEPER_TEST_ISOLATION_KEY";

/**
 * A user strategy that goes after the keys the moment it is imported: it records the environment it
 * finds and wraps crypto.sign to record every key it is handed, writing both to `out`.
 */
function spyModule(out: string): string {
  return `import crypto from "node:crypto";
import { appendFileSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
const record = (entry) => appendFileSync(${JSON.stringify(out)}, JSON.stringify(entry) + "\\n");
record({ imported: process.pid, env: { ...process.env } });
const original = crypto.sign;
crypto.sign = (algorithm, data, key) => {
  record({ signedWith: key.export({ format: "jwk" }) });
  return original(algorithm, data, key);
};
syncBuiltinESMExports();
export default {
  name: "key-spy",
  contractVersion: 1,
  configSchema: { safeParse: (value) => ({ success: true, data: value }) },
  evaluate: () => ({ intents: [], state: {} }),
};
`;
}

interface SpyRecord {
  imported?: number;
  env?: Record<string, string>;
}

async function recordsIn(file: string): Promise<SpyRecord[]> {
  return (await readFile(file, "utf8"))
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as SpyRecord);
}

describe("a user strategy module never runs beside the keys of a separate signer", () => {
  let sandbox: RunningSandbox;
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let dir: string;
  let keyBase58: string;
  const runs: Array<ReturnType<typeof spawnKeeper>> = [];

  /** A config whose one wallet's key comes from KEY_VARIABLE and which runs the spy module. */
  async function spiedConfig(out: string): Promise<string> {
    const module = join(dir, `spy-${runs.length}.mjs`);
    await writeFile(module, spyModule(out));
    return writeKeeperConfig(sandbox, redis.prefix, {
      walletYaml: `wallets:\n  - pubkey: ${sandbox.wallets[0]}\n    keyEnv: ${KEY_VARIABLE}\n`,
      extra: `strategies:\n  - name: key-spy\n    module: ${module}\n`,
    });
  }

  function start(config: string, args: string[] = []) {
    const run = spawnKeeper(config, { [KEY_VARIABLE]: keyBase58, KEEPER_TEST_SPY_MARKER: "seen" }, args);
    runs.push(run);
    return run;
  }

  async function started(run: ReturnType<typeof spawnKeeper>): Promise<void> {
    await eventually("the keeper started", async () =>
      run.output().includes("keeper started") ? true : undefined,
    );
  }

  beforeAll(async () => {
    ({ sandbox } = await startTestSandbox());
    redis = await testRedis("e2e-signer-isolation");
    dir = await mkdtemp(join(tmpdir(), "keeper-isolation-"));
    const secretKey = sandbox.world.walletKeypair(0).secretKey;
    recordTestSecret(secretKey, "isolation test wallet 0");
    keyBase58 = bs58.encode(secretKey);
  });
  afterAll(async () => {
    await Promise.all(runs.map((run) => run.kill()));
    await sandbox?.close();
    await redis?.cleanup();
  });

  it("`--role signer` loads the key and never imports the module", async () => {
    const out = join(dir, "signer-spy.jsonl");
    const signer = start(await spiedConfig(out), ["--role", "signer"]);
    await started(signer);
    expect(signer.output()).toMatch(/"roles":\["signer"\]/);
    // The signer is up, with its key loaded; the module would have written at import.
    expect(existsSync(out)).toBe(false);
    expect(signer.output()).not.toMatch(/user strategy code runs in the process that holds/);
    await signer.kill("SIGTERM");
  }, 60_000);

  it("`--role worker` given the key variable is refused before the module runs (exit 2, no stack)", async () => {
    const out = join(dir, "worker-spy.jsonl");
    const worker = start(await spiedConfig(out), ["--role", "worker"]);
    expect(await worker.exited).toBe(2);
    // Removing the variable would not do: /proc/self/environ keeps what the process started with.
    expect(worker.stderr()).toContain(
      `keeper: invalid configuration:\n  wallets[0].keyEnv: ${KEY_VARIABLE} is set for a process that loads no key (role worker); a key variable must reach the signer's process only (deleting it later leaves it in /proc/self/environ): unset ${KEY_VARIABLE} here`,
    );
    expect(worker.output()).not.toMatch(/\n\s+at /);
    expect(worker.output()).not.toContain(keyBase58);
    expect(existsSync(out)).toBe(false);
    expect(worker.output()).not.toContain("keeper started");
  }, 60_000);

  it("`--role worker` without the variable runs the module, which finds no key in its environment", async () => {
    const out = join(dir, "worker-clean-spy.jsonl");
    const worker = spawnKeeper(await spiedConfig(out), { KEEPER_TEST_SPY_MARKER: "seen" }, [
      "--role",
      "worker",
    ]);
    runs.push(worker);
    await started(worker);
    const [record] = await recordsIn(out);
    expect(record?.env?.KEEPER_TEST_SPY_MARKER).toBe("seen");
    expect(record?.env).not.toHaveProperty(KEY_VARIABLE);
    await worker.kill("SIGTERM");
  }, 60_000);

  it("a signer whose key file others can read is refused (exit 2): the key, the path, chmod 600", async () => {
    const keyFile = join(dir, "loose-wallet.json");
    await writeFile(keyFile, JSON.stringify([...sandbox.world.walletKeypair(0).secretKey]), { mode: 0o644 });
    await chmod(keyFile, 0o644);
    const config = await writeKeeperConfig(sandbox, redis.prefix, {
      walletYaml: `wallets:\n  - pubkey: ${sandbox.wallets[0]}\n    keyFile: ${keyFile}\n`,
    });
    const signer = spawnKeeper(config, {}, ["--role", "signer"]);
    runs.push(signer);
    expect(await signer.exited).toBe(2);
    expect(signer.stderr()).toContain(
      `wallets[0].keyFile: ${keyFile} is open to group or others (mode 0644); a secret file must be readable by its owner only: chmod 600 ${keyFile}`,
    );
    expect(signer.output()).not.toMatch(/\n\s+at /);
    expect(signer.output()).not.toContain(keyBase58);
  }, 60_000);

  it("all roles in one process: the key is loaded before the module, with a warning at start-up", async () => {
    const out = join(dir, "all-spy.jsonl");
    const keeper = start(await spiedConfig(out));
    await started(keeper);
    const [record] = await recordsIn(out);
    expect(record?.env?.KEEPER_TEST_SPY_MARKER).toBe("seen");
    expect(record?.env).not.toHaveProperty(KEY_VARIABLE);
    expect(await readFile(out, "utf8")).not.toContain(keyBase58);
    expect(keeper.output()).toMatch(/user strategy code runs in the process that holds the wallet keys/);
    await keeper.kill("SIGTERM");
  }, 60_000);
});
