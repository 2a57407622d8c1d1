/**
 * The keeper under test, in a process of its own so that its memory is measured alone (the sandbox
 * service and the local chain run in the benchmark's process). Forked by bench/run.ts; speaks IPC.
 *
 * It runs the real keeper (startKeeper, every role), nothing else: the requests it sends are counted
 * where the sandbox answers them (served-requests.ts), so its CPU is the keeper's own.
 */
import { type ChildProcess, fork } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeHeapSnapshot } from "node:v8";
import pino from "pino";
import { ALL_ROLES, type Role, type RunningKeeper, startKeeper } from "../src/app/start-keeper.js";
import { loadConfig } from "../src/config/load-config.js";
import { deriveKeypair } from "../src/sandbox/world/rng.js";
import { Wallets } from "../src/signer/keys.js";
import { CpuProfiler } from "./cpu-profile.js";
import type { FromKeeper, KeeperStart, ToKeeper } from "./protocol.js";

const PROGRESS_MS = 500;
/** Cron that never fires within a run: the orders poll and housekeeping are not what is measured. */
const NEVER = "0 0 0 1 1 *";

let keeper: RunningKeeper | undefined;
let peakRss = 0;
/** process.memoryUsage() when the sampled RSS peaked: what the peak was made of. */
let atPeak: NodeJS.MemoryUsage | undefined;
let progressTimer: NodeJS.Timeout | undefined;

function send(message: FromKeeper): Promise<void> {
  return new Promise((resolve) => {
    if (!process.send) return resolve();
    process.send(message, undefined, {}, () => resolve());
  });
}

/** maxRSS (KB) and the sampled peak before a heap snapshot, which takes memory of its own. */
let beforeSnapshot: { maxRssKb: number; peakRss: number } | undefined;

function sampleRss(): number {
  const usage = process.memoryUsage();
  // With a signer process, both processes' RSS: what the keeper holds in all.
  const rss = usage.rss + signerProcess.rssBytes;
  // After a heap snapshot the RSS is the snapshot's too: the peak is the one read before it.
  if (!beforeSnapshot && rss > peakRss) {
    peakRss = rss;
    atPeak = usage;
  }
  return rss;
}

async function start(message: KeeperStart): Promise<void> {
  const started = performance.now();
  const secretKeys: Uint8Array[] = [];
  for (let i = 0; i < message.walletCount; i++)
    secretKeys.push(deriveKeypair(`wallet:${i}`, message.seed).secretKey);
  const wallets = Wallets.fromSecretKeys(secretKeys);

  const dir = await mkdtemp(join(tmpdir(), "keeper-bench-"));
  const apiKeyFile = join(dir, "api-key");
  await writeFile(apiKeyFile, `${message.apiKey}\n`, { mode: 0o600 });
  const configFile = join(dir, "keeper.yaml");
  await writeFile(
    configFile,
    [
      "mode: live",
      "service:",
      `  baseUrl: ${message.serviceUrl}`,
      `  apiKeyFile: ${apiKeyFile}`,
      `  requestsPerSecond: ${message.requestsPerSecond}`,
      `  rateLimitWindowSeconds: ${message.windowSeconds}`,
      "rpc:",
      `  url: ${message.rpcUrl}`,
      "redis:",
      `  url: ${message.redisUrl}`,
      `  prefix: ${message.prefix}`,
      "schedules:",
      `  pollPositions: "${message.pollCron}"`,
      `  pollOrders: "${message.ordersCron ?? NEVER}"`,
      ...(message.idleSweepMultiple === undefined
        ? []
        : [`  idleSweepMultiple: ${message.idleSweepMultiple}`]),
      `  housekeeping: "${NEVER}"`,
      "watcher:",
      `  enabled: ${message.watcher}`,
      ...(message.hotIntervalMs === undefined ? [] : [`  hotIntervalMs: ${message.hotIntervalMs}`]),
      ...(message.sweepSharePct === undefined ? [] : [`  sweepSharePct: ${message.sweepSharePct}`]),
      "strategies:",
      "  - name: auto-claim",
      "  - name: exit-rules",
      `    takeProfitPriceUsd: "${message.takeProfitPriceUsd}"`,
      ...(message.concurrency === undefined && message.pollConcurrency === undefined ? [] : ["queues:"]),
      ...(message.concurrency === undefined ? [] : [`  actionConcurrency: ${message.concurrency}`]),
      ...(message.pollConcurrency === undefined ? [] : [`  pollConcurrency: ${message.pollConcurrency}`]),
      "signer:",
      "  rebroadcastIntervalMs: 1000",
      ...(message.concurrency === undefined ? [] : [`  concurrency: ${message.concurrency}`]),
      `  payoutMints: [${message.usdcMint}]`,
      "ops:",
      "  port: 0",
      `  logLevel: ${message.logLevel}`,
      "",
    ].join("\n"),
  );
  const config = await loadConfig({ file: configFile, env: {} });
  const logger = pino(
    { level: message.logLevel },
    pino.destination({ dest: message.logFile, sync: false, mkdir: true }),
  );
  const roles: readonly Role[] = message.signerProcess
    ? ["scheduler", "worker"]
    : (message.roles ?? ALL_ROLES);
  if (message.signerProcess) await startSignerProcess(message);
  keeper = await startKeeper({ config, roles: new Set(roles), logger, wallets, opsServer: false });
  progressTimer = setInterval(() => {
    const cpu = process.cpuUsage();
    const mainThread = process.threadCpuUsage();
    void send({
      type: "progress",
      rssBytes: sampleRss(),
      cpuMicros: cpu.user + cpu.system + signerProcess.cpuMicros,
      mainThreadCpuMicros: mainThread.user + mainThread.system + signerProcess.mainThreadCpuMicros,
      ...(signerProcess.child ? { signerCpuMicros: signerProcess.cpuMicros } : {}),
    });
  }, PROGRESS_MS);
  await send({ type: "ready", startupMs: Math.round(performance.now() - started) });
}

