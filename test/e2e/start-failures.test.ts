import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningSandbox } from "../../src/sandbox/index.js";
import { startCheckedSandbox } from "../helpers/checked-sandbox.js";
import { spawnKeeper } from "../helpers/keeper-harness.js";

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
