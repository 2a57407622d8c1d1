import { describe, expect, it } from "vitest";
import type { ConfiguredStrategy } from "../../../../src/config/load-config.js";
import { gridPoints, parseGrid, strategyAt } from "../../../../src/keeper/replay/grid.js";
import { exitRules } from "../../../../strategies/exit-rules/index.js";
import { builtInStrategies } from "../../../../strategies/index.js";

const configured: ConfiguredStrategy[] = [
  {
    index: 0,
    name: "exit-rules",
    strategy: exitRules as ConfiguredStrategy["strategy"],
    config: exitRules.configSchema.parse({
      takeProfitPct: 50,
      confirmPolls: 2,
      overrides: [{ match: { marketId: "m-1" }, rules: { takeProfitPct: 5 } }],
    }),
  },
];

describe("replay --grid", () => {
  it("every combination, the first axis slowest, values as given", () => {
    const axes = parseGrid(["takeProfitPct=10,20.5", "priceBasis=mark,realizable"]);
    expect(gridPoints(axes)).toEqual([
      [
        ["takeProfitPct", 10],
        ["priceBasis", "mark"],
      ],
      [
        ["takeProfitPct", 10],
        ["priceBasis", "realizable"],
      ],
      [
        ["takeProfitPct", 20.5],
        ["priceBasis", "mark"],
      ],
      [
        ["takeProfitPct", 20.5],
        ["priceBasis", "realizable"],
      ],
    ]);
  });

  it("sets the point over the configured global rules and keeps the overrides", () => {
    const at = strategyAt(
      [
        ["takeProfitPct", 20],
        ["stopLossPct", 5],
      ],
      configured,
      builtInStrategies,
    );
    expect(at.config).toMatchObject({
      takeProfitPct: 20,
      stopLossPct: 5,
      confirmPolls: 2,
      overrides: [{ match: { marketId: "m-1" }, rules: { takeProfitPct: 5 } }],
    });
    expect(strategyAt([["stopLossPct", 5]], [], builtInStrategies).config).toMatchObject({
      stopLossPct: 5,
      overrides: [],
    });
  });

  it("refuses what is not key=values, a key twice, too many points, and what exit-rules refuses", () => {
    expect(() => parseGrid(["takeProfitPct"])).toThrow(/--grid: takeProfitPct: expected key=value,value/);
    expect(() => parseGrid(["takeProfitPct=1,,2"])).toThrow(/--grid: takeProfitPct=1,,2: expected key=value/);
    expect(() => parseGrid(["a=1", "a=2"])).toThrow("--grid: a is given twice");
    const many = Array.from({ length: 40 }, (_, i) => i + 1).join(",");
    expect(() => parseGrid([`takeProfitPct=${many}`, `stopLossPct=${many}`])).toThrow(
      "--grid: 1600 combinations; at most 1000",
    );
    expect(() => strategyAt([["takeProfitPct", "x"]], configured, builtInStrategies)).toThrow(
      "--grid takeProfitPct=x: exit-rules takeProfitPct: expected a number between 0 and 10000",
    );
    expect(() => strategyAt([["takeProfitPcnt", 10]], configured, builtInStrategies)).toThrow(
      "--grid: no strategy takes every one of takeProfitPcnt as a setting",
    );
    // The strategy varied is the one whose settings the keys are: auto-claim's minimum is not exit-rules'.
    expect(strategyAt([["minPayoutUsd", 2]], configured, builtInStrategies).name).toBe("auto-claim");
  });
});