/** The forked signer process, and what it last reported (added to this process's reports). */
const signerProcess: {
  child?: ChildProcess;
  cpuMicros: number;
  mainThreadCpuMicros: number;
  rssBytes: number;
  maxRssKb: number;
} = {
  cpuMicros: 0,
  mainThreadCpuMicros: 0,
  rssBytes: 0,
  maxRssKb: 0,
};

/** Forks this module again to run the signer role alone; resolves once it is ready. */
function startSignerProcess(message: KeeperStart): Promise<void> {
  const child = fork(process.argv[1] ?? "", [], { execArgv: process.execArgv, stdio: "inherit" });
  signerProcess.child = child;
  return new Promise((resolve, reject) => {
    child.on("message", (reply: FromKeeper) => {
      if (reply.type === "ready") resolve();
      else if (reply.type === "progress") {
        signerProcess.cpuMicros = reply.cpuMicros;
        signerProcess.mainThreadCpuMicros = reply.mainThreadCpuMicros ?? 0;
        signerProcess.rssBytes = reply.rssBytes;
      } else if (reply.type === "stopped") signerProcess.maxRssKb = reply.maxRssKb;
      else if (reply.type === "failed") reject(new Error(`signer process: ${reply.error}`));
    });
    child.once("exit", (code) => reject(new Error(`signer process exited (code ${code})`)));
    child.send({
      ...message,
      signerProcess: false,
      roles: ["signer"],
      logFile: `${message.logFile}.signer`,
    } satisfies ToKeeper);
  });
}

async function stopSignerProcess(): Promise<void> {
  const child = signerProcess.child;
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.send({ type: "stop" } satisfies ToKeeper);
  await exited;
}

function heapSnapshot(file: string): void {
  sampleRss();
  beforeSnapshot = { maxRssKb: process.resourceUsage().maxRSS, peakRss };
  writeHeapSnapshot(file);
}

async function stop(): Promise<void> {
  if (progressTimer) clearInterval(progressTimer);
  if (!beforeSnapshot) sampleRss();
  await keeper?.stop();
  await stopSignerProcess();
  await send({
    type: "stopped",
    // With a signer process, the two peaks added: at most what both held at once.
    maxRssKb: (beforeSnapshot?.maxRssKb ?? process.resourceUsage().maxRSS) + signerProcess.maxRssKb,
    peakSampledRssBytes: beforeSnapshot?.peakRss ?? peakRss,
    ...(atPeak
      ? {
          atPeak: {
            heapUsedBytes: atPeak.heapUsed,
            heapTotalBytes: atPeak.heapTotal,
            externalBytes: atPeak.external,
            arrayBuffersBytes: atPeak.arrayBuffers,
          },
        }
      : {}),
  });
  process.disconnect?.();
}

const profiler = new CpuProfiler();

async function stopProfile(file: string | undefined): Promise<void> {
  const summary = await profiler.stop(file ?? "keeper.cpuprofile");
  await send({ type: "cpu-profile", summary });
}

process.on("message", (message: ToKeeper) => {
  const run =
    message.type === "start"
      ? start(message)
      : message.type === "heap-snapshot"
        ? Promise.resolve(heapSnapshot(message.file))
        : message.type === "cpu-profile-start"
          ? profiler.start()
          : message.type === "cpu-profile-stop"
            ? stopProfile(message.file)
            : stop();
  run.catch(async (error: unknown) => {
    await send({ type: "failed", error: error instanceof Error ? error.message : String(error) });
    process.exit(1);
  });
});
// Bounded: if the benchmark that forked us goes away, so do we.
process.on("disconnect", () => {
  setTimeout(() => process.exit(0), 5_000).unref();
});
