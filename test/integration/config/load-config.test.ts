import { chmod, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inspect } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { apiKeyFor, describeApiKey, SANDBOX_API_KEY } from "../../../src/config/api-key.js";
import { type LoadConfigOptions, loadConfig, NO_WALLETS_PROBLEM } from "../../../src/config/load-config.js";
import { ConfigError } from "../../../src/core/errors.js";

const WALLET = "7YttLkHDoNj9wyDur5pM1ejNaAvT9X4eqaYcHQqtj2G5";
const OTHER_WALLET = "9faWBd6Eaxrj7kU8LgCkwuvEkUHsZ7VftzcgJ5xE7wyK";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "keeper-config-"));
});

async function file(name: string, text: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

/** A secret file as an operator should write it: readable by its owner only. */
async function secretFile(name: string, text: string, mode = 0o600): Promise<string> {
  const path = await file(name, text);
  await chmod(path, mode);
  return path;
}

async function problemsOf(text: string, env: NodeJS.ProcessEnv = {}): Promise<string[]> {
  const path = await file(`c-${Math.random().toString(36).slice(2)}.yaml`, text);
  try {
    await loadConfig({ file: path, env });
  } catch (error) {
    if (error instanceof ConfigError) return [...error.problems];
    throw error;
  }
  return [];
}

describe("loadConfig", () => {
  it("loads the defaults with no file", async () => {
    const config = await loadConfig({ env: {} });
    expect(config.mode).toBe("live");
    expect(config.service.baseUrl).toBe("http://127.0.0.1:8787");
    expect(config.strategies.map((s) => s.name)).toEqual(["auto-claim"]);
    expect(Object.isFrozen(config.service)).toBe(true);
  });

  // The README's exit-rules example has no `overrides`, so nothing had read the override schemas'
  // `shape` before the config was frozen; zod 4 defines `shape` on first read, which a frozen schema
  // refuses ("Cannot redefine property: shape"). The config's data is frozen, the strategies are not.
  it("loads exit-rules without overrides: its config frozen, its schema still usable", async () => {
    const config = await loadConfig({
      file: await file(
        "exit-rules.yaml",
        "strategies:\n  - name: exit-rules\n    takeProfitPct: 30\n    stopLossPct: 20\n",
      ),
      env: {},
    });
    const [exitRules] = config.strategies;
    expect(exitRules?.config).toMatchObject({ takeProfitPct: 30, stopLossPct: 20 });
    expect(Object.isFrozen(exitRules?.config)).toBe(true);
    expect(Object.isFrozen(config.strategies)).toBe(true);
    expect(Object.isFrozen(exitRules?.strategy.configSchema)).toBe(false);
    const withOverride = exitRules?.strategy.configSchema.safeParse({
      takeProfitPct: 30,
      overrides: [{ match: { side: "yes" }, rules: { takeProfitPct: 50 } }],
    });
    expect(withOverride?.success).toBe(true);
  });

  it.each([
    ["mode: maybe", "mode: Invalid option"],
    ["service:\n  timeoutMs: 5", "service.timeoutMs:"],
    ["service:\n  baseUrl: ftp://x", "service.baseUrl: expected an http(s) URL"],
    ["service:\n  surprise: 1", "service.surprise: unknown key"],
    ["rpc:\n  sendUrls: [https://ok.example, ws://x]", "rpc.sendUrls[1]: expected an http(s) URL"],
    ["schedules:\n  pollPositions: every minute", "schedules.pollPositions: expected a cron expression"],
    ["wallets:\n  - pubkey: short", "wallets[0].pubkey: expected a base58 public key"],
    ["redis:\n  url: http://x", "redis.url: expected a redis:// or rediss:// URL"],
    // Passed the scheme check, then every command died on "unexpected error: Invalid URL".
    [
      'redis:\n  url: "redis://:pw@[bad"',
      "redis.url: expected a URL that parses, e.g. redis://10.0.0.5:6379",
    ],
    // "" listens on every interface: the status page and /metrics have no login.
    ['ops:\n  host: ""', "ops.host: expected a host name or IP address to listen on"],
    ["ops:\n  host: http://127.0.0.1:9464", "ops.host: expected a host name or IP address to listen on"],
    [
      `wallets:\n  - pubkey: ${WALLET}\n  - pubkey: ${OTHER_WALLET}\n  - pubkey: ${WALLET}`,
      `wallets[2].pubkey: wallet ${WALLET} is listed twice (first at wallets[0])`,
    ],
    [
      "redis:\n  cluster: [10.0.0.5:7000, 10.0.0.6]",
      "redis.cluster[1]: expected host:port, e.g. 10.0.0.5:7000",
    ],
    ["redis:\n  cluster: [redis-a:70000]", "redis.cluster[0]: expected a port between 1 and 65535"],
    ["redis:\n  cluster: []", "redis.cluster: expected at least one host:port seed node"],
    [
      "strategies:\n  - name: auto-claim\n    minPayoutUsd: -2",
      "strategies[0].minPayoutUsd: expected dollars >= 0",
    ],
    ["strategies:\n  - name: auto-claim\n    nonsense: 1", "strategies[0].nonsense: unknown key"],
    ["strategies:\n  - name: nope", 'strategies[0].name: unknown strategy "nope"'],
    [
      "strategies:\n  - name: auto-claim\n  - name: auto-claim",
      'strategies[1].name: strategy "auto-claim" is configured twice',
    ],
    ["service:\n  apiKey: abc", "service.apiKey: secrets may not be written in the config file"],
    [
      "wallets:\n  - pubkey: 7YttLkHDoNj9wyDur5pM1ejNaAvT9X4eqaYcHQqtj2G5\n    secretKey: '[1,2]'",
      "wallets[0].secretKey: secrets may not",
    ],
    [
      "signer:\n  priorityFeePercentile: 0",
      "signer.priorityFeePercentile: Too small: expected number to be >=1",
    ],
    [
      "signer:\n  priorityFeeEscalation: 0.5",
      "signer.priorityFeeEscalation: Too small: expected number to be >=1",
    ],
    [
      "signer:\n  minPriorityFeeMicroLamports: 1.5",
      "signer.minPriorityFeeMicroLamports: Invalid input: expected int",
    ],
    [
      "watcher:\n  hotIntervalMs: 50",
      "watcher.hotIntervalMs: expected milliseconds: 0 (off) or 100 to 60000",
    ],
    ["watcher:\n  hotSharePct: 80", "watcher.hotSharePct: expected a percent between 1 and 50"],
    [
      "service:\n  rateLimitSharePct: 101",
      "service.rateLimitSharePct: expected a percent between 10 and 100",
    ],
    [
      "schedules:\n  idleSweepMultiple: 0",
      "schedules.idleSweepMultiple: expected a whole number from 1 to 100",
    ],
    ["- just\n- a list", "expected a mapping of config keys"],
    ["mode: [unclosed", "not valid YAML"],
  ])("%j is refused: %s", async (text, expected) => {
    const problems = await problemsOf(text);
    expect(problems.join("\n")).toContain(expected);
  });

  it("never echoes the password of a redis.url it cannot parse", async () => {
    const problems = await problemsOf('redis:\n  url: "redis://:Hunter2RedisPassword@[bad:6379"\n');
    expect(problems).toEqual([
      "redis.url: expected a URL that parses, e.g. redis://10.0.0.5:6379 (user and password before the host, their special characters percent-encoded)",
    ]);
    expect(problems.join("\n")).not.toContain("Hunter2");
  });

  it.each(["0.0.0.0", "::", "localhost", "keeper.internal", "10.0.0.7"])(
    "ops.host %s is a host to listen on",
    async (host) => {
      expect(await problemsOf(`ops:\n  host: "${host}"\n`)).toEqual([]);
    },
  );

  it("names the webhook URL's source when it is not an http(s) URL, never the URL", async () => {
    const hook = await secretFile("bad-hook", "not-a-url-SecretHookToken\n");
    expect(await problemsOf(`notifications:\n  webhookUrlFile: ${hook}\n`)).toEqual([
      `notifications.webhookUrlFile: ${hook} does not hold an http(s) URL`,
    ]);
    // The variable wins over the file, and is named when it is the one used.
    const fromEnv = await problemsOf(`notifications:\n  webhookUrlFile: ${hook}\n`, {
      KEEPER_WEBHOOK_URL: "ftp://SecretHookToken",
    });
    expect(fromEnv).toEqual(["KEEPER_WEBHOOK_URL: expected an http(s) URL"]);
    expect(fromEnv.join("\n")).not.toContain("SecretHookToken");
  });

  it("requires a wallet when asked (keeper start, config check of a file), along with every other problem", async () => {
    const path = await file("no-wallets.yaml", "mode: maybe\nwallets: []\n");
    const problems = await loadConfig({ file: path, env: {}, requireWallets: true }).catch(
      (error: ConfigError) => error.problems,
    );
    expect(problems).toEqual([expect.stringMatching(/^mode: /), NO_WALLETS_PROBLEM]);
    // Other commands (status, ledger, reads) need no wallet.
    expect(await problemsOf("wallets: []\n")).toEqual([]);
  });

  it("lists every problem at once", async () => {
    const problems = await problemsOf("mode: maybe\nservice:\n  timeoutMs: 5\nstrategies:\n  - name: nope\n");
    expect(problems).toHaveLength(3);
  });

  it("never echoes a secret it refuses", async () => {
    const problems = await problemsOf("service:\n  apiKey: hunter2-secret-value\n");
    expect(problems.join("\n")).not.toContain("hunter2");
  });

  it("applies KEEPER_* variables over the file and checks them", async () => {
    const path = await file("env.yaml", "service:\n  baseUrl: http://127.0.0.1:9999\n");
    const config = await loadConfig({
      file: path,
      env: {
        KEEPER_SERVICE_URL: "https://api.example.invalid",
        KEEPER_OPS_PORT: "9100",
        KEEPER_API_KEY: "k-123",
      },
    });
    expect(config.service.baseUrl).toBe("https://api.example.invalid");
    expect(config.ops.port).toBe(9100);
    expect(config.secrets.apiKey).toBe("k-123");
    expect(await problemsOf("{}", { KEEPER_OPS_PORT: "nine" })).toEqual([
      "KEEPER_OPS_PORT: expected a number",
    ]);
  });

  it("record.dir is off unless set, and a directory path when it is", async () => {
    expect((await loadConfig({ env: {} })).record.dir).toBeUndefined();
    const recording = join(dir, "var", "recording");
    const path = await file("record.yaml", `record:\n  dir: ${recording}\n`);
    expect((await loadConfig({ file: path, env: {} })).record.dir).toBe(recording);
    expect(await problemsOf('record:\n  dir: ""\n')).toEqual(["record.dir: expected a directory path"]);
    expect(await problemsOf("record:\n  dir: 7\n")).toEqual(["record.dir: expected a directory path"]);
    expect(await problemsOf("record:\n  directory: /x\n")).toEqual(["record.directory: unknown key"]);
  });

  // Under /proc, Node's recursive mkdir never returned: the keeper's first poll hung its disk thread.
  it.each([
    ["/proc/self/keeper-recording", "proc"],
    ["/proc/keeper/recording", "proc"],
    ["/sys/keeper-recording", "sysfs"],
  ])(
    "refuses a record.dir on a kernel file system (%s), naming it, without touching it",
    async (path, fs) => {
      expect(await problemsOf(`record:\n  dir: ${path}\n`)).toEqual([
        `record.dir: ${path} is on the kernel's ${fs} file system, which holds no files; expected a directory on a disk`,
      ]);
    },
  );

  it("refuses a record.dir below a file, naming the file; a missing one below a directory is fine", async () => {
    const blocker = await file("not-a-dir", "x");
    expect(await problemsOf(`record:\n  dir: ${join(blocker, "recording")}\n`)).toEqual([
      `record.dir: ${blocker} is not a directory`,
    ]);
    expect(await problemsOf(`record:\n  dir: ${join(dir, "new", "deeper")}\n`)).toEqual([]);
  });

  it("reads ops.allowedHosts from the file or KEEPER_OPS_ALLOWED_HOSTS (comma-separated), names only", async () => {
    const defaults = await loadConfig({ env: {} });
    expect(defaults.ops.allowedHosts).toEqual([]);
    expect(defaults.ops.queuesWritable).toBe(false);
    const path = await file("hosts.yaml", "ops:\n  allowedHosts: [keeper.lan]\n  queuesWritable: true\n");
    const fromFile = await loadConfig({ file: path, env: {} });
    expect(fromFile.ops.allowedHosts).toEqual(["keeper.lan"]);
    expect(fromFile.ops.queuesWritable).toBe(true);
    const fromEnv = await loadConfig({
      file: path,
      env: { KEEPER_OPS_ALLOWED_HOSTS: "keeper, keeper.internal ,," },
    });
    expect(fromEnv.ops.allowedHosts).toEqual(["keeper", "keeper.internal"]);
    expect(await problemsOf("{}", { KEEPER_OPS_ALLOWED_HOSTS: "keeper,http://evil.example:80" })).toEqual([
      "ops.allowedHosts[1]: expected a host name or address without scheme or port, e.g. keeper",
    ]);
    expect(await problemsOf('ops:\n  allowedHosts: ["keeper:9464"]\n')).toEqual([
      "ops.allowedHosts[0]: expected a host name or address without scheme or port, e.g. keeper",
    ]);
  });

  it("a remote service without a key is keyless, not an error; the sandbox on loopback gets its key", async () => {
    const remote = await loadConfig({ env: { KEEPER_SERVICE_URL: "https://api.example.invalid" } });
    expect(apiKeyFor(remote)).toBeUndefined();
    const keyed = await loadConfig({
      env: { KEEPER_SERVICE_URL: "https://api.example.invalid", KEEPER_API_KEY: "k-1" },
    });
    expect(apiKeyFor(keyed)).toBe("k-1");
    expect(apiKeyFor(await loadConfig({ env: {} }))).toBe(SANDBOX_API_KEY);
    expect((await loadConfig({ env: {} })).protections.closeAllSlippageBps).toBe(500);
    expect(await problemsOf("protections:\n  closeAllSlippageBps: 10001\n")).toEqual([
      "protections.closeAllSlippageBps: expected basis points between 0 and 10000",
    ]);
  });

  // A refused key was always blamed on KEEPER_API_KEY, wherever it came from.
  it("describes the API key by where it came from (the variable wins over a file), never the key", async () => {
    const keyFile = await secretFile("described-key", "DescribedFileKey0123\n");
    const withFile = await file("described.yaml", `service:\n  apiKeyFile: ${keyFile}\n`);
    const remote = { KEEPER_SERVICE_URL: "https://api.example.invalid" };
    const cases: Array<[LoadConfigOptions, { source: string; key: string }]> = [
      [
        { file: withFile, env: {} },
        { source: "service.apiKeyFile", key: `the key in ${keyFile}` },
      ],
      [
        { env: { KEEPER_API_KEY_FILE: keyFile } },
        { source: "KEEPER_API_KEY_FILE", key: `the key in ${keyFile}` },
      ],
      [
        { file: withFile, env: { KEEPER_API_KEY: "EnvKey0123" } },
        { source: "KEEPER_API_KEY", key: "the key" },
      ],
      [
        { env: {} },
        { source: "KEEPER_API_KEY, service.apiKeyFile", key: "the sandbox's default key (neither is set)" },
      ],
      [
        { env: remote },
        { source: "KEEPER_API_KEY, service.apiKeyFile", key: "a request without a key (neither is set)" },
      ],
    ];
    for (const [options, described] of cases) {
      const config = await loadConfig(options);
      expect(describeApiKey(config)).toEqual(described);
      expect(JSON.stringify(describeApiKey(config))).not.toMatch(/DescribedFileKey|EnvKey/);
    }
  });

  it("keeps secrets out of JSON and inspect output", async () => {
    const keyFile = await secretFile("api-key", "file-secret-key\n");
    const config = await loadConfig({
      file: await file("k.yaml", `service:\n  apiKeyFile: ${keyFile}\n`),
      env: {},
    });
    expect(config.secrets.apiKey).toBe("file-secret-key");
    expect(JSON.stringify(config)).not.toContain("file-secret-key");
    expect(inspect(config, { depth: 10 })).not.toContain("file-secret-key");
  });

  it("reads the operator token from ops.adminTokenFile, keeps it out of output, and refuses a short one", async () => {
    const token = "operator-token-0123456789abcdef";
    const tokenFile = await secretFile("admin-token", `${token}\n`);
    const config = await loadConfig({
      file: await file("t.yaml", `ops:\n  adminTokenFile: ${tokenFile}\n`),
      env: {},
    });
    expect(config.secrets.adminToken).toBe(token);
    expect(JSON.stringify(config)).not.toContain(token);
    expect(inspect(config, { depth: 10 })).not.toContain(token);
    expect((await loadConfig({ env: {} })).secrets.adminToken).toBeUndefined();

    const short = await secretFile("short-token", "hunter2\n");
    expect(await problemsOf(`ops:\n  adminTokenFile: ${short}\n`)).toEqual([
      "ops.adminTokenFile: expected a token of at least 16 characters",
    ]);
    expect(await problemsOf(`ops:\n  adminTokenFile: ${join(dir, "absent")}\n`)).toEqual([
      `ops.adminTokenFile: cannot read ${join(dir, "absent")} (ENOENT)`,
    ]);
  });

  it("reads the Redis password from redis.passwordFile or KEEPER_REDIS_PASSWORD_FILE, never shows it, and checks it", async () => {
    const password = "redis-password-5e1f9c2a7b";
    const passwordFile = await file("redis-password", `${password}\n`);
    await chmod(passwordFile, 0o600);
    const fromFile = await loadConfig({
      file: await file("r.yaml", `redis:\n  passwordFile: ${passwordFile}\n`),
      env: {},
    });
    expect(fromFile.secrets.redisPassword).toBe(password);
    expect(JSON.stringify(fromFile)).not.toContain(password);
    expect(inspect(fromFile, { depth: 10 })).not.toContain(password);
    const fromEnv = await loadConfig({ env: { KEEPER_REDIS_PASSWORD_FILE: passwordFile } });
    expect(fromEnv.secrets.redisPassword).toBe(password);
    expect((await loadConfig({ env: {} })).secrets.redisPassword).toBeUndefined();

    const short = await file("short-redis-password", "redis\n");
    // Like every secret file in live mode, the password's is refused while others can read it.
    expect((await problemsOf(`redis:\n  passwordFile: ${short}\n`))[0]).toMatch(
      /^redis\.passwordFile: .* is open to group or others \(mode 0644\).*chmod 600/,
    );
    await chmod(short, 0o600);
    expect(await problemsOf(`redis:\n  passwordFile: ${short}\n`)).toEqual([
      "redis.passwordFile: expected a password of at least 16 characters",
    ]);
    expect(await problemsOf("", { KEEPER_REDIS_PASSWORD_FILE: join(dir, "absent") })).toEqual([
      `redis.passwordFile: cannot read ${join(dir, "absent")} (ENOENT)`,
    ]);
    const both = `redis:\n  url: redis://:in-the-url-0123456789@127.0.0.1:6379\n  passwordFile: ${passwordFile}\n`;
    const problems = await problemsOf(both);
    expect(problems).toEqual([
      "redis.passwordFile: redis.url already holds a password; give it in one place (the file keeps it out of the config)",
    ]);
  });

  it("refuses, in live mode, every secret file group or others can read: the key, the path and the rule", async () => {
    const rule = (key: string, path: string, mode: string) =>
      `${key}: ${path} is open to group or others (mode ${mode}); a secret file must be readable by its owner only: chmod 600 ${path}`;
    const apiKey = await secretFile("loose-api-key", "loose-secret-key\n", 0o644);
    const token = await secretFile("loose-token", "operator-token-0123456789abcdef\n", 0o640);
    const hook = await secretFile("loose-hook", "https://hooks.example.invalid/secret-path\n", 0o604);
    const yaml = `mode: live
service:
  apiKeyFile: ${apiKey}
ops:
  adminTokenFile: ${token}
notifications:
  webhookUrlFile: ${hook}
`;
    const problems = await problemsOf(yaml);
    expect(problems).toEqual([
      rule("service.apiKeyFile", apiKey, "0644"),
      rule("notifications.webhookUrlFile", hook, "0604"),
      rule("ops.adminTokenFile", token, "0640"),
    ]);
    for (const secret of ["loose-secret-key", "operator-token", "secret-path"])
      expect(problems.join("\n")).not.toContain(secret);
    // The variable form is named as such.
    expect(await problemsOf("mode: live\n", { KEEPER_API_KEY_FILE: apiKey })).toEqual([
      rule("KEEPER_API_KEY_FILE", apiKey, "0644"),
    ]);
    // Dry-run loads no key and moves nothing: the same files are read.
    const dry = await loadConfig({
      file: await file("dry.yaml", yaml.replace("mode: live", "mode: dry-run")),
      env: {},
    });
    expect(dry.secrets.apiKey).toBe("loose-secret-key");
    // Fixed as the message says, the live config loads.
    for (const path of [apiKey, token, hook]) await chmod(path, 0o600);
    expect(await problemsOf(yaml)).toEqual([]);
  });

  it.each([
    ["http://127.0.0.1:8787", "auto", "live"],
    ["http://localhost:8787", "auto", "live"],
    ["https://api.example.invalid", "auto", "dry-run"],
    ["https://api.example.invalid", "live", "live"],
    ["http://127.0.0.1:8787", "dry-run", "dry-run"],
  ])("service %s with mode %s runs %s", async (baseUrl, mode, expected) => {
    const config = await loadConfig({
      file: await file(`m-${mode}.yaml`, `mode: ${mode}\nservice:\n  baseUrl: ${baseUrl}\n`),
      env: {},
    });
    expect(config.mode).toBe(expected);
  });

  it("loads a user strategy from a file and validates its config", async () => {
    const module = await file(
      "my-strategy.mjs",
      `import { z } from "zod";
export default { name: "my-strategy", contractVersion: 1, description: "test",
  configSchema: z.strictObject({ threshold: z.number().max(10, "expected at most 10") }),
  evaluate: ({ state }) => ({ intents: [], state }) };`,
    );
    const good = await loadConfig({
      file: await file(
        "u.yaml",
        `strategies:\n  - name: my-strategy\n    module: ${module}\n    threshold: 3\n`,
      ),
      env: {},
    });
    expect(good.strategies[0]?.config).toEqual({ threshold: 3 });
    expect(
      await problemsOf(`strategies:\n  - name: my-strategy\n    module: ${module}\n    threshold: 30\n`),
    ).toEqual(["strategies[0].threshold: expected at most 10"]);
    const broken = await file("broken.mjs", "export default { name: 'broken' };");
    const problems = await problemsOf(`strategies:\n  - name: broken\n    module: ${broken}\n`);
    expect(problems.join("\n")).toContain("must export");
  });
});
