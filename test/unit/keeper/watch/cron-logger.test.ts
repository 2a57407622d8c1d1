import { schedule } from "node-cron";
import { afterEach, describe, expect, it, vi } from "vitest";
import { cronLogger } from "../../../../src/keeper/watch/cron-logger.js";
import { captureLogger } from "../../../helpers/capture-logger.js";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("node-cron's messages go through Keeper's logger", () => {
  it("a tick skipped because the last one still runs is a debug line of the task, not a console warning", async () => {
    const { logger, lines } = captureLogger("debug");
    const consoleWarn = vi.spyOn(console, "warn");
    let release = () => {};
    const running = new Promise<void>((resolve) => {
      release = resolve;
    });
    const task = schedule("* * * * * *", () => running, {
      name: "slow",
      noOverlap: true,
      logger: cronLogger(logger, "keeper-slow"),
    });
    try {
      await vi.waitFor(() => expect(lines().some((l) => /overlap/.test(String(l.msg)))).toBe(true), {
        timeout: 10_000,
        interval: 100,
      });
    } finally {
      release();
      await task.destroy();
    }
    const skipped = lines().find((l) => /overlap/.test(String(l.msg)));
    expect(skipped).toMatchObject({ level: "debug", cron: "keeper-slow" });
    expect(consoleWarn).not.toHaveBeenCalled();
  });

  it("a missed execution stays a warning; an error names its cause", () => {
    const { logger, lines } = captureLogger("debug");
    const log = cronLogger(logger, "keeper-x");
    log.warn("missed execution at now! Possible blocking IO");
    log.error("Task failed with error!", new Error("boom"));
    expect(lines()).toMatchObject([
      { level: "warn", cron: "keeper-x", msg: "missed execution at now! Possible blocking IO" },
      { level: "error", cron: "keeper-x", msg: "Task failed with error!: boom" },
    ]);
  });
});
