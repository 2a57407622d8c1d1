/**
 * Sweep benchmark: the keeper against a naive claim loop, on the same sandbox world, under the same
 * API rate limit. `npm run bench -- --help` for the flags; bench/README.md for what the figures mean.
 */
import { randomBytes } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { intentKeys } from "../src/core/intent.js";
import { redisKeys } from "../src/keeper/names.js";
import { type RunningSandbox, startSandbox } from "../src/sandbox/index.js";
import {
  type ClaimCpu,
  type CpuReading,
  claimCpu,
  formatClaimCpu,
  formatSweepCpu,
  formatThreadSplit,
} from "./cpu-per-claim.js";
import { CpuProfiler } from "./cpu-profile.js";
import { formatIoFloor, type IoPartCosts, measureIoFloor } from "./io-floor.js";
import { forkKeeper, sandboxEndpoints } from "./keeper-fork.js";
import { NaiveBot } from "./naive-bot.js";
import { type BenchOptions, cronEvery, msUntilNextTick, parseBenchOptions } from "./options.js";
import type { PhaseResult } from "./phase-result.js";
import type { FromKeeper, KeeperStart, RequestEvent, ToKeeper } from "./protocol.js";
import { deletePrefix } from "./redis-prefix.js";
import { printReport } from "./report.js";
import { ServedRequests } from "./served-requests.js";
import { claimStages, claimTimings, pollTimesOf, SweepProgress, sweepsOf } from "./stats.js";
import {
  type ClaimSample,
  closeMarketsToResolve,
  movePriceSample,
  resolveSample,
  settleBacklog,
  TAKE_PROFIT_USD,
} from "./world-sample.js";

const PROGRESS_EVERY_MS = 3_000;
const LEDGER_POLL_MS = 100;

/** What one contender did in its phase. */

const log = (line: string) => console.log(line);
const since = (t: number) => `${((Date.now() - t) / 1000).toFixed(1).padStart(6)}s`;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls `done` every 250 ms until it is true or `timeoutMs` passes; prints `progress()` now and then. */
async function waitUntil(
  what: string,
  done: () => boolean,
  timeoutMs: number,
  progress: () => string,
  failed: () => string | undefined = () => undefined,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  let lastPrint = Date.now();
  while (!done()) {
    const failure = failed();
    if (failure) throw new Error(`${what}: ${failure}`);
    if (Date.now() >= deadline) {
      log(`  ! gave up waiting for ${what} after ${Math.round(timeoutMs / 1000)} s`);
      return false;
    }
    if (Date.now() - lastPrint >= PROGRESS_EVERY_MS) {
      log(progress());
      lastPrint = Date.now();
    }
    await sleep(250);
  }
  return true;
}

/** Counts what the sandbox's rate limiter decided, per phase: the service's own view of 429s. */
function countServiceDecisions(sandbox: RunningSandbox) {
  const limiter = sandbox.server.rateLimiter;
  const take = limiter.take.bind(limiter);
  const counts = { allowed: 0, refused: 0 };
  limiter.take = (key: string) => {
    const decision = take(key);
    if (decision) {
      if (decision.allowed) counts.allowed += 1;
      else counts.refused += 1;
    }
    return decision;
  };
  return {
    counts,
    reset() {
      limiter.reset();
      counts.allowed = 0;
      counts.refused = 0;
    },
  };
}

/** Reads the sample's claim rows from the keeper's ledger until each is confirmed or has failed. */
class LedgerWatcher {
  readonly confirmedAt = new Map<string, number>();
  readonly failed = new Map<string, string>();
  #timer: NodeJS.Timeout | undefined;
  #busy = false;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly sample: ClaimSample,
    private readonly keyOf: (pubkey: string) => string = intentKeys.claim,
  ) {}

  start(): void {
    this.#timer = setInterval(() => void this.#poll(), LEDGER_POLL_MS);
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
  }

  get settled(): number {
    return this.confirmedAt.size + this.failed.size;
  }

  async #poll(): Promise<void> {
    if (this.#busy) return;
    this.#busy = true;
    try {
      const keys = redisKeys(this.prefix, "live");
      const open = this.sample.positions.filter(
        (p) => !this.confirmedAt.has(p.pubkey) && !this.failed.has(p.pubkey),
      );
      if (open.length === 0) return;
      const pipeline = this.redis.pipeline();
      for (const p of open) pipeline.hget(keys.ledgerIntent(this.keyOf(p.pubkey)), "status");
      const results = (await pipeline.exec()) ?? [];
      const now = Date.now();
      results.forEach(([, status], i) => {
        const position = open[i];
        if (!position) return;
        if (status === "confirmed") this.confirmedAt.set(position.pubkey, now);
        else if (status === "failed" || status === "refused") this.failed.set(position.pubkey, status);
      });
    } finally {
      this.#busy = false;
    }
  }
}

