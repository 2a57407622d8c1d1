/**
 * The keeper's CPU per claim, from the cumulative CPU time its process reports every half second:
 * over the burst (the sample's resolution to its last claim confirmed), in all and per claim, and
 * above what the keeper spends at rest (the quiet time at the end: sweeps and the watcher go on
 * during a burst too, so the total per claim counts their share as well).
 */

/** [epoch ms, CPU microseconds used so far]: one reading per progress message. */
export type CpuReading = readonly [number, number];

export interface ClaimCpu {
  readonly claims: number;
  readonly burstMs: number;
  /** CPU ms the process used over the burst. */
  readonly burstCpuMs: number;
  /** CPU ms a second at rest (1,000: one core busy); undefined without a quiet window. */
  readonly restCpuMsPerSecond?: number;
}

/** CPU microseconds used by `atMs`, linearly between the readings around it; undefined outside them. */
export function cpuAt(readings: readonly CpuReading[], atMs: number): number | undefined {
  for (let i = 1; i < readings.length; i++) {
    const [t0, c0] = readings[i - 1] as CpuReading;
    const [t1, c1] = readings[i] as CpuReading;
    if (atMs < t0 || atMs > t1) continue;
    return t1 === t0 ? c1 : c0 + ((c1 - c0) * (atMs - t0)) / (t1 - t0);
  }
  return undefined;
}

export function claimCpu(
  readings: readonly CpuReading[],
  burst: { fromMs: number; toMs: number; claims: number },
  rest?: { fromMs: number; toMs: number },
): ClaimCpu | undefined {
  const from = cpuAt(readings, burst.fromMs);
  const to = cpuAt(readings, burst.toMs);
  if (from === undefined || to === undefined || burst.claims === 0) return undefined;
  const restFrom = rest && cpuAt(readings, rest.fromMs);
  const restTo = rest && cpuAt(readings, rest.toMs);
  const restCpuMsPerSecond =
    rest && restFrom !== undefined && restTo !== undefined && rest.toMs > rest.fromMs
      ? (restTo - restFrom) / (rest.toMs - rest.fromMs)
      : undefined;
  return {
    claims: burst.claims,
    burstMs: burst.toMs - burst.fromMs,
    burstCpuMs: (to - from) / 1000,
    ...(restCpuMsPerSecond === undefined ? {} : { restCpuMsPerSecond }),
  };
}

/** Keeper CPU ms a claim over the burst, in all and above the rest ("—" where unknown). */
export function claimCpuCell(cpu: ClaimCpu | undefined): string {
  if (!cpu) return "—";
  const perClaim = `${(cpu.burstCpuMs / cpu.claims).toFixed(1)} ms`;
  if (cpu.restCpuMsPerSecond === undefined) return `${perClaim} / —`;
  const above = (cpu.burstCpuMs - cpu.restCpuMsPerSecond * (cpu.burstMs / 1000)) / cpu.claims;
  return `${perClaim} / ${above.toFixed(1)} ms`;
}

/** "2,310 ms over 3.1 s (74 % of a core): 45.3 ms a claim; 4.1 ms a claim above the rest (60 % of a core)" */
export function formatClaimCpu(cpu: ClaimCpu | undefined): string {
  if (!cpu) return "—";
  const core = (cpuMs: number, ms: number) => `${Math.round((cpuMs / ms) * 100)} % of a core`;
  const perClaim = cpu.burstCpuMs / cpu.claims;
  const head = `${perClaim.toFixed(1)} ms a claim (${Math.round(cpu.burstCpuMs)} ms over ${(cpu.burstMs / 1000).toFixed(1)} s, ${core(cpu.burstCpuMs, cpu.burstMs)})`;
  if (cpu.restCpuMsPerSecond === undefined) return head;
  const above = (cpu.burstCpuMs - cpu.restCpuMsPerSecond * (cpu.burstMs / 1000)) / cpu.claims;
  return `${head}; above the rest ${above.toFixed(1)} ms (rest: ${Math.round(cpu.restCpuMsPerSecond / 10)} % of a core)`;
}

/**
 * "main thread 4.6 ms a claim, V8's helper threads 1.3 ms (garbage collection, compiling)": how the
 * burst's CPU splits between the processes' main threads (`mainThread`, read over the same burst) and
 * the rest of the process. The helpers' part is large in the first burst a process sees, when V8
 * compiles the claim's code. Undefined without main-thread readings over the burst.
 */
export function formatThreadSplit(all: ClaimCpu, mainThread: ClaimCpu | undefined): string | undefined {
  if (!mainThread || mainThread.claims !== all.claims) return undefined;
  const perClaim = (cpuMs: number) => `${(cpuMs / all.claims).toFixed(1)} ms`;
  const helpers = Math.max(0, all.burstCpuMs - mainThread.burstCpuMs);
  return `main thread ${perClaim(mainThread.burstCpuMs)} a claim, V8's helper threads ${perClaim(helpers)} (garbage collection, compiling)`;
}

/**
 * "sweep 2: 3.41 ms a poll (2,730 ms over 800 polls in 11.2 s, 24 % of a core)": the keeper's CPU
 * over the middle 80 % of a sweep (from its 10th to its 90th percentile wallet's poll, so that a
 * holder polled early by the watcher or a straggler does not stretch it), divided by the positions
 * reads answered in that time (the watcher's cycles then counted in). Undefined when the readings
 * do not cover it.
 */
export function formatSweepCpu(
  readings: readonly CpuReading[],
  sweepIndex: number,
  sweepPollTimes: readonly number[],
  allPollTimes: readonly number[],
): string | undefined {
  const sorted = [...sweepPollTimes].sort((a, b) => a - b);
  const fromMs = sorted[Math.floor(sorted.length * 0.1)];
  const toMs = sorted[Math.floor(sorted.length * 0.9)];
  if (fromMs === undefined || toMs === undefined || toMs <= fromMs) return undefined;
  const from = cpuAt(readings, fromMs);
  const to = cpuAt(readings, toMs);
  const polls = allPollTimes.filter((t) => t >= fromMs && t < toMs).length;
  if (from === undefined || to === undefined || polls === 0) return undefined;
  const cpuMs = (to - from) / 1000;
  const ms = toMs - fromMs;
  const core = Math.round((cpuMs / ms) * 100);
  return `sweep ${sweepIndex}: ${(cpuMs / polls).toFixed(2)} ms a poll (${Math.round(cpuMs)} ms over ${polls} polls in ${(ms / 1000).toFixed(1)} s, ${core} % of a core)`;
}
