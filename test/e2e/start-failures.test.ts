import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEEPER_NODE_FLAGS } from "../../src/cli/node-flags.js";
import type { RunningSandbox } from "../../src/sandbox/index.js";
import { startCheckedSandbox } from "../helpers/checked-sandbox.js";
import { runCli, spawnCli, spawnKeeper } from "../helpers/keeper-harness.js";

const WALLET = "7YttLkHDoNj9wyDur5pM1ejNaAvT9X4eqaYcHQqtj2G5";
// Port 1 on loopback: nothing listens there, so connections are refused at once.
const NOWHERE = "127.0.0.1:1";
const SERVICE_KEY = "ServiceApiKeyInQuery0123456789";
const RPC_KEY = "RpcApiKeyInPath0123456789abcdef";

describe("keeper start refuses to run with one clear message", () => {
  let sandbox: RunningSandbox;
  let dir: string;
  beforeAll(async () => {
    sandbox = await startCheckedSandbox({ port: 0 });
    dir = await mkdtemp(join(tmpdir(), "keeper-start-"));
    // 64 items, one out of range: a keypair file's shape with a byte no key has.
    await writeFile(join(dir, "bad-key.json"), JSON.stringify([...Array(63).fill(9), 256]), { mode: 0o600 });
  });
  afterAll(() => sandbox?.close());

  const cases: Array<[string, () => string, number, RegExp]> = [
    [
      "a bad config",
      () => "mode: sometimes\nservice:\n  timeoutMs: -4\n",
      2,
      /mode: .*\n.*service\.timeoutMs/,
    ],
    [
      "an unreachable Redis",
      () =>
        `service:\n  baseUrl: ${sandbox.url}\nredis:\n  url: redis://${NOWHERE}\nwallets:\n  - pubkey: ${WALLET}\n`,
      1,
      /cannot reach Redis at redis:\/\/127\.0\.0\.1:1/,
    ],
    [
      "an unreachable API",
      () => `service:\n  baseUrl: http://${NOWHERE}\n  retries: 0\nwallets:\n  - pubkey: ${WALLET}\n`,
      1,
      /cannot reach the service at http:\/\/127\.0\.0\.1:1/,
    ],
    [
      "an unreachable RPC",
      () =>
        `service:\n  baseUrl: ${sandbox.url}\nrpc:\n  url: http://${NOWHERE}\nwallets:\n  - pubkey: ${WALLET}\n`,
      1,
      /cannot reach the Solana RPC at http:\/\/127\.0\.0\.1:1/,
    ],
    // A provider's key rides in the URL's path or query: the node is named by scheme, host and port only.
    [
      "an unreachable API whose URL holds a key",
      () =>
        `service:\n  baseUrl: http://${NOWHERE}/v1?api-key=${SERVICE_KEY}\n  retries: 0\nwallets:\n  - pubkey: ${WALLET}\n`,
      1,
      /keeper: cannot reach the service at http:\/\/127\.0\.0\.1:1: /,
    ],
    [
      "an unreachable RPC whose URL holds a key",
      () =>
        `service:\n  baseUrl: ${sandbox.url}\nrpc:\n  url: http://${NOWHERE}/v2/${RPC_KEY}\nwallets:\n  - pubkey: ${WALLET}\n`,
      1,
      /keeper: cannot reach the Solana RPC at http:\/\/127\.0\.0\.1:1: /,
    ],
    // config check refuses it too, with the same line (cli.test.ts); start refuses it before any connection.
    [
      "a config with no wallets",
      () => `service:\n  baseUrl: ${sandbox.url}\nrpc:\n  url: http://${NOWHERE}\nwallets: []\n`,
      2,
      /keeper: invalid configuration:\n {2}wallets: at least one wallet is required to run the keeper\n/,
    ],
    // Was a hang: Node's recursive mkdir never returns under /proc, so the first poll's line never landed.
    [
      "a record.dir on the kernel's proc file system",
      () =>
        `service:\n  baseUrl: ${sandbox.url}\nwallets:\n  - pubkey: ${WALLET}\nrecord:\n  dir: /proc/self/keeper-recording\n`,
      2,
      /record\.dir: \/proc\/self\/keeper-recording is on the kernel's proc file system, which holds no files/,
    ],
    // Loaded last (a live signer, once Redis, the service and the RPC answered): named by its field.
    [
      "a key file with a byte out of range",
      () =>
        `service:\n  baseUrl: ${sandbox.url}\nrpc:\n  url: ${sandbox.chain?.url}\nwallets:\n  - pubkey: ${WALLET}\n    keyFile: ${join(dir, "bad-key.json")}\n`,
      2,
      /wallets\[0\]\.keyFile: \S+bad-key\.json holds an item that is not an integer from 0 to 255, at index 63; expected a JSON array of 64 integers/,
    ],
    [
      "the same wallet listed twice",
      () => `service:\n  baseUrl: ${sandbox.url}\nwallets:\n  - pubkey: ${WALLET}\n  - pubkey: ${WALLET}\n`,
      2,
      new RegExp(`wallets\\[1\\]\\.pubkey: wallet ${WALLET} is listed twice \\(first at wallets\\[0\\]\\)`),
    ],
  ];

  it.each(cases)(
    "%s",
    async (label, yaml, code, message) => {
      const file = join(dir, `${label.replaceAll(" ", "-")}.yaml`);
      await writeFile(file, yaml());
      const run = spawnKeeper(file, { KEEPER_LOG_LEVEL: "warn" });
      const exit = await run.exited;
      expect(exit).toBe(code);
      expect(run.output()).toMatch(message);
      expect(run.output()).not.toMatch(/^\s+at /m);
      for (const secret of [SERVICE_KEY, RPC_KEY]) expect(run.output()).not.toContain(secret);
    },
    30_000,
  );
});

