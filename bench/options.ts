import { parseArgs } from "node:util";
import { KEEPER_NODE_FLAGS } from "../src/cli/node-flags.js";

export interface BenchOptions {
  /**
   * `wallets`: the keeper finds changes by sweeping every wallet (watcher off). `markets`: the market
   * watcher polls the holders of changed markets between sweeps (the keeper's default).
   */
  readonly mode: "wallets" | "markets";
  /** Events per category and provider in the sandbox world (7: about 200 markets). */
  readonly eventsPerCategory: number;
  /** Positions to push past a take-profit by moving their markets' prices, per run. */
  readonly sampleCloses: number;
  /** Seconds of quiet at the end of the keeper's phase over which idle requests a minute are counted. */
  readonly idleSeconds: number;
  /** Sandbox wallets, each with a few positions. */
  readonly wallets: number;
  /** The sandbox's rate limit and the keeper's `service.requestsPerSecond`. */
  readonly rps: number;
  /** The keeper's `service.requestsPerSecond` (default: the same as `rps`). */
  readonly keeperRps: number;
  /** --max-old-space-size for the keeper's process, when given. */
  readonly keeperHeapMb: number | undefined;
  /** Node flags of the keeper's process (default: the image's, KEEPER_NODE_FLAGS). */
  readonly keeperNodeFlags: readonly string[];
  /** Write a V8 heap snapshot of the keeper here once the change's claims confirmed (after the peak was read). */
  readonly heapSnapshot: string | undefined;
  /** Profile the keeper and the benchmark's process from the change until its samples confirmed, to PREFIX-keeper/-bench.cpuprofile. */
  readonly cpuProfile: string | undefined;
  /** queues.actionConcurrency and signer.concurrency of the keeper (undefined: its defaults, 16). */
  readonly concurrency: number | undefined;
  /** queues.pollConcurrency of the keeper (undefined: its default, 16). */
  readonly pollConcurrency: number | undefined;
  /**
   * When the markets change: `half`, when half of sweep 1 is done (holders not swept yet are not in the
   * watcher's index: the sweep finds them); `swept`, once sweep 1 is complete (every holder indexed).
   */
  readonly changeAt: "half" | "swept";
  /** Resolve the claim sample's markets one at a time, this many ms apart (0: all at once). */
  readonly staggerMs: number;
  /**
   * Close the claim sample's markets (unresolved, showing the keeper's time as their close) this many
   * seconds before resolving them, so the keeper sees a close just past (0: resolve open markets).
   */
  readonly closeBeforeResolveSeconds: number;
  /** The keeper's watcher.hotIntervalMs (undefined: its default; 0: the hot cadence off). */
  readonly hotIntervalMs: number | undefined;
  /** The keeper's watcher.sweepSharePct (undefined: its default). */
  readonly sweepSharePct: number | undefined;
  /** The keeper's signer role in a process of its own (CPU and RSS: both processes). */
  readonly signerProcess: boolean;
  /** How the keeper's process runs: `dist` (built JavaScript on plain node, as the image runs it) or `tsx`. */
  readonly keeperRuntime: "dist" | "tsx";
  /** Sliding window of the sandbox's rate limit, in seconds (1: R requests in any second). */
  readonly windowSeconds: number;
  /** The keeper's poll interval (its pollPositions cron), in seconds. */
  readonly intervalSeconds: number;
  /** Winning positions to create by resolving markets, per contender. */
  readonly sampleClaims: number;
  /** Claims of a burst run before the measured one, so that its code runs warm (0: none). */
  readonly warmUpClaims: number;
  /** Seconds between the warm-up burst and the measured one (V8 may drop idle code meanwhile). */
  readonly warmUpGapSeconds: number;
  /** Slot time of the local chain. */
  readonly slotMs: number;
  /** How long the naive loop sleeps after a 429 before it tries again. */
  readonly naiveRetrySleepMs: number;
  readonly seed: number;
  readonly redisUrl: string;
  readonly quick: boolean;
  readonly skipNaive: boolean;
  readonly logLevel: string;
  /** Write every request event of both phases here (JSON lines), for analysis. */
  readonly eventsFile: string | undefined;
}

