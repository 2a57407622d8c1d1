import { spawn } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Connection, PublicKey } from "@solana/web3.js";
import pino from "pino";
import { collectAll, createApiClient, iteratePositions } from "../../src/api/index.js";
import { ALL_ROLES, type Role, type RunningKeeper, startKeeper } from "../../src/app/start-keeper.js";
import { KEEPER_NODE_FLAGS } from "../../src/cli/node-flags.js";
import { type KeeperConfig, loadConfig } from "../../src/config/load-config.js";
import type { Position } from "../../src/core/schemas/prediction.js";
import { createCaptureStream } from "../../src/ops/capture-stream.js";
import { SANDBOX_POOL_PROGRAM_ID } from "../../src/sandbox/chain/pool-program.js";
import type { RunningSandbox } from "../../src/sandbox/index.js";
import { DrivenClock } from "../../src/sandbox/world/clock.js";
import { Wallets } from "../../src/signer/keys.js";
import { startCheckedSandbox } from "./checked-sandbox.js";
import { recordTestOutput, recordTestSecret, TEST_API_KEY } from "./test-secrets.js";

/** A sandbox (service and chain) with a driven clock, and a config pointing a keeper at it. */
/**
 * Slots of 100 ms: a blockhash lives 15 s, so a busy machine's slowness between build and send never
 * expires one by itself. Tests about expiry bring it on with `fastForward`.
 */
export async function startTestSandbox(options: { walletCount?: number; slotMs?: number } = {}) {
  const clock = new DrivenClock();
  const sandbox = await startCheckedSandbox({
    port: 0,
    apiKey: TEST_API_KEY,
    clock,
    rateLimit: false,
    chain: { port: 0, slotMs: options.slotMs ?? 100 },
    ...(options.walletCount ? { walletCount: options.walletCount } : {}),
  });
  return { sandbox, clock };
}

export async function writeKeeperConfig(
  sandbox: RunningSandbox,
  prefix: string,
  options: {
    extra?: string;
    walletYaml?: string;
    /** More lines under `ops:` (two-space indented), e.g. `  adminTokenFile: /path`. */
    ops?: string;
    /** The sweeps' cron schedules (default: positions every second, orders every 30 s). */
    pollPositions?: string;
    pollOrders?: string;
  } = {},
): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "keeper-e2e-"));
  const file = join(dir, "keeper.yaml");
  const keyFile = join(dir, "api-key");
  await writeFile(keyFile, `${sandbox.apiKey}\n`, { mode: 0o600 });
  const wallets =
    options.walletYaml ??
    `wallets:\n${sandbox.wallets.map((pubkey) => `  - pubkey: ${pubkey}`).join("\n")}\n`;
  await writeFile(
    file,
    `service:
  baseUrl: ${sandbox.url}
  apiKeyFile: ${keyFile}
  requestsPerSecond: 200
rpc:
  url: ${sandbox.chain?.url}
redis:
  prefix: ${prefix}
${wallets}
schedules:
  pollPositions: "${options.pollPositions ?? "* * * * * *"}"
  pollOrders: "${options.pollOrders ?? "*/30 * * * * *"}"
signer:
  rebroadcastIntervalMs: 200
  payoutMints: [${sandbox.usdcMint}]
  # The sandbox pool's program pays a swap's output in the swap's own transaction.
  allowedPrograms: [${SANDBOX_POOL_PROGRAM_ID.toBase58()}]
  # Forecast swaps are co-signed by the sandbox's vault at its execute endpoint.
  serviceSigners: [${sandbox.chain?.assets.vault.publicKey.toBase58()}]
queues:
  backoffMs: 200
  # A killed keeper's jobs are picked up again within seconds, not the default 30.
  lockDurationMs: 3000
  stalledIntervalMs: 1000
ops:
  port: 0
  logLevel: debug
${options.ops ? `${options.ops}\n` : ""}${options.extra ?? ""}`,
  );
  return file;
}

/** Sandbox wallet `index`'s secret key, registered for the suite's secret scan. */
function sandboxSecretKey(sandbox: RunningSandbox, index: number): Uint8Array {
  const keypair = sandbox.world.walletKeypair(index);
  recordTestSecret(keypair.secretKey, `sandbox wallet ${index} ${keypair.publicKey.toBase58()}`);
  return keypair.secretKey;
}

