import { describe, expect, it } from "vitest";
import {
  evaluateProtections,
  isHeldBackByBreakers,
  type ProtectionsConfig,
  type RecordedExit,
  realizedPnlMicroUsd,
  utcDayStart,
  utcDayTag,
} from "../../../../src/keeper/operator/circuit-breakers.js";

// 2026-01-02T12:00:00Z
const NOW = 1_767_355_200;
const DAY_START = 1_767_312_000;

let counter = 0;
function exit(at: number, pnlUsd: number | undefined, isStopLoss = false): RecordedExit {
  counter += 1;
  return {
    key: `close-${counter}`,
    at,
    pnlMicroUsd: pnlUsd === undefined ? undefined : String(Math.round(pnlUsd * 1_000_000)),
    isStopLoss,
  };
}

function run(config: ProtectionsConfig, exits: RecordedExit[], resets = {}, nowSeconds = NOW) {
  return evaluateProtections({ config, exits, resets, nowSeconds });
}

describe("circuit breakers: daily realized loss", () => {
  it.each<[string, RecordedExit[], boolean, string]>([
    ["no exits", [], false, "0"],
    ["one loss below the limit", [exit(NOW - 60, -49.99)], false, "49990000"],
    ["one loss at the limit", [exit(NOW - 60, -50)], true, "50000000"],
    ["losses that add up past the limit", [exit(NOW - 600, -30), exit(NOW - 60, -25)], true, "55000000"],
    ["a win offsets a loss (net)", [exit(NOW - 600, -60), exit(NOW - 60, 20)], false, "40000000"],
    ["yesterday's losses do not count", [exit(DAY_START - 1, -500), exit(NOW - 60, -10)], false, "10000000"],
    ["the first second of the day counts", [exit(DAY_START, -50)], true, "50000000"],
    ["an exit with unknown pnl counts nothing", [exit(NOW - 60, undefined)], false, "0"],
    ["a net gain is no loss", [exit(NOW - 60, 100)], false, "0"],
  ])("%s", (_label, exits, tripped, lossMicro) => {
    const result = run({ dailyLossLimitUsd: 50 }, exits);
    const daily = result.breakers.find((b) => b.name === "daily_loss");
    expect(daily?.isTripped).toBe(tripped);
    expect(result.dailyLossMicroUsd.toString()).toBe(lossMicro);
    expect(result.tripped).toEqual(tripped ? ["daily_loss"] : []);
    if (tripped) expect(daily?.until).toBe(DAY_START + 86_400);
  });

  it("trips at the exit that reached the limit and resets by itself at the next UTC midnight", () => {
    const exits = [exit(NOW - 600, -30), exit(NOW - 60, -25), exit(NOW - 30, -5)];
    const today = run({ dailyLossLimitUsd: 50 }, exits).breakers[0];
    expect(today).toMatchObject({ isTripped: true, since: NOW - 60, until: DAY_START + 86_400 });
    const tomorrow = run({ dailyLossLimitUsd: 50 }, exits, {}, DAY_START + 86_400);
    expect(tomorrow.breakers[0]?.isTripped).toBe(false);
  });

  it("a reset by hand forgets the exits confirmed up to it", () => {
    const exits = [exit(NOW - 600, -60)];
    expect(run({ dailyLossLimitUsd: 50 }, exits, { daily_loss: NOW - 600 }).tripped).toEqual([]);
    expect(run({ dailyLossLimitUsd: 50 }, exits, { daily_loss: NOW - 601 }).tripped).toEqual(["daily_loss"]);
    // Later losses count again.
    const more = [...exits, exit(NOW - 10, -50)];
    expect(run({ dailyLossLimitUsd: 50 }, more, { daily_loss: NOW - 600 }).tripped).toEqual(["daily_loss"]);
  });

  it("off without a limit, whatever the loss", () => {
    const result = run({}, [exit(NOW - 60, -1_000)]);
    expect(result.breakers.map((b) => [b.name, b.isEnabled, b.isTripped])).toEqual([
      ["daily_loss", false, false],
      ["stop_loss_streak", false, false],
    ]);
    expect(result.isCloseAllDue).toBe(false);
  });
});

