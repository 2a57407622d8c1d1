import { claimCpuCell } from "./cpu-per-claim.js";
import { type IoPartCosts, ioFloorPerClaim, meanFloor, timesFloor } from "./io-floor.js";
import type { BenchOptions } from "./options.js";
import type { PhaseResult } from "./phase-result.js";
import {
  boundEfficiency,
  burstFloorMs,
  formatMs,
  formatRatio,
  KEEPER_PLAN_SHARE,
  percentile,
  type Sweep,
  sweepShareOfPlan,
} from "./stats.js";

export interface Report {
  readonly options: BenchOptions;
  readonly keeper: PhaseResult;
  readonly naive: PhaseResult | undefined;
  /** A claim's I/O floor measured in this run (before and after the phases), see io-floor.ts. */
  readonly ioFloors: readonly IoPartCosts[];
  readonly benchMaxRssBytes: number;
}

const RSS_TARGET_BYTES = 300 * 1024 * 1024;
const CPU_TARGET_MS_A_CLAIM = 5;
const MB = 1024 * 1024;

const pad = (text: string, width: number) => text.padEnd(width);
const pct = (x: number) => (Number.isFinite(x) ? `${(x * 100).toFixed(1)} %` : "—");

function sweepCells(sweep: Sweep | undefined, options: BenchOptions) {
  if (!sweep) return { time: "— (incomplete)", requests: "—", efficiency: "—" };
  const boundMs = ((sweep.requests - 1) / options.rps) * 1000;
  return {
    time: `${formatMs(sweep.endMs - sweep.startMs)} (bound ${formatMs(boundMs)})`,
    requests:
      `${sweep.requests} (min ${options.wallets}+${sweep.claims})` +
      (sweep.rateLimited > 0 ? ` incl. ${sweep.rateLimited} 429s` : ""),
    efficiency: pct(boundEfficiency(sweep, options.rps)),
  };
}

function latency(result: PhaseResult | undefined, p: number): number {
  return result ? percentile(result.latenciesMs, p) : Number.NaN;
}