/** What the warm-up burst needs of the keeper's phase. */
interface WarmUpContext {
  sandbox: RunningSandbox;
  redis: Redis;
  prefix: string;
  usedMarkets: Set<string>;
  cpuReadings: readonly CpuReading[];
  mainThreadReadings: readonly CpuReading[];
  phaseStart: number;
  status: () => string;
  broken: () => string | undefined;
}

/**
 * A claim burst before the measured one (--warm-up-claims): markets closed, resolved and every claim
 * settled, its CPU a claim printed. V8 compiles the claim's code during the first burst a process
 * sees; the measured burst then shows what a claim costs on compiled code.
 */
async function warmUpBurst(options: BenchOptions, ctx: WarmUpContext): Promise<boolean> {
  const { sandbox, usedMarkets } = ctx;
  const closed = closeMarketsToResolve(
    sandbox.world,
    options.warmUpClaims,
    usedMarkets,
    Math.floor(Date.now() / 1000),
  );
  await sleep(options.closeBeforeResolveSeconds * 1000);
  const sample = resolveSample(sandbox.world, options.warmUpClaims, usedMarkets, 0, closed);
  log(
    `${since(ctx.phaseStart)}  warm-up: resolved ${sample.marketIds.length} markets, ${sample.positions.length} claims`,
  );
  const watcher = new LedgerWatcher(ctx.redis, ctx.prefix, sample);
  watcher.start();
  const settled = await waitUntil(
    "the warm-up claims settled",
    () => watcher.settled >= sample.positions.length,
    sample.positions.length * 1_000 + 60_000,
    ctx.status,
    ctx.broken,
  );
  watcher.stop();
  const confirmed = [...watcher.confirmedAt.values()];
  // The last CPU reading comes up to half a second after the last confirmation.
  await sleep(1_000);
  const cpu =
    confirmed.length > 0
      ? claimCpu(ctx.cpuReadings, {
          fromMs: sample.resolvedAtMs,
          toMs: Math.max(...confirmed),
          claims: confirmed.length,
        })
      : undefined;
  log(`${since(ctx.phaseStart)}  warm-up: ${confirmed.length} confirmed; keeper CPU ${formatClaimCpu(cpu)}`);
  const split = cpu && threadSplit(cpu, ctx.mainThreadReadings, sample.resolvedAtMs);
  if (split) log(`  of which ${split}`);
  return settled;
}

/** The burst's CPU split between main threads and V8's helpers (formatThreadSplit), if readings cover it. */
function threadSplit(cpu: ClaimCpu, mainThreadReadings: readonly CpuReading[], fromMs: number) {
  const mainThread = claimCpu(mainThreadReadings, { fromMs, toMs: fromMs + cpu.burstMs, claims: cpu.claims });
  return formatThreadSplit(cpu, mainThread);
}

/** Room the claim burst needs between two sweeps: the markets' close, the burst, and margin. */
const BURST_ROOM_MS = 20_000;

/**
 * With --change-at swept the burst should meet no sweep: a sweep's polls beside it would be counted
 * in its CPU a claim, and the figure would depend on where the minute falls. When the next tick is
 * too close, or a sweep is under way, the burst waits for that sweep to end. A fleet whose sweeps
 * run back to back has no gap: its burst shares the machine with the sweep, as in production.
 */
async function waitForQuietGap(
  options: BenchOptions,
  phaseStart: number,
  progress: SweepProgress,
  status: () => string,
  broken: () => string | undefined,
): Promise<boolean> {
  const intervalMs = options.intervalSeconds * 1000;
  const untilTick = msUntilNextTick(options.intervalSeconds, Date.now());
  const room = options.closeBeforeResolveSeconds * 1000 + BURST_ROOM_MS;
  const W = progress.walletCount;
  let next = 1;
  while (progress.polled(next) >= W) next += 1;
  // A sweep that began just now (its tick fell as the last one ended) is under way: the few
  // targeted polls a burst makes (a twentieth of the wallets at most) are not one.
  const underWay = progress.polled(next) > W / 20;
  if (progress.sweepMs(1) > intervalMs - room || (!underWay && untilTick >= room)) return true;
  log(
    underWay
      ? `${since(phaseStart)}  sweep ${next} is under way: resolving after it`
      : `${since(phaseStart)}  the next sweep starts in ${(untilTick / 1000).toFixed(1)} s: resolving after it`,
  );
  return waitUntil(
    `sweep ${next}`,
    () => progress.polled(next) >= W,
    2 * intervalMs + 60_000,
    status,
    broken,
  );
}

