import { describe, expect, it } from "vitest";
import {
  CLAIM_IO,
  formatIoFloor,
  ioFloorPerClaim,
  medianParts,
  timesFloor,
} from "../../../bench/io-floor.js";

describe("a claim's I/O floor", () => {
  const parts = { jobMs: 0.1, commandMs: 0.015, requestMs: 0.08 };

  it("prices a claim's jobs, commands and requests at what each costs alone", () => {
    // 2 × 0.1 + 18 × 0.015 + 5.5 × 0.08 = 0.2 + 0.27 + 0.44
    expect(ioFloorPerClaim(parts)).toBeCloseTo(
      CLAIM_IO.jobs * 0.1 + CLAIM_IO.commands * 0.015 + CLAIM_IO.requests * 0.08,
      10,
    );
    expect(ioFloorPerClaim(parts)).toBeCloseTo(0.91, 10);
    expect(formatIoFloor(parts)).toBe(
      "0.91 ms a claim (a BullMQ job 0.100 ms, a Redis command 0.015 ms, an HTTP request 0.080 ms)",
    );
  });

  it("takes each part's median over the rounds, apart from the others", () => {
    const median = medianParts([
      { jobMs: 0.3, commandMs: 0.01, requestMs: 0.1 },
      { jobMs: 0.1, commandMs: 0.03, requestMs: 0.2 },
      { jobMs: 0.2, commandMs: 0.02, requestMs: 0.9 },
    ]);
    expect(median).toEqual({ jobMs: 0.2, commandMs: 0.02, requestMs: 0.2 });
    expect(medianParts([parts, { jobMs: 0.3, commandMs: 0.025, requestMs: 0.11 }]).jobMs).toBeCloseTo(
      0.2,
      10,
    );
    expect(() => medianParts([])).toThrow(/at least one measured round/);
  });

  it("says a claim's CPU as a multiple of the mean floor, and nothing without one", () => {
    const slower = { jobMs: 0.2, commandMs: 0.03, requestMs: 0.16 }; // 1.82 ms a claim
    // The mean of 0.91 and 1.82 is 1.365; 6.8 / 1.365 = 4.98
    expect(timesFloor(6.8, [parts, slower])).toBe("5.0x");
    expect(timesFloor(6.8, [parts])).toBe("7.5x");
    expect(timesFloor(7.2, [])).toBeUndefined();
    expect(timesFloor(7.2, [{ jobMs: 0, commandMs: 0, requestMs: 0 }])).toBeUndefined();
  });
});
