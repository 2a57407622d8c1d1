import { describe, expect, it } from "vitest";
import { msUntilNextTick } from "../../../bench/options.js";
import { SweepProgress } from "../../../bench/stats.js";

describe("the bench's wait for a gap between sweeps", () => {
  const minute = Date.UTC(2026, 10, 27, 22, 0, 0);

  it("finds the next tick of a cron every minute, every few seconds, and every few minutes", () => {
    expect(msUntilNextTick(60, minute + 42_500)).toBe(17_500);
    expect(msUntilNextTick(60, minute)).toBe(60_000);
    expect(msUntilNextTick(15, minute + 16_000)).toBe(14_000);
    // */45 fires at :00 and :45 of each minute: from :50 the next is the minute's :00.
    expect(msUntilNextTick(45, minute + 50_000)).toBe(10_000);
    expect(msUntilNextTick(300, minute + 60_000)).toBe(240_000);
  });

  it("times a sweep from its first positions read to its latest", () => {
    const progress = new SweepProgress(2);
    progress.add([
      [1_000, 0, 0, 200],
      [1_400, 0, 1, 200],
      [9_000, 0, 0, 200],
    ]);
    expect(progress.sweepMs(1)).toBe(400);
    expect(progress.sweepMs(2)).toBe(0);
    expect(progress.polled(2)).toBe(1);
  });
});
