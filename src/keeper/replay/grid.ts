import { exitRules, STRATEGY_NAME } from "../../../strategies/exit-rules/index.js";
import { formatIssues } from "../../config/format-issues.js";
import type { ConfiguredStrategy } from "../../config/load-config.js";
import { UsageError } from "../../core/errors.js";

/** One axis of a grid: `takeProfitPct=10,20,30` is the key and its values, in the order given. */
export interface GridAxis {
  readonly key: string;
  readonly values: readonly (number | string)[];
}

/** One combination of a grid, the keys in the order the axes were given. */
export type GridPoint = ReadonlyArray<readonly [string, number | string]>;

const AXIS = /^([A-Za-z][A-Za-z0-9]*)=([^=]+)$/;
/** Combinations past this are refused: a typo should not start hours of replay. */
export const MAX_GRID_POINTS = 1_000;

/** `--grid` words as axes; a word that is not `key=v1,v2,...` is refused naming it. */
export function parseGrid(words: readonly string[]): GridAxis[] {
  const axes: GridAxis[] = [];
  for (const word of words) {
    const match = AXIS.exec(word);
    const values = match?.[2]?.split(",") ?? [];
    if (!match || values.some((v) => v.trim() === ""))
      throw new UsageError(`--grid: ${word}: expected key=value,value,... such as takeProfitPct=10,20,30`);
    const key = match[1] ?? "";
    if (axes.some((axis) => axis.key === key)) throw new UsageError(`--grid: ${key} is given twice`);
    axes.push({ key, values: values.map((v) => (/^-?\d+(\.\d+)?$/.test(v) ? Number(v) : v)) });
  }
  const points = axes.reduce((n, axis) => n * axis.values.length, 1);
  if (points > MAX_GRID_POINTS)
    throw new UsageError(`--grid: ${points} combinations; at most ${MAX_GRID_POINTS}`);
  return axes;
}

/** Every combination, the first axis slowest: `a=1,2 b=3,4` gives 1 3, 1 4, 2 3, 2 4. */
export function gridPoints(axes: readonly GridAxis[]): GridPoint[] {
  let points: GridPoint[] = [[]];
  for (const axis of axes)
    points = points.flatMap((point) => axis.values.map((value) => [...point, [axis.key, value] as const]));
  return points;
}

/**
 * exit-rules configured at one grid point: the configured exit-rules (its overrides too) with the
 * point's global rules set over it, checked by the strategy's own schema; without exit-rules in the
 * config, the point's rules alone. A value the schema refuses is a usage error naming it.
 */
export function exitRulesAt(point: GridPoint, configured: readonly ConfiguredStrategy[]): ConfiguredStrategy {
  const base = configured.find((s) => s.name === STRATEGY_NAME && s.module === undefined);
  const raw = {
    ...((base?.config as Record<string, unknown> | undefined) ?? {}),
    ...Object.fromEntries(point),
  };
  const parsed = exitRules.configSchema.safeParse(raw);
  if (!parsed.success) {
    const at = point.map(([k, v]) => `${k}=${v}`).join(" ");
    throw new UsageError(`--grid ${at}: exit-rules ${formatIssues(parsed.error).join("; ")}`);
  }
  return {
    ...(base?.index === undefined ? {} : { index: base.index }),
    name: STRATEGY_NAME,
    strategy: exitRules as ConfiguredStrategy["strategy"],
    config: parsed.data,
  };
}
