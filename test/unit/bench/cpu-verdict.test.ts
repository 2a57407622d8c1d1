import { describe, expect, it } from "vitest";
import type { BenchOptions } from "../../../bench/options.js";
import type { PhaseResult } from "../../../bench/phase-result.js";
import { cpuVerdict } from "../../../bench/report.js";

describe("the CPU target's line", () => {
  const floor = { jobMs: 0.1, commandMs: 0.015, requestMs: 0.08 }; // 0.91 ms a claim
  const first = { warmUpClaims: 0 } as BenchOptions;
  const burst = (burstCpuMs: number) => ({ cpu: { claims: 200, burstMs: 3_000, burstCpuMs } }) as PhaseResult;

  it("passes at 5 ms a claim or less, and says which burst it measured and its multiple of the floor", () => {
    expect(cpuVerdict(burst(1_000), [floor], first)).toBe(
      "PASS  keeper CPU a claim <= 5 ms (in all)          measured 5.0 ms (the process's first burst; 5.5x its I/O alone, 0.91 ms this run)",
    );
    expect(cpuVerdict(burst(1_002), [floor], { warmUpClaims: 200 } as BenchOptions)).toMatch(
      /^MISS .* measured 5\.0 ms \(a second burst; 5\.5x its I\/O alone/,
    );
    const later = { warmUpClaims: 200, warmUpGapSeconds: 600 } as BenchOptions;
    expect(cpuVerdict(burst(900), [floor], later)).toMatch(
      /^PASS .* measured 4\.5 ms \(a second burst, 600 s after the first; 4\.9x its I\/O alone/,
    );
  });

  it("still judges the milliseconds when no floor was measured, and misses without a burst", () => {
    expect(cpuVerdict(burst(1_400), [], first)).toMatch(
      /^MISS .* measured 7\.0 ms \(the process's first burst\)$/,
    );
    expect(cpuVerdict({} as PhaseResult, [floor], first)).toMatch(/^MISS .*no claim burst/);
  });
});
