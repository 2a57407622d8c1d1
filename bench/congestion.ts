/**
 * Congestion benchmark: closes and swaps through a real keeper on the local chain while a congested
 * leader drops every bid below a moving threshold and each transaction's first send is lost, once per
 * fee mode (escalating percentile bids, the percentile alone, a fixed price), same world and same
 * walk each time. `npm run bench:congestion -- --help`; bench/README.md for what the figures mean.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { NATIVE_MINT } from "@solana/spl-token";
import { Redis } from "ioredis";
import pino from "pino";
import { ALL_ROLES, startKeeper } from "../src/app/start-keeper.js";
import { loadConfig } from "../src/config/load-config.js";
import { type Intent, intentKeys } from "../src/core/intent.js";
import { redisKeys } from "../src/keeper/names.js";
import { enqueueBuild } from "../src/keeper/queues/enqueue.js";
import { createQueues } from "../src/keeper/queues/queues.js";
import { Ledger, TERMINAL_STATUSES } from "../src/keeper/state/ledger.js";
import { BLOCKHASH_VALIDITY_BLOCKS } from "../src/sandbox/chain/blockhash-window.js";
import { congestionWalk } from "../src/sandbox/chain/congestion.js";
import { computeUnitPriceOf } from "../src/sandbox/chain/fees.js";
import { SANDBOX_POOL_PROGRAM_ID } from "../src/sandbox/chain/pool-program.js";
import { type RunningSandbox, startSandbox } from "../src/sandbox/index.js";
import { Wallets } from "../src/signer/keys.js";
import { type CongestionBenchOptions, type FeeMode, parseCongestionOptions } from "./congestion-options.js";
import { deletePrefix } from "./redis-prefix.js";
import { formatMs, formatRatio, percentile } from "./stats.js";

const NEVER = "0 0 0 1 1 *";
const LEDGER_POLL_MS = 200;
const PROGRESS_EVERY_MS = 5_000;
const MAX_REBUILDS = 3;
const SWAP_AMOUNT_RAW = "1000000";

const log = (line: string) => console.log(line);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

type Kind = "close" | "swap";

/** One intent of a phase and what became of it. */
interface Tracked {
  readonly key: string;
  readonly kind: Kind;
  admittedAt?: number;
  settledAt?: number;
  status?: string;
  builds?: number;
  signature?: string;
}

interface KindFigures {
  readonly intents: number;
  readonly firstBuild: number;
  readonly landed: number;
  readonly failed: number;
  readonly unsettled: number;
  readonly rebuilds: number;
  readonly feeLamports: number;
  readonly confirmMs: number[];
  readonly landedBids: number[];
}

interface PhaseFigures {
  readonly mode: FeeMode;
  readonly byKind: ReadonlyMap<Kind, KindFigures>;
  readonly thresholds: { min: number; median: number; max: number };
  readonly durationMs: number;
}

/** The keeper's signer settings for a mode (existing config keys only). */
function signerYaml(mode: FeeMode, options: CongestionBenchOptions): string[] {
  switch (mode) {
    case "escalate":
      return ["  priorityFeePercentile: 75", "  priorityFeeEscalation: 1.5"];
    case "percentile":
      return ["  priorityFeePercentile: 75", "  priorityFeeEscalation: 1"];
    case "fixed":
      return [
        `  minPriorityFeeMicroLamports: ${options.fixedFee}`,
        `  maxComputeUnitPriceMicroLamports: ${options.fixedFee}`,
        "  priorityFeeEscalation: 1",
      ];
  }
}

async function writeConfig(
  sandbox: RunningSandbox,
  mode: FeeMode,
  options: CongestionBenchOptions,
  prefix: string,
): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "keeper-congestion-"));
  const apiKeyFile = join(dir, "api-key");
  await writeFile(apiKeyFile, `${sandbox.apiKey}\n`, { mode: 0o600 });
  const file = join(dir, "keeper.yaml");
  await writeFile(
    file,
    [
      "mode: live",
      "service:",
      `  baseUrl: ${sandbox.url}`,
      `  apiKeyFile: ${apiKeyFile}`,
      "  requestsPerSecond: 200",
      "rpc:",
      `  url: ${sandbox.chain?.url}`,
      "redis:",
      `  url: ${options.redisUrl}`,
      `  prefix: ${prefix}`,
      "schedules:",
      `  pollPositions: "${NEVER}"`,
      `  pollOrders: "${NEVER}"`,
      `  housekeeping: "${NEVER}"`,
      "signer:",
      "  rebroadcastIntervalMs: 1000",
      // The default 4 signing slots: a slot is freed at the first send, the watcher waits.
      `  maxRebuilds: ${MAX_REBUILDS}`,
      `  payoutMints: [${sandbox.usdcMint}]`,
      // The sandbox pool's program pays a swap's output in the swap's own transaction.
      `  allowedPrograms: [${SANDBOX_POOL_PROGRAM_ID.toBase58()}]`,
      ...signerYaml(mode, options),
      "ops:",
      "  port: 0",
      `  logLevel: ${options.logLevel}`,
      "",
    ].join("\n"),
  );
  return file;
}

