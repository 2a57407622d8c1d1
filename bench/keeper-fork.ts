import { type ChildProcess, fork } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { RunningSandbox } from "../src/sandbox/index.js";
import type { BenchOptions } from "./options.js";
import type { KeeperStart } from "./protocol.js";

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
const REPO_DIR = dirname(BENCH_DIR);

/** Forks bench/keeper-process (the built one, as the image runs it, or through tsx); it speaks IPC. */
export function forkKeeper(
  runtime: BenchOptions["keeperRuntime"],
  heapMb: number | undefined,
  nodeFlags: readonly string[],
): ChildProcess {
  const heap = [...nodeFlags, ...(heapMb === undefined ? [] : [`--max-old-space-size=${heapMb}`])];
  const built = join(REPO_DIR, "dist", "bench", "keeper-process.js");
  if (runtime === "dist" && !existsSync(built))
    throw new Error(
      `${built} is missing: run npm run build (npm run bench does), or pass --keeper-runtime tsx`,
    );
  return fork(runtime === "dist" ? built : join(BENCH_DIR, "keeper-process.ts"), [], {
    cwd: REPO_DIR,
    execArgv: runtime === "dist" ? heap : ["--import", "tsx", ...heap],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
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