export function sandboxWallets(sandbox: RunningSandbox): Wallets {
  return Wallets.fromSecretKeys(sandbox.wallets.map((_, i) => sandboxSecretKey(sandbox, i)));
}

/** Moves the sandbox's chain on quickly (ten slots every 20 ms) until the returned stop is called. */
export function fastForward(sandbox: RunningSandbox): () => void {
  const chain = sandbox.chain?.chain;
  if (!chain) throw new Error("the sandbox runs no chain");
  const timer = setInterval(() => chain.advanceSlots(10), 20);
  return () => clearInterval(timer);
}

export async function startTestKeeper(
  config: KeeperConfig,
  sandbox: RunningSandbox,
  roles: readonly Role[] = ALL_ROLES,
): Promise<{ keeper: RunningKeeper; logs: ReturnType<typeof createCaptureStream> }> {
  const logs = createCaptureStream();
  const teeToSuiteLogs = { write: (line: string) => recordTestOutput("keeper", line) };
  const keeper = await startKeeper({
    config,
    roles: new Set(roles),
    logger: pino(
      { level: "debug" },
      pino.multistream([
        { stream: logs, level: "debug" },
        { stream: teeToSuiteLogs, level: "debug" },
      ]),
    ),
    wallets: sandboxWallets(sandbox),
  });
  return { keeper, logs };
}

export async function loadTestConfig(file: string): Promise<KeeperConfig> {
  return loadConfig({ file, env: {} });
}

export async function positionsOf(sandbox: RunningSandbox, owner: string): Promise<Position[]> {
  const client = createApiClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey });
  return collectAll(iteratePositions(client, { ownerPubkey: owner }));
}

/** Raw USDC units the owner holds on the local chain (0 without a token account). */
export async function usdcBalance(sandbox: RunningSandbox, owner: string, mint: string): Promise<bigint> {
  const connection = new Connection(sandbox.chain?.url ?? "", "confirmed");
  const accounts = await connection.getTokenAccountsByOwner(new PublicKey(owner), {
    mint: new PublicKey(mint),
  });
  let total = 0n;
  for (const { pubkey } of accounts.value) {
    const balance = await connection.getTokenAccountBalance(pubkey);
    total += BigInt(balance.value.amount);
  }
  return total;
}

/** Polls `check` until it returns a value, or fails after `timeoutMs` with `what`. */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ""}`);
}

/** Writes each sandbox wallet's key as a Solana CLI keypair file (mode 0600) and returns wallet YAML. */
export async function writeWalletKeyFiles(sandbox: RunningSandbox): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "keeper-keys-"));
  const lines: string[] = [];
  for (const [i, pubkey] of sandbox.wallets.entries()) {
    const file = join(dir, `wallet-${i}.json`);
    await writeFile(file, JSON.stringify([...sandboxSecretKey(sandbox, i)]), { mode: 0o600 });
    lines.push(`  - pubkey: ${pubkey}\n    keyFile: ${file}`);
  }
  return `wallets:\n${lines.join("\n")}\n`;
}

/** Runs `keeper start --config FILE [args]` as a separate process, the way an operator would. */
export function spawnKeeper(configFile: string, env: NodeJS.ProcessEnv = {}, args: readonly string[] = []) {
  return spawnCli(["start", "--config", configFile, ...args], env, "spawned-keeper");
}

/**
 * Runs `keeper ARGS` (bin/keeper.js, through tsx) as a separate process; `env` goes over this one's.
 * With the flags of bin/keeper.js's first line, as `npx keeper` runs it, unless `nodeFlags` says others.
 */
export function spawnCli(
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
  logName = "cli",
  nodeFlags: readonly string[] = KEEPER_NODE_FLAGS,
) {
  const child = spawn(process.execPath, [...nodeFlags, join(process.cwd(), "bin/keeper.js"), ...args], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d: Buffer) => {
    output += d.toString();
    stdout += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    output += d.toString();
    stderr += d.toString();
  });
  const exited = new Promise<number | null>((resolve) =>
    child.on("exit", (code) => {
      recordTestOutput(logName, output);
      resolve(code);
    }),
  );
  return {
    child,
    output: () => output,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    async kill(signal: NodeJS.Signals = "SIGKILL") {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Runs `keeper ARGS` to its end. */
export async function runCli(
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const run = spawnCli(args, env);
  const code = await run.exited;
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}
