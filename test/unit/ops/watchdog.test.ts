import { describe, expect, it } from "vitest";
import { Watchdog } from "../../../src/ops/watchdog.js";

function clocked() {
  const clock = { nowMs: 0 };
  return { clock, watchdog: new Watchdog(() => clock.nowMs) };
}

describe("Watchdog", () => {
  it.each([
    ["just registered", 0, true],
    ["one interval late", 1_000, true],
    ["exactly two intervals", 2_000, true],
    ["past two intervals", 2_001, false],
  ])("a loop %s is %s", (_case, elapsedMs, ok) => {
    const { clock, watchdog } = clocked();
    watchdog.register("scheduler", 1_000);
    clock.nowMs = elapsedMs;
    expect(watchdog.check().ok).toBe(ok);
  });

  it("recovers when the loop stamps again", () => {
    const { clock, watchdog } = clocked();
    watchdog.register("scheduler", 1_000);
    clock.nowMs = 5_000;
    expect(watchdog.check()).toEqual({
      ok: false,
      detail: "scheduler last ran 5000 ms ago (interval 1000 ms)",
    });
    watchdog.stamp("scheduler");
    expect(watchdog.check().ok).toBe(true);
  });

  it("judges each loop by its own interval", () => {
    const { clock, watchdog } = clocked();
    watchdog.register("fast", 100);
    watchdog.register("slow", 60_000);
    clock.nowMs = 1_000;
    watchdog.stamp("fast");
    clock.nowMs = 1_150;
    expect(watchdog.check().ok).toBe(true);
    clock.nowMs = 1_500;
    expect(watchdog.check().detail).toMatch(/^fast last ran 500 ms ago/);
  });

  it("stops judging an unregistered loop", () => {
    const { clock, watchdog } = clocked();
    watchdog.register("worker", 1_000);
    watchdog.unregister("worker");
    clock.nowMs = 10_000;
    expect(watchdog.check()).toEqual({ ok: true, detail: "0 loops running" });
  });

  it("refuses a stamp for a loop it does not know, and a non-positive interval", () => {
    const { watchdog } = clocked();
    expect(() => watchdog.stamp("nope")).toThrow(/not registered/);
    expect(() => watchdog.register("bad", 0)).toThrow(RangeError);
  });
});