const USAGE = `usage: npm run bench -- [--wallets N] [--rps R] [--quick] [options]

  --mode M             wallets: the keeper sweeps every wallet to find changes (watcher off);
                       markets: the market watcher polls holders of changed markets (default wallets)
  --wallets N          sandbox wallets (default 1000; 200 with --quick)
  --events-per-category K  sandbox events per category and provider (default 7: about 200 markets)
  --closes N           positions pushed past a take-profit mid-run (default 10)
  --idle-seconds S     quiet time at the end over which idle requests a minute are counted (default 60)
  --rps R              API rate limit, requests a second (default 100); the keeper is set to the same
  --keeper-rps R       the keeper's service.requestsPerSecond (default: the same as --rps)
  --keeper-heap-mb MB  run the keeper with --max-old-space-size=MB (default: Node's own sizing)
  --keeper-node-flags "F ..."  the keeper process's Node flags (default: the image's, ${KEEPER_NODE_FLAGS.join(" ")};
                       "" runs it with none, as before they were set)
  --heap-snapshot FILE write a heap snapshot of the keeper's process to FILE when the sample has
                       confirmed (a snapshot takes memory: the peak RSS printed is read before it)
  --cpu-profile PREFIX CPU profiles from the change until the samples confirmed: the keeper's process to
                       PREFIX-keeper.cpuprofile, the benchmark's (sandbox and chain) to PREFIX-bench.cpuprofile,
                       each summarized in the output (markets mode, or wallets mode's keeper phase)
  --concurrency N      the keeper's builds and signings at once (queues.actionConcurrency and
                       signer.concurrency; default: the keeper's own, 16)
  --poll-concurrency N the keeper's polls at once (queues.pollConcurrency; default: the keeper's own, 16)
  --change-at W        when markets resolve and prices move: half (half of sweep 1 done, default;
                       holders not swept yet are unknown to the watcher) or swept (sweep 1 complete)
  --stagger-ms MS      resolve the claim sample's markets one at a time, MS apart (default 0: at once);
                       each claim's latency counts from its own market's resolution
  --warm-up-claims N   with --change-at swept: a first burst of about N claims, confirmed before the
                       measured one, so the measured burst runs on code V8 has already compiled
                       (its CPU a claim printed apart; default 0: the measured burst is the first)
  --warm-up-gap-seconds S  wait S seconds after the warm-up burst before the measured one, the sweep
                       running meanwhile, as a burst hours after the last comes (default 0)
  --close-before-resolve S  close the claim sample's markets S seconds before they resolve (their
                       close time now by the keeper's clock: the watcher's hot cadence reads them);
                       default 0: open markets resolve at once
  --hot-interval-ms MS the keeper's watcher.hotIntervalMs (default: the keeper's own, 500; 0: off)
  --sweep-share-pct P  the keeper's watcher.sweepSharePct (default: the keeper's own, 80)
  --signer-process     the keeper's signer role in a process of its own, as \`keeper start --role signer\`
                       runs it (its CPU and RSS are added to the keeper's; --cpu-profile profiles the other)
  --keeper-runtime R   dist: the built JavaScript on plain node, as the Docker image runs it (default;
                       npm run bench builds it first); tsx: the TypeScript sources through tsx
  --window-seconds S   sliding window of the sandbox's limit (default 1: at most R in any second)
  --interval S         keeper poll interval in seconds (default: the smallest cron-friendly period
                       at least 1.15 x wallets / rps)
  --claims N           winning positions created per contender (default 5 % of wallets, 10..200)
  --slot-ms MS         local chain slot time (default 400, like mainnet)
  --naive-retry-ms MS  naive loop's fixed sleep after a 429 (default 1000)
  --seed N             world seed (default 1)
  --redis URL          Redis (default redis://127.0.0.1:6379; a unique prefix is used and removed)
  --skip-naive         run the keeper only
  --log-level L        keeper log level, written to a file (default warn)
  --events FILE        write every request (phase, sent at, kind, wallet, status) as JSON lines
  --quick              smoke run: 200 wallets unless --wallets is given, a smaller claim sample`;

