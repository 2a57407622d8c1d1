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

/** The settings a strategy takes, from its schema's object shape (none when the schema has no shape). */
function settingKeys(strategy: ConfiguredStrategy["strategy"]): ReadonlySet<string> {
  const shape = (strategy.configSchema as { shape?: Record<string, unknown> }).shape;
  return new Set(shape ? Object.keys(shape) : []);
}

/**
 * The strategy a grid varies, configured at one grid point. It is the configured strategy whose
 * settings take every grid key (`takeProfitPct` names exit-rules' take-profit, say), its settings
 * (overrides too) with the point's set over them; with none configured, the one built-in that takes
 * them, with the point's settings alone. Checked by the strategy's own schema: a value it refuses,
 * a key no strategy takes or one several configured strategies take is a usage error naming it.
 */
export function strategyAt(
  point: GridPoint,
  configured: readonly ConfiguredStrategy[],
  builtIns: ReadonlyMap<string, ConfiguredStrategy["strategy"]>,
): ConfiguredStrategy {
  const keys = point.map(([key]) => key);
  const takesAll = (strategy: ConfiguredStrategy["strategy"]) => {
    const known = settingKeys(strategy);
    return keys.every((key) => known.has(key));
  };
  const fromConfig = configured.filter((s) => takesAll(s.strategy));
  if (fromConfig.length > 1)
    throw new UsageError(
      `--grid: ${keys.join(", ")} are settings of several configured strategies (${fromConfig.map((s) => s.name).join(", ")}); replay a config with one of them`,
    );
  const base = fromConfig[0];
  const builtIn = [...builtIns].filter(([, strategy]) => takesAll(strategy));
  const [name, strategy] = base
    ? [base.name, base.strategy]
    : ((builtIn.length === 1 ? builtIn[0] : []) ?? []);
  if (name === undefined || strategy === undefined)
    throw new UsageError(`--grid: no strategy takes every one of ${keys.join(", ")} as a setting`);
  const raw = {
    ...((base?.config as Record<string, unknown> | undefined) ?? {}),
    ...Object.fromEntries(point),
  };
  const parsed = strategy.configSchema.safeParse(raw);
  if (!parsed.success) {
    const at = point.map(([k, v]) => `${k}=${v}`).join(" ");
    throw new UsageError(`--grid ${at}: ${name} ${formatIssues(parsed.error).join("; ")}`);
  }
  return {
    ...(base?.index === undefined ? {} : { index: base.index }),
    ...(base?.module === undefined ? {} : { module: base.module }),
    name,
    strategy,
    config: parsed.data,
  };
}
