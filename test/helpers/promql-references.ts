import { createMetrics } from "../../src/ops/metrics.js";

/**
 * What a PromQL expression reads: the series names it selects, the label names of its selectors'
 * matchers, and the label names of its grouping clauses (`by`, `without`, `on`, `ignoring`,
 * `group_left`, `group_right`). A plain scan, not a parser: enough for the dashboard's and the alert
 * rules' expressions, whose syntax promtool checks separately.
 */
export interface PromqlReferences {
  readonly selectors: ReadonlyArray<{ name: string; labels: string[] }>;
  readonly groupingLabels: readonly string[];
}

const GROUPING = /\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g;
const KEYWORDS = new Set(["and", "or", "unless", "bool", "offset", "inf", "nan"]);

/** Grafana's interval variables, replaced by a duration so the expression is plain PromQL. */
export function withoutGrafanaVariables(expr: string): string {
  return expr.replace(/\$__(?:rate_interval|interval|range)\b/g, "5m");
}

export function promqlReferences(rawExpr: string): PromqlReferences {
  const expr = withoutGrafanaVariables(rawExpr);
  const groupingLabels = [...expr.matchAll(GROUPING)].flatMap((m) =>
    (m[1] ?? "")
      .split(",")
      .map((label) => label.trim())
      .filter(Boolean),
  );
  // Blank out what holds no series name: grouping clauses, strings inside matchers, ranges, numbers.
  const blanked = expr.replace(GROUPING, " ").replace(/\[[^\]]*\]/g, " ");
  const selectors: Array<{ name: string; labels: string[] }> = [];
  const selector = /([a-zA-Z_:][\w:]*)?\s*(\{[^}]*\})?/g;
  for (const match of blanked.matchAll(selector)) {
    const [whole, name, matchers] = match;
    if (!whole?.trim()) continue;
    const after = blanked.slice((match.index ?? 0) + whole.length);
    if (name !== undefined) {
      // A function or an aggregation: its name is followed by its arguments.
      if (matchers === undefined && /^\s*\(/.test(after)) continue;
      if (KEYWORDS.has(name.toLowerCase())) continue;
      // Part of a number (`1e3`) or a duration (`offset 5m`).
      const before = blanked[(match.index ?? 0) - 1] ?? " ";
      if (/[\d.]/.test(before)) continue;
    }
    const labels = [...(matchers ?? "").matchAll(/([a-zA-Z_]\w*)\s*(?:=~|!~|!=|=)\s*"(?:[^"\\]|\\.)*"/g)].map(
      (m) => m[1] ?? "",
    );
    if (name === undefined) throw new Error(`a selector without a metric name in: ${rawExpr}`);
    selectors.push({ name, labels });
  }
  return { selectors, groupingLabels };
}

/** Labels every scraped series carries: Prometheus adds them from the scrape target. */
const TARGET_LABELS = ["job", "instance"];

/** Series name to the labels it may carry, for every series Keeper's registry exposes. */
export function keeperSeriesLabels(): Map<string, Set<string>> {
  // As the keeper creates them (src/app/start-keeper.ts and its roles): its options change values, not which metrics
  // exist; process metrics are on by default there too.
  const metrics = createMetrics();
  const series = new Map<string, Set<string>>();
  for (const metric of metrics.registry.getMetricsAsArray()) {
    const { name, type } = metric;
    const labelNames = (metric as unknown as { labelNames?: readonly string[] }).labelNames ?? [];
    const labels = [...labelNames, ...TARGET_LABELS];
    series.set(name, new Set(labels));
    if (String(type) === "histogram") {
      series.set(`${name}_bucket`, new Set([...labels, "le"]));
      series.set(`${name}_sum`, new Set(labels));
      series.set(`${name}_count`, new Set(labels));
    }
  }
  // Prometheus's own per-target series.
  series.set("up", new Set(TARGET_LABELS));
  return series;
}

/** Every way `expr` reads a series or label Keeper does not expose; empty when all exist. */
export function unknownReferences(expr: string, series: ReadonlyMap<string, ReadonlySet<string>>): string[] {
  const { selectors, groupingLabels } = promqlReferences(expr);
  const problems: string[] = [];
  for (const { name, labels } of selectors) {
    const known = series.get(name);
    if (!known) {
      problems.push(`${name}: no such metric in Keeper's registry`);
      continue;
    }
    for (const label of labels)
      if (!known.has(label)) problems.push(`${name}{${label}}: no such label on ${name}`);
    for (const label of groupingLabels)
      if (!known.has(label)) problems.push(`${name} grouped by ${label}: no such label on ${name}`);
  }
  if (selectors.length === 0) problems.push(`reads no metric: ${expr}`);
  return problems;
}