/** The phase's intents: closes of closable positions and swaps, interleaved, spread over the wallets. */
function intentsOf(sandbox: RunningSandbox, options: CongestionBenchOptions): Intent[] {
  const world = sandbox.world;
  const closes: Intent[] = [];
  for (const position of world.positions) {
    if (closes.length >= options.closes) break;
    if (position.closedAt !== undefined || position.claimedAt !== undefined) continue;
    if (world.marketState(world.marketOf(position)).status !== "open") continue;
    const positionPubkey = world.positionPubkey(position);
    closes.push({
      kind: "close",
      key: intentKeys.close(positionPubkey),
      wallet: world.ownerOf(position),
      strategy: "bench",
      positionPubkey,
    });
  }
  const swaps: Intent[] = Array.from({ length: options.swaps }, (_, i) => {
    const wallet = sandbox.wallets[i % sandbox.wallets.length] ?? "";
    return {
      kind: "swap",
      key: `bench-swap-${i}`,
      wallet,
      strategy: "bench",
      inputMint: sandbox.usdcMint,
      outputMint: NATIVE_MINT.toBase58(),
      amount: SWAP_AMOUNT_RAW,
    };
  });
  const mixed: Intent[] = [];
  for (let i = 0; i < Math.max(closes.length, swaps.length); i++) {
    const close = closes[i];
    const swap = swaps[i];
    if (close) mixed.push(close);
    if (swap) mixed.push(swap);
  }
  return mixed;
}

/** The threshold a slot at a time: rising over the spread, then wandering at that level. */
function thresholdWalk(options: CongestionBenchOptions): number[] {
  const spreadSlots = Math.ceil((options.spreadSeconds * 1000) / options.slotMs);
  const rising = congestionWalk({
    startMicroLamports: options.startFee,
    slots: spreadSlots,
    growthPerSlot: options.growthPerSlot,
    volatility: options.volatility,
    floor: 1,
    seed: options.seed,
  });
  const level = rising.at(-1) ?? options.startFee;
  const tail = congestionWalk({
    startMicroLamports: level,
    slots: (MAX_REBUILDS + 2) * BLOCKHASH_VALIDITY_BLOCKS,
    volatility: options.volatility,
    floor: 1,
    seed: options.seed + 1,
  });
  return [...rising, ...tail];
}

