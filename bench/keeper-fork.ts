import { type ChildProcess, fork } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { RunningSandbox } from "../src/sandbox/index.js";
import type { BenchOptions } from "./options.js";
import type { KeeperStart } from "./protocol.js";

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
const REPO_DIR = dirname(BENCH_DIR);

/**
 * Forks a bench script (bench/NAME): the built one on plain node, as the image runs the keeper, or
 * through tsx; it speaks IPC. Without a build, `dist` fails with how to make one, unless
 * `fallBackToSources` (then the sources run through tsx).
 */
export function forkBenchScript(
  name: string,
  runtime: BenchOptions["keeperRuntime"],
  nodeFlags: readonly string[],
  { fallBackToSources = false }: { fallBackToSources?: boolean } = {},
): ChildProcess {
  const built = join(REPO_DIR, "dist", "bench", `${name}.js`);
  const useBuilt = runtime === "dist" && (existsSync(built) || !fallBackToSources);
  if (useBuilt && !existsSync(built))
    throw new Error(
      `${built} is missing: run npm run build (npm run bench does), or pass --keeper-runtime tsx`,
    );
  return fork(useBuilt ? built : join(BENCH_DIR, `${name}.ts`), [], {
    cwd: REPO_DIR,
    execArgv: useBuilt ? [...nodeFlags] : ["--import", "tsx", ...nodeFlags],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
}

/** Forks bench/keeper-process (see forkBenchScript), with the heap cap when one is given. */
export function forkKeeper(
  runtime: BenchOptions["keeperRuntime"],
  heapMb: number | undefined,
  nodeFlags: readonly string[],
): ChildProcess {
  const flags = [...nodeFlags, ...(heapMb === undefined ? [] : [`--max-old-space-size=${heapMb}`])];
  return forkBenchScript("keeper-process", runtime, flags);
}

/** Where the keeper finds the sandbox: its service, key, chain and USDC mint. */
export function sandboxEndpoints(
  sandbox: RunningSandbox,
): Pick<KeeperStart, "serviceUrl" | "apiKey" | "rpcUrl" | "usdcMint"> {
  return {
    serviceUrl: sandbox.url,
    apiKey: sandbox.apiKey,
    rpcUrl: sandbox.chain?.url ?? "",
    usdcMint: sandbox.usdcMint,
  };
}