/** Periods a cron schedule repeats evenly: divisors of a minute, then of an hour (in minutes). */
const SECOND_PERIODS = [1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30, 60];
const MINUTE_PERIODS = [2, 3, 4, 5, 6, 10, 12, 15, 20, 30, 60];

/** The smallest period a cron expression repeats evenly that is at least `seconds`. */
export function evenPeriodSeconds(seconds: number): number {
  for (const s of SECOND_PERIODS) if (s >= seconds) return s;
  for (const m of MINUTE_PERIODS) if (m * 60 >= seconds) return m * 60;
  return 3_600;
}

/** Ms from `nowMs` to the next tick of cronEvery(seconds) (ticks fall on the UTC clock's multiples). */
export function msUntilNextTick(seconds: number, nowMs: number): number {
  const periodMs =
    seconds < 60 ? seconds * 1000 : seconds === 60 ? 60_000 : Math.round(seconds / 60) * 60_000;
  // A minute's ticks restart at :00, so a period that does not divide the minute is cut there.
  const withinMs = seconds < 60 ? nowMs % 60_000 : nowMs;
  const next = Math.ceil((withinMs + 1) / periodMs) * periodMs;
  return Math.min(next - withinMs, seconds < 60 ? 60_000 - withinMs : Number.POSITIVE_INFINITY);
}

/** A six-field cron expression that fires every `seconds` (an even period, see evenPeriodSeconds). */
export function cronEvery(seconds: number): string {
  if (seconds < 60) return `*/${seconds} * * * * *`;
  if (seconds === 60) return "0 * * * * *";
  const minutes = Math.round(seconds / 60);
  return minutes >= 60 ? "0 0 * * * *" : `0 */${minutes} * * * *`;
}