export function printReport(report: Report): void {
  const { options, keeper, naive } = report;
  const out = (line = "") => console.log(line);
  const c1 = 38;
  const c2 = 36;
  const c3 = 36;
  const row = (label: string, k: string, n: string, ratio = "") =>
    out(`${pad(label, c1)}${pad(k, c2)}${pad(n, c3)}${ratio}`);

  out();
  out(
    `== mode ${options.mode} · ${options.wallets} wallets · ${options.rps} req/s (window ${options.windowSeconds} s) · ` +
      `poll every ${options.intervalSeconds} s · slot ${options.slotMs} ms ==`,
  );
  row("", "keeper", naive ? "naive baseline" : "naive baseline (skipped)", "keeper/naive");
  const sweepCount = Math.max(keeper.sweeps.length, naive?.sweeps.length ?? 0, 1);
  for (let i = 0; i < Math.min(sweepCount, 2); i++) {
    const k = sweepCells(keeper.sweeps[i], options);
    const n = sweepCells(naive?.sweeps[i], options);
    const ks = keeper.sweeps[i];
    const ns = naive?.sweeps[i];
    row(
      `sweep ${i + 1} time`,
      k.time,
      n.time,
      ks && ns ? formatRatio(ks.endMs - ks.startMs, ns.endMs - ns.startMs) : "—",
    );
    row(
      `sweep ${i + 1} requests`,
      k.requests,
      n.requests,
      ks && ns ? formatRatio(ks.requests, ns.requests) : "—",
    );
    row(`sweep ${i + 1} throughput / limit`, k.efficiency, n.efficiency);
  }
  row(
    "429s received (service's count)",
    `${keeper.rateLimited} (${keeper.serviceRefused})`,
    naive ? `${naive.rateLimited} (${naive.serviceRefused})` : "—",
    naive ? formatRatio(keeper.rateLimited, naive.rateLimited) : "—",
  );
  row(
    "requests in the phase",
    String(keeper.requests),
    naive ? String(naive.requests) : "—",
    naive ? formatRatio(keeper.requests, naive.requests) : "—",
  );
  const claims = (r: PhaseResult) =>
    `${r.latenciesMs.length}/${r.sample.positions.length} on ${r.sample.marketIds.length} markets`;
  row("claims confirmed", claims(keeper), naive ? claims(naive) : "—");
  for (const p of [50, 99]) {
    const k = latency(keeper, p);
    const n = latency(naive, p);
    row(`claim latency p${p}`, formatMs(k), formatMs(n), formatRatio(k, n));
  }
  row("claim latency max", formatMs(latency(keeper, 100)), formatMs(latency(naive, 100)));
  const afterPoll = (r: PhaseResult | undefined) =>
    r ? `${formatMs(percentile(r.afterPollMs, 50))} / ${formatMs(percentile(r.afterPollMs, 99))}` : "—";
  row("  of which poll to confirmed p50/p99", afterPoll(keeper), afterPoll(naive));
  const stages = keeper.stages;
  if (stages) {
    const p50p99 = (values: readonly number[]) =>
      `${formatMs(percentile(values, 50))} / ${formatMs(percentile(values, 99))} (${values.length})`;
    row("  claim stages p50/p99 (claims):", "", "");
    row("    resolved → owner's positions read", p50p99(stages.toPollMs), "—");
    row("    that read → claim build request", p50p99(stages.toBuildMs), "—");
    row("    build request → confirmed", p50p99(stages.toConfirmedMs), "—");
    row("    resolved → claim build request", p50p99(stages.changeToBuildMs), "—");
    const { reads, builds, winners } = stages.requests;
    row(
      "  requests per winner (reads + builds)",
      winners > 0
        ? `${((reads + builds) / winners).toFixed(2)} (${reads} reads + ${builds} builds / ${winners})`
        : "—",
      "—",
    );
    row("  owners indexed at the change", p50p99(stages.indexedMs), "—");
    row("  owners not swept yet (sweep finds)", p50p99(stages.unindexedMs), "—");
  }
  const floor = burstFloorMs(keeper.sample.positions, options.rps, options.mode !== "markets");
  row(
    options.staggerMs > 0 ? "  rate-limit floor of the largest burst" : "  rate-limit floor of the burst",
    `${floor.requests} req: ${formatMs(floor.planMs)} (${formatMs(floor.keeperMs)} at ${KEEPER_PLAN_SHARE * 100} %)`,
    "—",
  );
  const closeLatencies = keeper.closeLatenciesMs ?? [];
  row(
    "closes confirmed (price past take-profit)",
    `${closeLatencies.length}/${keeper.closeSample?.positions.length ?? 0} on ${keeper.closeSample?.marketIds.length ?? 0} markets`,
    "—",
  );
  for (const p of [50, 99])
    row(`close latency p${p} (price moved → confirmed)`, formatMs(percentile(closeLatencies, p)), "—");
  row(
    "idle requests a minute",
    keeper.idleRequestsPerMinute === undefined ? "—" : keeper.idleRequestsPerMinute.toFixed(0),
    "—",
  );
  row("keeper CPU a claim (in all / above rest)", claimCpuCell(keeper.cpu), "—");
  row(
    "  a claim's I/O alone, this run",
    report.ioFloors.length === 0
      ? "—"
      : report.ioFloors.map((f) => `${ioFloorPerClaim(f).toFixed(2)} ms`).join(" / "),
    "(before / after the phases)",
  );
  const cpuTimesFloor = keeper.cpu && timesFloor(keeper.cpu.burstCpuMs / keeper.cpu.claims, report.ioFloors);
  row("  keeper CPU a claim / its I/O alone", cpuTimesFloor ?? "—", "—");
  const rss = keeper.maxRssBytes;
  row(
    "keeper peak RSS (maxRSS / sampled)",
    rss === undefined
      ? "—"
      : `${Math.round(rss / MB)} MB / ${Math.round((keeper.peakSampledRssBytes ?? 0) / MB)} MB`,
    `(bench process: ${Math.round(report.benchMaxRssBytes / MB)} MB)`,
  );
  const atPeak = keeper.memoryAtPeak;
  if (atPeak)
    row(
      "  at the sampled peak: heap used / total",
      `${Math.round(atPeak.heapUsedBytes / MB)} / ${Math.round(atPeak.heapTotalBytes / MB)} MB`,
      `external ${Math.round(atPeak.externalBytes / MB)} MB (buffers ${Math.round(atPeak.arrayBuffersBytes / MB)})`,
    );
  row("phase duration", formatMs(keeper.durationMs), naive ? formatMs(naive.durationMs) : "—");
  out(
    "note: the floor is what the rate limit alone allows the claim burst: one build request per claim (and in wallets " +
      "mode one positions read per winning wallet; in markets mode the claims come from the holdings index), at the plan's rate (and at the " +
      `${KEEPER_PLAN_SHARE * 100} % of it Keeper aims at); the slowest claim cannot beat it ` +
      "when the window has no room left. Over a longer window (--window-seconds) the keeper spends at once what the paced " +
      "sweep left of the window, and a burst smaller than that beats the floor",
  );
  for (const r of [keeper, naive]) {
    if (!r) continue;
    if (r.timedOut) out(`note (${r.name}): the phase hit its time limit; figures cover what was done`);
    for (const note of r.notes) out(`note (${r.name}): ${note}`);
  }

  out();
  out("targets (keeper):");
  const verdict = (ok: boolean) => (ok ? "PASS" : "MISS");
  const efficiencies = keeper.sweeps.map((s) => boundEfficiency(s, options.rps));
  const worst = efficiencies.length > 0 ? Math.min(...efficiencies) : Number.NaN;
  // The sweep is paced to its share of the plan; with the watcher on, the rest is kept for targeted
  // work and the watcher's reads are charged to the sweep's share (src/api/request-budget.ts).
  const share = sweepShareOfPlan(options.mode, options.sweepSharePct);
  out(
    `  ${verdict(worst >= 0.85 * share)}  throughput >= 85 % of the sweep's share   ` +
      `measured ${pct(worst)} of the bound, ${pct(worst / share)} of its share (${pct(share)}; worst of ${efficiencies.length} complete sweeps)`,
  );
  const refused = Math.max(keeper.rateLimited, keeper.serviceRefused);
  out(`  ${verdict(refused === 0)}  zero 429s                                  measured ${refused}`);
  const p99 = latency(keeper, 99);
  const limitMs = options.intervalSeconds * 1000 + 2_000;
  out(
    `  ${verdict(p99 < limitMs && keeper.unconfirmed === 0)}  p99 claim latency < interval + 2 s = ${formatMs(limitMs)}`.padEnd(
      51,
    ) +
      `  measured ${formatMs(p99)}${keeper.unconfirmed > 0 ? ` (${keeper.unconfirmed} never confirmed)` : ""}`,
  );
  out(`  ${cpuVerdict(keeper, report.ioFloors, options)}`);
  const rssOk = rss !== undefined && rss < RSS_TARGET_BYTES;
  out(
    `  ${verdict(rssOk)}  peak RSS < 300 MB at 10,000 wallets           ` +
      `measured ${rss === undefined ? "—" : `${Math.round(rss / MB)} MB`}` +
      (options.wallets < 10_000 ? ` at ${options.wallets} wallets (the target is for 10,000)` : ""),
  );
}

/**
 * The CPU target's line: milliseconds, as the target is set, with what makes them comparable beside
 * them (the first burst or a warm one, the claim's multiple of its I/O floor measured in this run).
 */
export function cpuVerdict(
  keeper: PhaseResult,
  floors: readonly IoPartCosts[],
  options: BenchOptions,
): string {
  const head = `keeper CPU a claim <= ${CPU_TARGET_MS_A_CLAIM} ms (in all)`.padEnd(43);
  if (!keeper.cpu) return `MISS  ${head}  measured — (no claim burst)`;
  const perClaim = keeper.cpu.burstCpuMs / keeper.cpu.claims;
  const burst =
    options.warmUpClaims === 0
      ? "the process's first burst"
      : options.warmUpGapSeconds > 0
        ? `a second burst, ${options.warmUpGapSeconds} s after the first`
        : "a second burst";
  const multiple = timesFloor(perClaim, floors);
  const floor =
    multiple === undefined ? "" : `; ${multiple} its I/O alone, ${meanFloor(floors)?.toFixed(2)} ms this run`;
  return `${perClaim <= CPU_TARGET_MS_A_CLAIM ? "PASS" : "MISS"}  ${head}  measured ${perClaim.toFixed(1)} ms (${burst}${floor})`;
}
