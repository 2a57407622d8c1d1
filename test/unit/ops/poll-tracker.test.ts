import { describe, expect, it } from "vitest";
import { PollTracker, pollFreshness, summarizePolls } from "../../../src/ops/poll-tracker.js";

describe("PollTracker", () => {
  it("keeps the latest success and ignores one recorded out of order", () => {
    const tracker = new PollTracker(() => 0);
    tracker.recordSuccess("W1", 2_000);
    tracker.recordSuccess("W1", 1_000);
    expect(tracker.lastSuccess("W1")).toBe(2_000);
  });

  it.each([
    ["all fresh", [5_000, 9_000], 10_000, 6_000, true, "2 wallets polled within 6000 ms"],
    ["one stale", [1_000, 9_000], 10_000, 6_000, false, "1 of 2 wallets stale (W0)"],
    ["both stale", [1_000, 2_000], 10_000, 6_000, false, "2 of 2 wallets stale (W0, W1)"],
  ])("freshness: %s", (_case, polls, nowMs, staleMs, ok, detail) => {
    let clock = 0;
    const tracker = new PollTracker(() => clock);
    polls.forEach((atMs, index) => {
      tracker.recordSuccess(`W${index}`, atMs);
    });
    clock = nowMs;
    expect(tracker.freshness(staleMs)).toEqual({ ok, detail });
  });

  it("makes a wallet that is expected but never polled stale after the threshold", () => {
    let clock = 1_000;
    const tracker = new PollTracker(() => clock);
    tracker.expect(["W1"]);
    clock = 2_000;
    expect(tracker.freshness(5_000).ok).toBe(true);
    clock = 7_000;
    expect(tracker.freshness(5_000)).toEqual({ ok: false, detail: "1 of 1 wallets stale (W1)" });
  });

  it("forgets a wallet that is no longer configured", () => {
    const tracker = new PollTracker(() => 100_000);
    tracker.recordSuccess("W1", 0);
    tracker.forget("W1");
    expect(tracker.freshness(1_000).ok).toBe(true);
  });
});

describe("summarizePolls", () => {
  it("names the oldest reference time and lists stale wallets oldest first", () => {
    const summary = summarizePolls(
      [
        { wallet: "A", lastSuccessMs: 3_000, sinceMs: 0 },
        { wallet: "B", lastSuccessMs: undefined, sinceMs: 1_000 },
        { wallet: "C", lastSuccessMs: 9_000, sinceMs: 0 },
      ],
      10_000,
      5_000,
    );
    expect(summary.oldestMs).toBe(1_000);
    expect(summary.stale.map((time) => time.wallet)).toEqual(["B", "A"]);
  });

  it("is fresh with no wallets at all", () => {
    expect(pollFreshness([], 0, 1).ok).toBe(true);
  });
});