async function runPhase(
  mode: FeeMode,
  options: CongestionBenchOptions,
  redis: Redis,
  prefix: string,
  runStart: number,
): Promise<PhaseFigures> {
  const since = () => `${((Date.now() - runStart) / 1000).toFixed(1).padStart(6)}s`;
  const sandbox = await startSandbox({
    port: 0,
    seed: options.seed,
    walletCount: options.wallets,
    rateLimit: false,
    chain: { port: 0, slotMs: options.slotMs },
  });
  const chain = sandbox.chain;
  if (!chain) throw new Error("the sandbox started without its chain");
  const logFile = join(tmpdir(), `${prefix}-keeper.log`);
  const config = await loadConfig({ file: await writeConfig(sandbox, mode, options, prefix), env: {} });
  const secretKeys = sandbox.wallets.map((_, i) => sandbox.world.walletKeypair(i).secretKey);
  const keeper = await startKeeper({
    config,
    roles: new Set(ALL_ROLES),
    logger: pino({ level: options.logLevel }, pino.destination({ dest: logFile, sync: false })),
    wallets: Wallets.fromSecretKeys(secretKeys),
    opsServer: false,
  });
  const keys = redisKeys(prefix, "live");
  const ledger = new Ledger(redis, keys);
  const queues = createQueues(redis, keys.bullPrefix, config);
  const intents = intentsOf(sandbox, options);
  const tracked = intents.map((i): Tracked => ({ key: i.key, kind: i.kind as Kind }));
  const walk = thresholdWalk(options);
  const phaseStart = Date.now();
  try {
    chain.chain.dropFirstSends(options.dropFirst);
    chain.chain.congest({ thresholds: walk });
    log(
      `${since()}  phase ${mode}: ${intents.length} intents over ${options.spreadSeconds} s (log: ${logFile})`,
    );
    let watching = true;
    const watcher = (async () => {
      let lastPrint = Date.now();
      while (watching) {
        for (const t of tracked) {
          if (t.admittedAt === undefined || t.settledAt !== undefined) continue;
          const row = await ledger.get(t.key);
          if (!row || !(TERMINAL_STATUSES as readonly string[]).includes(row.status)) continue;
          t.settledAt = Date.now();
          t.status = row.status;
          t.builds = row.builds;
          if (row.signature !== undefined) t.signature = row.signature;
        }
        if (Date.now() - lastPrint >= PROGRESS_EVERY_MS) {
          lastPrint = Date.now();
          const admitted = tracked.filter((t) => t.admittedAt !== undefined).length;
          const settled = tracked.filter((t) => t.settledAt !== undefined).length;
          const threshold = chain.chain.faults.congestion?.thresholdAt(chain.chain.slot) ?? 0;
          log(`${since()}    admitted ${admitted}, settled ${settled}; threshold ${threshold} µL/CU`);
        }
        await sleep(LEDGER_POLL_MS);
      }
    })();
    const gapMs = (options.spreadSeconds * 1000) / Math.max(1, intents.length);
    for (const [i, intent] of intents.entries()) {
      await sleep(Math.max(0, phaseStart + i * gapMs - Date.now()));
      const result = await ledger.admit(intent);
      if (!result.admitted) throw new Error(`${intent.key} was not admitted: ${result.status}`);
      const t = tracked[i];
      if (t) t.admittedAt = Date.now();
      await enqueueBuild(
        queues.actions,
        intent.key,
        { tries: result.tries ?? 1, recordId: result.recordId },
        1,
      );
    }
    // Every build may wait out its blockhash (150 slots), then a margin for a slow machine.
    const lifetimeMs = BLOCKHASH_VALIDITY_BLOCKS * options.slotMs;
    const deadline = Date.now() + (MAX_REBUILDS + 1) * lifetimeMs * 1.5 + 30_000;
    while (tracked.some((t) => t.settledAt === undefined) && Date.now() < deadline) await sleep(500);
    watching = false;
    await watcher;
  } finally {
    await queues.close().catch(() => undefined);
    await keeper.stop().catch((e: unknown) => log(`keeper stop failed: ${(e as Error).message}`));
  }
  const durationMs = Date.now() - phaseStart;
  const byKind = new Map<Kind, KindFigures>();
  for (const kind of ["close", "swap"] as const) {
    const mine = tracked.filter((t) => t.kind === kind);
    const landed = mine.filter((t) => t.status === "confirmed");
    let feeLamports = 0;
    const landedBids: number[] = [];
    for (const t of landed) {
      // What the chain charged: the landed transaction's fee (its getTransaction meta.fee).
      const record = t.signature === undefined ? undefined : chain.chain.transaction(t.signature);
      if (!record) continue;
      feeLamports += record.fee;
      landedBids.push(computeUnitPriceOf(record.transaction.message));
    }
    byKind.set(kind, {
      intents: mine.length,
      firstBuild: landed.filter((t) => t.builds === 1).length,
      landed: landed.length,
      failed: mine.filter((t) => t.settledAt !== undefined && t.status !== "confirmed").length,
      unsettled: mine.filter((t) => t.settledAt === undefined).length,
      rebuilds: mine.reduce((sum, t) => sum + Math.max(0, (t.builds ?? 1) - 1), 0),
      feeLamports,
      confirmMs: landed.map((t) => (t.settledAt ?? 0) - (t.admittedAt ?? 0)),
      landedBids,
    });
  }
  const used = walk.slice(0, Math.max(1, Math.ceil(durationMs / options.slotMs)));
  await sandbox.close().catch((e: unknown) => log(`sandbox close failed: ${(e as Error).message}`));
  log(`${since()}  phase ${mode} done in ${(durationMs / 1000).toFixed(1)} s`);
  return {
    mode,
    byKind,
    thresholds: { min: Math.min(...used), median: percentile(used, 50), max: Math.max(...used) },
    durationMs,
  };
}

const share = (n: number, of: number) => (of === 0 ? "—" : `${n}/${of} (${Math.round((100 * n) / of)} %)`);
const shareValue = (n: number, of: number) => (of === 0 ? Number.NaN : n / of);