function positiveNumber(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name}: expected a positive number, got ${value}`);
  return n;
}

function nonNegative(value: string, name: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0)
    throw new Error(`--${name}: expected 0 or a positive number, got ${value}`);
  return n;
}

export function parseBenchOptions(argv: readonly string[]): BenchOptions | { help: string } {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      wallets: { type: "string" },
      mode: { type: "string" },
      "events-per-category": { type: "string" },
      closes: { type: "string" },
      "idle-seconds": { type: "string" },
      rps: { type: "string" },
      "keeper-rps": { type: "string" },
      "keeper-heap-mb": { type: "string" },
      "keeper-node-flags": { type: "string" },
      "heap-snapshot": { type: "string" },
      "cpu-profile": { type: "string" },
      concurrency: { type: "string" },
      "poll-concurrency": { type: "string" },
      "change-at": { type: "string" },
      "stagger-ms": { type: "string" },
      "close-before-resolve": { type: "string" },
      "warm-up-claims": { type: "string" },
      "warm-up-gap-seconds": { type: "string" },
      "hot-interval-ms": { type: "string" },
      "sweep-share-pct": { type: "string" },
      "signer-process": { type: "boolean" },
      "keeper-runtime": { type: "string" },
      "window-seconds": { type: "string" },
      interval: { type: "string" },
      claims: { type: "string" },
      "slot-ms": { type: "string" },
      "naive-retry-ms": { type: "string" },
      seed: { type: "string" },
      redis: { type: "string" },
      "skip-naive": { type: "boolean", default: false },
      "log-level": { type: "string" },
      events: { type: "string" },
      quick: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
    strict: true,
  });
  if (values.help) return { help: USAGE };
  const quick = values.quick === true;
  const wallets = Math.round(positiveNumber(values.wallets, "wallets", quick ? 200 : 1_000));
  const rps = positiveNumber(values.rps, "rps", 100);
  if (rps > 1_000) throw new Error("--rps: the keeper accepts at most 1000 requests a second");
  const interval =
    values.interval === undefined
      ? evenPeriodSeconds(Math.max(2, (1.15 * wallets) / rps))
      : evenPeriodSeconds(positiveNumber(values.interval, "interval", 10));
  const keeperRuntime = values["keeper-runtime"] ?? "dist";
  if (keeperRuntime !== "dist" && keeperRuntime !== "tsx")
    throw new Error(`--keeper-runtime: expected dist or tsx, got ${keeperRuntime}`);
  const defaultClaims = Math.min(quick ? 20 : 200, Math.max(10, Math.round(wallets * 0.05)));
  const mode = values.mode ?? "wallets";
  const changeAt = values["change-at"] ?? "half";
  if (changeAt !== "half" && changeAt !== "swept")
    throw new Error(`--change-at: expected half or swept, got ${changeAt}`);
  if (mode !== "wallets" && mode !== "markets")
    throw new Error(`--mode: expected wallets or markets, got ${mode}`);
  return {
    mode,
    eventsPerCategory: Math.round(positiveNumber(values["events-per-category"], "events-per-category", 7)),
    sampleCloses: Math.round(positiveNumber(values.closes, "closes", 10)),
    idleSeconds: positiveNumber(values["idle-seconds"], "idle-seconds", quick ? 20 : 60),
    wallets,
    rps,
    keeperRps: positiveNumber(values["keeper-rps"], "keeper-rps", rps),
    heapSnapshot: values["heap-snapshot"],
    cpuProfile: values["cpu-profile"],
    keeperNodeFlags:
      values["keeper-node-flags"] === undefined
        ? KEEPER_NODE_FLAGS
        : values["keeper-node-flags"].split(/\s+/).filter((flag) => flag !== ""),
    keeperHeapMb:
      values["keeper-heap-mb"] === undefined
        ? undefined
        : Math.round(positiveNumber(values["keeper-heap-mb"], "keeper-heap-mb", 0)),
    concurrency:
      values.concurrency === undefined
        ? undefined
        : Math.round(positiveNumber(values.concurrency, "concurrency", 16)),
    pollConcurrency:
      values["poll-concurrency"] === undefined
        ? undefined
        : Math.round(positiveNumber(values["poll-concurrency"], "poll-concurrency", 16)),
    changeAt,
    staggerMs: values["stagger-ms"] === undefined ? 0 : positiveNumber(values["stagger-ms"], "stagger-ms", 0),
    hotIntervalMs:
      values["hot-interval-ms"] === undefined
        ? undefined
        : Math.round(nonNegative(values["hot-interval-ms"], "hot-interval-ms")),
    signerProcess: values["signer-process"] === true,
    sweepSharePct:
      values["sweep-share-pct"] === undefined
        ? undefined
        : positiveNumber(values["sweep-share-pct"], "sweep-share-pct", 0),
    closeBeforeResolveSeconds:
      values["close-before-resolve"] === undefined
        ? 0
        : positiveNumber(values["close-before-resolve"], "close-before-resolve", 0),
    keeperRuntime,
    windowSeconds: positiveNumber(values["window-seconds"], "window-seconds", 1),
    intervalSeconds: interval,
    sampleClaims: Math.round(positiveNumber(values.claims, "claims", defaultClaims)),
    warmUpClaims:
      values["warm-up-claims"] === undefined
        ? 0
        : Math.round(nonNegative(values["warm-up-claims"], "warm-up-claims")),
    warmUpGapSeconds:
      values["warm-up-gap-seconds"] === undefined
        ? 0
        : nonNegative(values["warm-up-gap-seconds"], "warm-up-gap-seconds"),
    slotMs: Math.round(positiveNumber(values["slot-ms"], "slot-ms", 400)),
    naiveRetrySleepMs: Math.round(positiveNumber(values["naive-retry-ms"], "naive-retry-ms", 1_000)),
    seed: Math.round(positiveNumber(values.seed, "seed", 1)),
    redisUrl: values.redis ?? "redis://127.0.0.1:6379",
    quick,
    skipNaive: values["skip-naive"] === true,
    logLevel: values["log-level"] ?? "warn",
    eventsFile: values.events,
  };
}