describe("circuit breakers: the close-all trigger", () => {
  it.each<[string, ProtectionsConfig, number, boolean]>([
    ["below its limit", { closeAllOnDailyLossUsd: 100 }, -99, false],
    ["at its limit", { closeAllOnDailyLossUsd: 100 }, -100, true],
    [
      "independent of the daily-loss breaker",
      { dailyLossLimitUsd: 500, closeAllOnDailyLossUsd: 100 },
      -150,
      true,
    ],
    ["off when not configured", { dailyLossLimitUsd: 50 }, -150, false],
  ])("%s", (_label, config, pnlUsd, due) => {
    expect(run(config, [exit(NOW - 60, pnlUsd)]).isCloseAllDue).toBe(due);
  });
});

describe("circuit breakers: stop-loss streak", () => {
  const config: ProtectionsConfig = {
    stopLossPause: { afterExits: 3, windowSeconds: 3_600, pauseSeconds: 7_200 },
  };
  it.each<[string, RecordedExit[], boolean, number | undefined]>([
    ["two stop-losses: not yet", [exit(NOW - 200, -1, true), exit(NOW - 100, -1, true)], false, undefined],
    [
      "three within the window",
      [exit(NOW - 3_000, -1, true), exit(NOW - 2_000, -1, true), exit(NOW - 100, -1, true)],
      true,
      NOW - 100 + 7_200,
    ],
    [
      "three, but spread wider than the window",
      [exit(NOW - 3_701, -1, true), exit(NOW - 2_000, -1, true), exit(NOW - 100, -1, true)],
      false,
      undefined,
    ],
    [
      "other exits (take-profit, close-all) do not count",
      [exit(NOW - 300, -1, true), exit(NOW - 200, 5, false), exit(NOW - 100, -1, true)],
      false,
      undefined,
    ],
    [
      "the pause ran out",
      [exit(NOW - 9_000, -1, true), exit(NOW - 8_000, -1, true), exit(NOW - 7_300, -1, true)],
      false,
      undefined,
    ],
    [
      "one more stop-loss after a pause ran out is not a streak of its own",
      [
        exit(NOW - 9_000, -1, true),
        exit(NOW - 8_000, -1, true),
        exit(NOW - 7_300, -1, true),
        exit(NOW - 10, -1, true),
      ],
      false,
      undefined,
    ],
    [
      "the latest streak decides how long it holds",
      [
        exit(NOW - 9_000, -1, true),
        exit(NOW - 8_000, -1, true),
        exit(NOW - 7_300, -1, true),
        exit(NOW - 200, -1, true),
        exit(NOW - 100, -1, true),
        exit(NOW - 10, -1, true),
      ],
      true,
      NOW - 10 + 7_200,
    ],
  ])("%s", (_label, exits, tripped, until) => {
    const streak = run(config, exits).breakers.find((b) => b.name === "stop_loss_streak");
    expect(streak?.isTripped).toBe(tripped);
    expect(streak?.until).toBe(until);
  });

  it("a reset by hand forgets the streak; new stop-losses start a new count", () => {
    const exits = [exit(NOW - 300, -1, true), exit(NOW - 200, -1, true), exit(NOW - 100, -1, true)];
    expect(run(config, exits).tripped).toEqual(["stop_loss_streak"]);
    expect(run(config, exits, { stop_loss_streak: NOW - 50 }).tripped).toEqual([]);
    expect(run(config, exits, { stop_loss_streak: NOW - 250 }).tripped).toEqual([]);
  });
});

describe("circuit breakers: what they hold back", () => {
  it.each([
    ["createTrigger", true],
    ["createRecurring", true],
    ["swap", true],
    ["claim", false],
    ["close", false],
    ["closeAll", false],
    ["cancelTrigger", false],
  ] as const)("%s held back: %s", (kind, held) => {
    expect(isHeldBackByBreakers(kind)).toBe(held);
  });
});

describe("circuit breakers: helpers", () => {
  it("days are UTC", () => {
    expect(utcDayStart(NOW)).toBe(DAY_START);
    expect(utcDayStart(DAY_START)).toBe(DAY_START);
    expect(utcDayTag(NOW)).toBe("20260102");
  });
  it.each<[string | undefined, string | undefined, string | undefined]>([
    ["7000000", "6000000", "1000000"],
    ["4000000", "6000000", "-2000000"],
    [undefined, "6000000", undefined],
    ["4000000", undefined, undefined],
    ["x", "6000000", undefined],
  ])("realized pnl of proceeds %s and cost %s is %s", (proceeds, cost, pnl) => {
    expect(realizedPnlMicroUsd(proceeds, cost)).toBe(pnl);
  });
});