function report(phases: readonly PhaseFigures[], options: CongestionBenchOptions): void {
  const width = 28;
  const pad = (s: string, n = width) => s.padEnd(n);
  const base = phases.at(-1);
  const ratioHeader =
    phases.length > 1 && base ? phases.slice(0, -1).map((p) => `${p.mode}/${base.mode}`) : [];
  log("");
  log(
    `== congestion: ${options.wallets} wallets · slot ${options.slotMs} ms · first ${options.dropFirst} send(s) of each transaction lost · ` +
      `threshold from ${options.startFee} µL/CU, x${options.growthPerSlot}/slot over ${options.spreadSeconds} s, volatility ${options.volatility} ==`,
  );
  log(
    `threshold seen (min / median / max, µL/CU): ${phases
      .map((p) => `${p.mode} ${p.thresholds.min} / ${p.thresholds.median} / ${p.thresholds.max}`)
      .join(" · ")}`,
  );
  for (const kind of ["close", "swap"] as const) {
    const figures = phases.map((p) => p.byKind.get(kind));
    if (figures.every((f) => f === undefined || f.intents === 0)) continue;
    log("");
    log(pad(`${kind}s`, 34) + phases.map((p) => pad(p.mode)).join("") + ratioHeader.join("   "));
    const row = (label: string, cell: (f: KindFigures) => string, value?: (f: KindFigures) => number) => {
      const cells = figures.map((f) => pad(f ? cell(f) : "—"));
      const last = figures.at(-1);
      const ratios =
        value && last
          ? figures.slice(0, -1).map((f) => pad(f ? formatRatio(value(f), value(last)) : "—", 14))
          : [];
      log(pad(label, 34) + cells.join("") + ratios.join(""));
    };
    row(
      "landed on the first blockhash",
      (f) => share(f.firstBuild, f.intents),
      (f) => shareValue(f.firstBuild, f.intents),
    );
    row(
      "landed overall",
      (f) => share(f.landed, f.intents),
      (f) => shareValue(f.landed, f.intents),
    );
    row("failed / never settled", (f) => `${f.failed} / ${f.unsettled}`);
    row(
      "rebuilds (fresh blockhashes)",
      (f) => String(f.rebuilds),
      (f) => f.rebuilds,
    );
    row(
      "fee paid, total (lamports)",
      (f) => String(f.feeLamports),
      (f) => f.feeLamports,
    );
    row(
      "fee per landed intent",
      (f) => (f.landed === 0 ? "—" : String(Math.round(f.feeLamports / f.landed))),
      (f) => (f.landed === 0 ? Number.NaN : f.feeLamports / f.landed),
    );
    row("landed bid p50 (µL/CU)", (f) =>
      f.landedBids.length === 0 ? "—" : String(percentile(f.landedBids, 50)),
    );
    row(
      "time to confirm p50",
      (f) => formatMs(percentile(f.confirmMs, 50)),
      (f) => percentile(f.confirmMs, 50),
    );
    row(
      "time to confirm p99",
      (f) => formatMs(percentile(f.confirmMs, 99)),
      (f) => percentile(f.confirmMs, 99),
    );
  }
  log("");
  log(
    "notes: closes are built and co-signed by the service, which sets their price; Keeper can price only what it builds or assembles (swaps, trigger orders)",
  );
}

async function main(): Promise<number> {
  const parsed = parseCongestionOptions(process.argv.slice(2));
  if ("help" in parsed) {
    log(parsed.help);
    return 0;
  }
  const options = parsed;
  const runStart = Date.now();
  const base = `bench-congestion-${Date.now().toString(36)}-${randomBytes(3).toString("hex")}`;
  log(`congestion benchmark: modes ${options.modes.join(", ")}, redis prefix ${base}`);
  const redis = new Redis(options.redisUrl, { maxRetriesPerRequest: 3, lazyConnect: true });
  await redis.connect();
  const phases: PhaseFigures[] = [];
  try {
    for (const mode of options.modes)
      phases.push(await runPhase(mode, options, redis, `${base}-${mode}`, runStart));
    report(phases, options);
    return 0;
  } finally {
    const deleted = await deletePrefix(redis, base).catch(() => -1);
    log(
      `redis prefix ${base}: ${deleted} keys removed; total ${((Date.now() - runStart) / 1000).toFixed(1)} s`,
    );
    await redis.quit().catch(() => undefined);
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`congestion benchmark failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