describe("keeper start names where the key the service refused came from, never the key", () => {
  const WRONG_KEY = "WrongServiceKey0123456789abcdef";
  let sandbox: RunningSandbox;
  let dir: string;
  let keyFile: string;
  beforeAll(async () => {
    // A sandbox that takes another key than its published default, so that one is refused too.
    sandbox = await startCheckedSandbox({ port: 0, chain: false, apiKey: "TheSandboxOwnKey0123456789" });
    dir = await mkdtemp(join(tmpdir(), "keeper-start-key-"));
    keyFile = join(dir, "api-key");
    await writeFile(keyFile, `${WRONG_KEY}\n`, { mode: 0o600 });
  });
  afterAll(() => sandbox?.close());

  /** Each case: what it sets (a line under `service:`, variables), and the line it must print. */
  const cases: Array<[string, (file: string) => { service: string; env: NodeJS.ProcessEnv }, () => string]> =
    [
      [
        "KEEPER_API_KEY (over a file)",
        (file) => ({ service: `  apiKeyFile: ${file}\n`, env: { KEEPER_API_KEY: WRONG_KEY } }),
        () => `KEEPER_API_KEY: the service at ${sandbox.url} refused the key (HTTP 401)`,
      ],
      [
        "service.apiKeyFile",
        (file) => ({ service: `  apiKeyFile: ${file}\n`, env: {} }),
        () => `service.apiKeyFile: the service at ${sandbox.url} refused the key in ${keyFile} (HTTP 401)`,
      ],
      [
        "KEEPER_API_KEY_FILE",
        (file) => ({ service: "", env: { KEEPER_API_KEY_FILE: file } }),
        () => `KEEPER_API_KEY_FILE: the service at ${sandbox.url} refused the key in ${keyFile} (HTTP 401)`,
      ],
      [
        "no key: the sandbox's default",
        () => ({ service: "", env: {} }),
        () =>
          `KEEPER_API_KEY, service.apiKeyFile: the service at ${sandbox.url} refused the sandbox's default key (neither is set) (HTTP 401)`,
      ],
    ];

  it.each(cases)(
    "%s",
    async (label, setup, message) => {
      const { service, env } = setup(keyFile);
      const file = join(dir, `${label.replace(/\W+/g, "-")}.yaml`);
      await writeFile(
        file,
        `service:\n  baseUrl: ${sandbox.url}\n${service}wallets:\n  - pubkey: ${WALLET}\n`,
      );
      const run = spawnKeeper(file, {
        KEEPER_LOG_LEVEL: "warn",
        KEEPER_API_KEY: "",
        KEEPER_API_KEY_FILE: "",
        ...env,
      });
      expect(await run.exited).toBe(2);
      expect(run.output()).toContain(`keeper: invalid configuration:\n  ${message()}\n`);
      expect(run.output()).not.toContain(WRONG_KEY);
      expect(run.output()).not.toMatch(/^\s+at /m);
    },
    30_000,
  );

  it("a read command the service refuses names the key's source the same way, exit 2", async () => {
    const file = join(dir, "read-command.yaml");
    await writeFile(file, `service:\n  baseUrl: ${sandbox.url}\nwallets:\n  - pubkey: ${WALLET}\n`);
    const run = await runCli(["--config", file, "events"], {
      KEEPER_API_KEY: WRONG_KEY,
      KEEPER_API_KEY_FILE: "",
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      `keeper: invalid configuration:\n  KEEPER_API_KEY: the service at ${sandbox.url} refused the key (HTTP 401)\n`,
    );
    expect(run.stdout + run.stderr).not.toContain(WRONG_KEY);
  }, 30_000);
});

describe("keeper start warns when node lacks Keeper's flags", () => {
  const WARNING = "node was started without Keeper's flags";
  let file: string;
  beforeAll(async () => {
    const dir = await mkdtemp(join(tmpdir(), "keeper-start-flags-"));
    file = join(dir, "keeper.yaml");
    // The warning comes before any connection; an unreachable Redis then ends the run at once.
    await writeFile(file, `redis:\n  url: redis://${NOWHERE}\nwallets:\n  - pubkey: ${WALLET}\n`);
  });

  it("names every flag missing on plain node (node bin/keeper.js start)", async () => {
    const run = spawnCli(
      ["start", "--config", file],
      { KEEPER_LOG_LEVEL: "warn", NODE_OPTIONS: "" },
      "plain-node-keeper",
      [],
    );
    expect(await run.exited).toBe(1);
    const line = run
      .output()
      .split("\n")
      .find((l) => l.includes(WARNING));
    expect(line && (JSON.parse(line) as { missing: string[] }).missing).toEqual([...KEEPER_NODE_FLAGS]);
  }, 30_000);

  it("stays quiet when run as npx keeper runs it", async () => {
    const run = spawnKeeper(file, { KEEPER_LOG_LEVEL: "warn" });
    expect(await run.exited).toBe(1);
    expect(run.output()).toMatch(/cannot reach Redis/);
    expect(run.output()).not.toContain(WARNING);
  }, 30_000);
});
