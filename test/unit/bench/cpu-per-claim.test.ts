import { describe, expect, it } from "vitest";
import {
  claimCpu,
  claimCpuCell,
  cpuAt,
  formatSweepCpu,
  formatThreadSplit,
} from "../../../bench/cpu-per-claim.js";

describe("the keeper's CPU per claim", () => {
  // Readings every 500 ms: 100 ms of CPU a second at rest, 600 a second from 2.0 s to 4.0 s.
  const readings: [number, number][] = [
    [1_000, 0],
    [1_500, 50_000],
    [2_000, 100_000],
    [2_500, 400_000],
    [3_000, 700_000],
    [3_500, 1_000_000],
    [4_000, 1_300_000],
    [4_500, 1_350_000],
    [5_000, 1_400_000],
  ];

  it("reads the CPU used at any time between two readings, and nothing outside them", () => {
    expect(cpuAt(readings, 1_250)).toBe(25_000);
    expect(cpuAt(readings, 2_750)).toBe(550_000);
    expect(cpuAt(readings, 999)).toBeUndefined();
    expect(cpuAt(readings, 5_001)).toBeUndefined();
  });

  it("divides the burst's CPU by its claims, and takes out what the rest would have spent", () => {
    const cpu = claimCpu(
      readings,
      { fromMs: 2_000, toMs: 4_000, claims: 10 },
      { fromMs: 4_000, toMs: 5_000 },
    );
    expect(cpu).toEqual({ claims: 10, burstMs: 2_000, burstCpuMs: 1_200, restCpuMsPerSecond: 100 });
    // 120 ms a claim in all; (1,200 - 100 × 2) / 10 = 100 ms above the rest.
    expect(claimCpuCell(cpu)).toBe("120.0 ms / 100.0 ms");
    expect(claimCpu(readings, { fromMs: 2_000, toMs: 9_000, claims: 10 })).toBeUndefined();
    expect(claimCpuCell(claimCpu(readings, { fromMs: 2_000, toMs: 4_000, claims: 4 }))).toBe("300.0 ms / —");
  });

  it("a sweep's CPU a poll: over its middle 80 %, divided by every poll answered then", () => {
    const sweep = [1_000, 1_400, 1_800, 2_200, 2_600, 3_000, 3_400, 3_800, 4_200, 4_600];
    // From the 2nd wallet's poll (1,400) to the 10th's (4,600): 40,000 to 1,360,000 µs of CPU, and
    // nine polls in that span, a targeted one at 3,000 among them.
    expect(
      formatSweepCpu(
        readings,
        2,
        sweep,
        [...sweep, 3_000].sort((a, b) => a - b),
      ),
    ).toBe("sweep 2: 146.67 ms a poll (1320 ms over 9 polls in 3.2 s, 41 % of a core)");
    // A sweep that outlasts the readings has no figure.
    const late = sweep.map((t) => t + 1_000);
    expect(formatSweepCpu(readings, 2, late, late)).toBeUndefined();
    expect(formatSweepCpu(readings, 1, [2_000], [2_000])).toBeUndefined();
  });

  it("splits a burst's CPU between the main thread and V8's helper threads", () => {
    const all = claimCpu(readings, { fromMs: 2_000, toMs: 4_000, claims: 10 });
    // The main thread: 450 ms of CPU a second through the burst, of the process's 600.
    const mainThread: [number, number][] = [
      [1_000, 0],
      [2_000, 90_000],
      [3_000, 540_000],
      [4_000, 990_000],
      [5_000, 1_060_000],
    ];
    const main = claimCpu(mainThread, { fromMs: 2_000, toMs: 4_000, claims: 10 });
    expect(all && formatThreadSplit(all, main)).toBe(
      "main thread 90.0 ms a claim, V8's helper threads 30.0 ms (garbage collection, compiling)",
    );
    // No main-thread readings over the burst (an older keeper process): nothing to say.
    expect(
      all && formatThreadSplit(all, claimCpu(mainThread, { fromMs: 2_000, toMs: 6_000, claims: 10 })),
    ).toBe(undefined);
  });
});