async function runKeeperPhase(
  options: BenchOptions,
  sandbox: RunningSandbox,
  served: ServedRequests,
  redis: Redis,
  prefix: string,
  service: ReturnType<typeof countServiceDecisions>,
  usedMarkets: Set<string>,
): Promise<PhaseResult> {
  const W = options.wallets;
  const phaseStart = Date.now();
  const boundMs = (W / options.rps) * 1000;
  const intervalMs = options.intervalSeconds * 1000;
  const events: RequestEvent[] = [];
  const progress = new SweepProgress(W);
  let ready = false;
  let stopped: Extract<FromKeeper, { type: "stopped" }> | undefined;
  let failure: string | undefined;
  let rss = 0;
  const cpuReadings: CpuReading[] = [];
  const signerReadings: CpuReading[] = [];
  const mainThreadReadings: CpuReading[] = [];
  const logFile = join(tmpdir(), `${prefix}-keeper.log`);
  served.start();
  const child = forkKeeper(options.keeperRuntime, options.keeperHeapMb, options.keeperNodeFlags);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.once("exit", (code) => {
    if (!stopped) failure ??= `keeper process exited (code ${code}) before it was stopped`;
  });
  child.on("message", (message: FromKeeper) => {
    if (message.type === "ready") {
      ready = true;
      log(`${since(phaseStart)}  keeper started in ${message.startupMs} ms (log: ${logFile})`);
    } else if (message.type === "progress") {
      const fresh = served.take();
      events.push(...fresh);
      progress.add(fresh);
      rss = message.rssBytes;
      cpuReadings.push([Date.now(), message.cpuMicros]);
      if (message.signerCpuMicros !== undefined) signerReadings.push([Date.now(), message.signerCpuMicros]);
      if (message.mainThreadCpuMicros !== undefined)
        mainThreadReadings.push([Date.now(), message.mainThreadCpuMicros]);
    } else if (message.type === "cpu-profile") {
      log(`${since(phaseStart)}  keeper's CPU profile:\n${message.summary}`);
    } else if (message.type === "stopped") {
      const rest = served.stop();
      events.push(...rest);
      progress.add(rest);
      stopped = message;
    } else failure = message.error;
  });
  const start: KeeperStart = {
    type: "start",
    ...sandboxEndpoints(sandbox),
    redisUrl: options.redisUrl,
    prefix,
    requestsPerSecond: options.keeperRps,
    windowSeconds: options.windowSeconds,
    pollCron: cronEvery(options.intervalSeconds),
    watcher: options.mode === "markets",
    ...(options.hotIntervalMs === undefined ? {} : { hotIntervalMs: options.hotIntervalMs }),
    ...(options.sweepSharePct === undefined ? {} : { sweepSharePct: options.sweepSharePct }),
    ...(options.signerProcess ? { signerProcess: true } : {}),
    takeProfitPriceUsd: TAKE_PROFIT_USD,
    concurrency: options.concurrency,
    pollConcurrency: options.pollConcurrency,
    seed: options.seed,
    walletCount: W,
    logFile,
    logLevel: options.logLevel,
  };
  child.send(start satisfies ToKeeper);

  let watcher: LedgerWatcher | undefined;
  let closes: LedgerWatcher | undefined;
  let closeSample: ClaimSample = { marketIds: [], positions: [], resolvedAtMs: Date.now() };
  let idleRequestsPerMinute: number | undefined;
  let quietWindow: { fromMs: number; toMs: number } | undefined;
  let sample: ClaimSample = { marketIds: [], positions: [], resolvedAtMs: Date.now() };
  let timedOut = false;
  const status = () =>
    `${since(phaseStart)}  keeper  sweep1 ${progress.polled(1)}/${W}  sweep2 ${progress.polled(2)}/${W}  ` +
    `requests ${progress.requests}  429s ${progress.rateLimited}  ` +
    `claims ${watcher?.confirmedAt.size ?? 0}/${sample.positions.length}  ` +
    `closes ${closes?.confirmedAt.size ?? 0}/${closeSample.positions.length}  rss ${Math.round(rss / 2 ** 20)} MB`; // MB of 2^20 bytes, as the report's
  const broken = () => failure;
  const benchProfiler = new CpuProfiler();
  try {
    await waitUntil("the keeper to start", () => ready, 180_000, status, broken);
    log(
      `${since(phaseStart)}  keeper: first tick within ${options.intervalSeconds} s (cron ${start.pollCron})`,
    );
    // Resolve when the first sweep is half done: wallets polled before it wait for the next tick (and
    // the watcher knows only their holdings); or, with --change-at swept, once every wallet was polled.
    const changeAfter = options.changeAt === "swept" ? W : Math.ceil(W / 2);
    timedOut ||= !(await waitUntil(
      options.changeAt === "swept" ? "sweep 1" : "half of sweep 1",
      () => progress.polled(1) >= changeAfter,
      intervalMs + 2 * boundMs + 60_000,
      status,
      broken,
    ));
    if (options.changeAt === "swept") {
      const gap = () => waitForQuietGap(options, phaseStart, progress, status, broken);
      if (options.warmUpClaims > 0) {
        timedOut ||= !(await gap());
        const warm = {
          sandbox,
          redis,
          prefix,
          usedMarkets,
          cpuReadings,
          mainThreadReadings,
          phaseStart,
          status,
          broken,
        };
        timedOut ||= !(await warmUpBurst(options, warm));
        if (options.warmUpGapSeconds > 0) {
          log(
            `${since(phaseStart)}  warm-up: waiting ${options.warmUpGapSeconds} s before the measured burst`,
          );
          await sleep(options.warmUpGapSeconds * 1000);
        }
      }
      timedOut ||= !(await gap());
    }
    if (options.cpuProfile) {
      child.send({ type: "cpu-profile-start" } satisfies ToKeeper);
      await benchProfiler.start();
    }
    let closed: ReadonlySet<string> = new Set();
    if (options.closeBeforeResolveSeconds > 0) {
      // Their close is now by the keeper's clock: the watcher's hot cadence reads them until they resolve.
      closed = closeMarketsToResolve(
        sandbox.world,
        options.sampleClaims,
        usedMarkets,
        Math.floor(Date.now() / 1000),
      );
      log(
        `${since(phaseStart)}  closed ${closed.size} markets; they resolve in ${options.closeBeforeResolveSeconds} s`,
      );
      await sleep(options.closeBeforeResolveSeconds * 1000);
    }
    sample = resolveSample(sandbox.world, options.sampleClaims, usedMarkets, options.staggerMs, closed);
    log(
      `${since(phaseStart)}  resolved ${sample.marketIds.length} markets` +
        (options.staggerMs > 0 ? ` (one every ${options.staggerMs} ms)` : "") +
        `: ${sample.positions.length} winning positions to claim` +
        (options.staggerMs > 0 ? " so far" : ""),
    );
    closeSample = movePriceSample(sandbox.world, options.sampleCloses, usedMarkets);
    log(
      `${since(phaseStart)}  moved ${closeSample.marketIds.length} markets past the take-profit: ${closeSample.positions.length} positions to close`,
    );
    watcher = new LedgerWatcher(redis, prefix, sample);
    watcher.start();
    closes = new LedgerWatcher(redis, prefix, closeSample, intentKeys.close);
    closes.start();
    const claimsDone = () =>
      (sample.isComplete?.() ?? true) &&
      (watcher?.settled ?? 0) >= sample.positions.length &&
      (closes?.settled ?? 0) >= closeSample.positions.length;
    if (options.cpuProfile) {
      timedOut ||= !(await waitUntil(
        "every sample claim confirmed",
        claimsDone,
        2 * intervalMs + 2 * boundMs + 60_000,
        status,
        broken,
      ));
      child.send({
        type: "cpu-profile-stop",
        file: `${options.cpuProfile}-keeper.cpuprofile`,
      } satisfies ToKeeper);
      const summary = await benchProfiler.stop(`${options.cpuProfile}-bench.cpuprofile`);
      log(`${since(phaseStart)}  the benchmark's CPU profile (sandbox service and chain):\n${summary}`);
    }
    timedOut ||= !(await waitUntil(
      "every sample claim confirmed and sweep 2 complete",
      () => claimsDone() && progress.polled(2) >= W,
      2 * intervalMs + 2 * boundMs + 60_000,
      status,
      broken,
    ));
    log(status());
    if (options.heapSnapshot) {
      // After the claims' peak and before the idle time: what the keeper holds with 10,000 wallets.
      child.send({ type: "heap-snapshot", file: options.heapSnapshot } satisfies ToKeeper);
      log(`${since(phaseStart)}  heap snapshot asked for: ${options.heapSnapshot} (idle figures follow it)`);
    }
    // Nothing happens now: what the keeper sends is its idle load (sweeps, and the watcher's reads).
    const quietFrom = Date.now();
    await sleep(options.idleSeconds * 1000);
    const quietTo = Date.now();
    // The child reports its requests every PROGRESS_MS; wait for the last of the window.
    await sleep(2_000);
    const quiet = events.filter((e) => e[0] >= quietFrom && e[0] < quietTo).length;
    idleRequestsPerMinute = (quiet * 60_000) / (quietTo - quietFrom);
    quietWindow = { fromMs: quietFrom, toMs: quietTo };
    log(`${since(phaseStart)}  idle: ${quiet} requests in ${options.idleSeconds} s`);
  } finally {
    watcher?.stop();
    closes?.stop();
    if (child.connected) child.send({ type: "stop" } satisfies ToKeeper);
    const clean = await waitUntil("the keeper to stop", () => stopped !== undefined, 60_000, status);
    if (!clean) child.kill("SIGKILL");
    await Promise.race([exited, sleep(10_000)]);
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
  const timings = claimTimings(
    sample.resolvedAtMs,
    watcher?.confirmedAt ?? new Map(),
    sample.positions,
    events,
  );
  const stages = claimStages(
    sample.positions,
    sample.resolvedAtMs,
    watcher?.confirmedAt ?? new Map(),
    events,
  );
  const confirmedTimes = [...(watcher?.confirmedAt.values() ?? [])];
  const cpu =
    confirmedTimes.length > 0
      ? claimCpu(
          cpuReadings,
          { fromMs: sample.resolvedAtMs, toMs: Math.max(...confirmedTimes), claims: confirmedTimes.length },
          quietWindow,
        )
      : undefined;
  if (cpu) log(`keeper CPU over the claim burst: ${formatClaimCpu(cpu)}`);
  const split = cpu && threadSplit(cpu, mainThreadReadings, sample.resolvedAtMs);
  if (split) log(`  of which ${split}`);
  const signerCpu =
    cpu &&
    claimCpu(signerReadings, {
      fromMs: sample.resolvedAtMs,
      toMs: sample.resolvedAtMs + cpu.burstMs,
      claims: cpu.claims,
    });
  if (signerCpu) log(`  of which the signer's process: ${formatClaimCpu(signerCpu)}`);
  const sweeps = sweepsOf(events, W);
  const pollTimes = pollTimesOf(events, W);
  for (const sweep of sweeps) {
    const line = formatSweepCpu(
      cpuReadings,
      sweep.index,
      pollTimes.bySweep[sweep.index - 1] ?? [],
      pollTimes.all,
    );
    if (line) log(`keeper CPU over ${line}`);
  }
  const notes: string[] = [];
  if (watcher && watcher.failed.size > 0)
    notes.push(`${watcher.failed.size} sample claims failed or refused`);
  return {
    name: "keeper",
    sweeps,
    requests: events.length,
    rateLimited: events.filter((e) => e[3] === 429).length,
    serviceRefused: service.counts.refused,
    sample,
    latenciesMs: timings.latenciesMs,
    afterPollMs: timings.afterPollMs,
    stages,
    unconfirmed: sample.positions.length - timings.latenciesMs.length,
    durationMs: Date.now() - phaseStart,
    timedOut,
    ...(stopped
      ? {
          maxRssBytes: stopped.maxRssKb * 1024,
          peakSampledRssBytes: stopped.peakSampledRssBytes,
          ...(stopped.atPeak ? { memoryAtPeak: stopped.atPeak } : {}),
        }
      : {}),
    notes,
    events,
    confirmedAt: watcher?.confirmedAt ?? new Map(),
    closeSample,
    closeLatenciesMs: [...(closes?.confirmedAt.values() ?? [])].map((t) => t - closeSample.resolvedAtMs),
    ...(idleRequestsPerMinute === undefined ? {} : { idleRequestsPerMinute }),
    ...(cpu ? { cpu } : {}),
  };
}

async function runNaivePhase(
  options: BenchOptions,
  sandbox: RunningSandbox,
  service: ReturnType<typeof countServiceDecisions>,
  usedMarkets: Set<string>,
): Promise<PhaseResult> {
  const W = options.wallets;
  const phaseStart = Date.now();
  const boundMs = (W / options.rps) * 1000;
  const deadlineMs = phaseStart + 6 * boundMs + options.sampleClaims * 3_000 + 120_000;
  const bot = new NaiveBot({
    serviceUrl: sandbox.url,
    apiKey: sandbox.apiKey,
    rpcUrl: sandbox.chain?.url ?? "",
    wallets: sandbox.wallets,
    keypairOf: (i) => sandbox.world.walletKeypair(i),
    retrySleepMs: options.naiveRetrySleepMs,
    deadlineMs,
  });
  const progress = new SweepProgress(W);
  let fed = 0;
  const feed = () => {
    progress.add(bot.events.slice(fed));
    fed = bot.events.length;
  };
  let sample: ClaimSample = { marketIds: [], positions: [], resolvedAtMs: Date.now() };
  let resolved = false;
  const running = bot.run(() => {
    // Same moment as for the keeper: when half the wallets have been polled in the first sweep.
    if (!resolved && bot.progress.sweep === 1 && bot.progress.walletsDone >= Math.ceil(W / 2)) {
      resolved = true;
      sample = resolveSample(sandbox.world, options.sampleClaims, usedMarkets, options.staggerMs);
      log(
        `${since(phaseStart)}  resolved ${sample.marketIds.length} markets: ${sample.positions.length} winning positions to claim`,
      );
    }
  });
  const status = () => {
    feed();
    return (
      `${since(phaseStart)}  naive   sweep ${bot.progress.sweep} wallet ${bot.progress.walletsDone}/${W}  ` +
      `requests ${progress.requests}  429s ${progress.rateLimited}  ` +
      `claims ${bot.confirmedAt.size}/${sample.positions.length}  errors ${bot.progress.errors}`
    );
  };
  let timedOut = false;
  let runError: string | undefined;
  running.catch((error: unknown) => {
    runError = (error as Error).message;
  });
  try {
    timedOut = !(await waitUntil(
      "every sample claim confirmed and sweep 2 complete",
      () =>
        resolved &&
        (sample.isComplete?.() ?? true) &&
        bot.confirmedAt.size >= sample.positions.length &&
        progress.polled(2) >= W,
      deadlineMs - Date.now(),
      status,
      () => runError,
    ));
    log(status());
  } finally {
    bot.stop();
    await Promise.race([running, sleep(CONFIRM_GRACE_MS)]);
  }
  feed();
  const timings = claimTimings(sample.resolvedAtMs, bot.confirmedAt, sample.positions, bot.events);
  const notes = [
    "confirms by polling getSignatureStatuses every 400 ms: sendAndConfirmTransaction needs a websocket the local chain does not have",
    `sleeps ${options.naiveRetrySleepMs} ms after each 429, then retries`,
  ];
  if (bot.progress.errors > 0) notes.push(`${bot.progress.errors} errors, last: ${bot.progress.lastError}`);
  return {
    name: "naive",
    sweeps: sweepsOf(bot.events, W),
    requests: bot.events.length,
    rateLimited: bot.events.filter((e) => e[3] === 429).length,
    serviceRefused: service.counts.refused,
    sample,
    latenciesMs: timings.latenciesMs,
    afterPollMs: timings.afterPollMs,
    unconfirmed: sample.positions.length - timings.latenciesMs.length,
    durationMs: Date.now() - phaseStart,
    timedOut,
    notes,
    events: bot.events,
    confirmedAt: bot.confirmedAt,
  };
}

const CONFIRM_GRACE_MS = 65_000;

/** The I/O floor (bench/io-floor.ts) measured now, logged and kept; a failure is logged, not fatal. */
async function measureFloor(
  options: BenchOptions,
  prefix: string,
  when: string,
  runStart: number,
  floors: IoPartCosts[],
): Promise<void> {
  try {
    const floor = await measureIoFloor(options, prefix);
    floors.push(floor);
    log(`${since(runStart)}  a claim's I/O alone, ${when}: ${formatIoFloor(floor)}`);
  } catch (error) {
    log(`${since(runStart)}  ! the I/O floor ${when} was not measured: ${(error as Error).message}`);
  }
}

async function main(): Promise<number> {
  const parsed = parseBenchOptions(process.argv.slice(2));
  if ("help" in parsed) {
    log(parsed.help);
    return 0;
  }
  const options = parsed;
  const runStart = Date.now();
  const prefix = `bench-${Date.now().toString(36)}-${randomBytes(3).toString("hex")}`;
  log(
    `keeper sweep benchmark (mode ${options.mode}): ${options.wallets} wallets, ${options.rps} requests/s ` +
      (options.keeperRps === options.rps ? "" : `(keeper set to ${options.keeperRps}/s) `) +
      (options.keeperHeapMb === undefined ? "" : `(keeper heap ${options.keeperHeapMb} MB) `) +
      `(concurrency ${options.concurrency ?? "keeper default"}, polls ${options.pollConcurrency ?? "keeper default"}) (change at ${options.changeAt === "swept" ? "sweep 1 complete" : "half of sweep 1"}) ` +
      (options.staggerMs > 0 ? `(markets resolved ${options.staggerMs} ms apart) ` : "") +
      `(keeper runs ${options.keeperRuntime === "dist" ? "the built dist/ on node" : "the sources through tsx"}) ` +
      `(window ${options.windowSeconds} s), poll every ${options.intervalSeconds} s, ` +
      `${options.sampleClaims} claims per contender, slot ${options.slotMs} ms, redis prefix ${prefix}`,
  );
  const redis = new Redis(options.redisUrl, { maxRetriesPerRequest: 3, lazyConnect: true });
  await redis.connect();
  let sandbox: RunningSandbox | undefined;
  const served = new ServedRequests();
  const ioFloors: IoPartCosts[] = [];
  try {
    await measureFloor(options, prefix, "before the sandbox", runStart, ioFloors);
    sandbox = await startSandbox({
      port: 0,
      onServed: served.onServed,
      seed: options.seed,
      walletCount: options.wallets,
      eventsPerCategory: options.eventsPerCategory,
      rateLimit: { requestsPerSecond: options.rps, windowSeconds: options.windowSeconds, retryAfter: true },
      chain: { port: 0, slotMs: options.slotMs },
    });
    served.walletsAre(sandbox.wallets);
    const settled = settleBacklog(sandbox.world);
    log(
      `${since(runStart)}  sandbox up at ${sandbox.url}: ${sandbox.world.positions.length} positions; ` +
        `${settled} claimable at genesis marked claimed (steady state)`,
    );
    const service = countServiceDecisions(sandbox);
    const usedMarkets = new Set<string>();
    log(`${since(runStart)}  phase 1: keeper`);
    const keeper = await runKeeperPhase(options, sandbox, served, redis, prefix, service, usedMarkets);
    let naive: PhaseResult | undefined;
    if (!options.skipNaive) {
      // A fresh window: nothing the keeper sent counts against the naive loop.
      await sleep(options.windowSeconds * 1000 + 200);
      service.reset();
      log(`${since(runStart)}  phase 2: naive baseline`);
      naive = await runNaivePhase(options, sandbox, service, usedMarkets);
    }
    if (options.eventsFile) {
      const lines = [keeper, ...(naive ? [naive] : [])].flatMap((r) => [
        ...r.events.map((e) => JSON.stringify([r.name, ...e])),
        ...r.sample.positions.map((p) =>
          JSON.stringify([
            `${r.name}-claim`,
            p.resolvedAtMs ?? r.sample.resolvedAtMs,
            p.ownerIndex,
            r.confirmedAt.get(p.pubkey),
          ]),
        ),
      ]);
      await writeFile(options.eventsFile, `${lines.join("\n")}\n`);
      log(`request events written to ${options.eventsFile}`);
    }
    await measureFloor(options, prefix, "after the phases", runStart, ioFloors);
    printReport({
      options,
      keeper,
      naive,
      ioFloors,
      benchMaxRssBytes: process.resourceUsage().maxRSS * 1024,
    });
    return 0;
  } finally {
    await sandbox?.close().catch((e: unknown) => log(`sandbox close failed: ${(e as Error).message}`));
    const deleted = await deletePrefix(redis, prefix).catch(() => -1);
    log(`redis prefix ${prefix}: ${deleted} keys removed; total ${since(runStart).trim()}`);
    await redis.quit().catch(() => undefined);
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`benchmark failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
