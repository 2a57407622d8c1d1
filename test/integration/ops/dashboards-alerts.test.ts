import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import {
  keeperSeriesLabels,
  promqlReferences,
  unknownReferences,
  withoutGrafanaVariables,
} from "../../helpers/promql-references.js";

/**
 * The Grafana dashboard (ops/grafana/keeper.json) and the Prometheus files (ops/prometheus/) read only
 * what Keeper exposes: every series and label their expressions name is looked up in the registry
 * createMetrics() builds, so renaming a metric or a label without updating them fails here. promtool
 * (Debian's `prometheus` package; .ci/run installs it) checks the rules' and the dashboard's PromQL and
 * the Prometheus config, and runs the rules' unit tests (test/fixtures/prometheus/alerts.test.yml).
 */
const ROOT = process.cwd();
const DASHBOARD = join(ROOT, "ops/grafana/keeper.json");
const RULES = join(ROOT, "ops/prometheus/alerts.yml");
const PROMETHEUS_CONFIG = join(ROOT, "ops/prometheus/prometheus.yml");
const RULE_TESTS = join(ROOT, "test/fixtures/prometheus/alerts.test.yml");

interface Target {
  refId: string;
  expr: string;
  datasource?: { type?: string; uid?: string };
}
interface Panel {
  id: number;
  type: string;
  title: string;
  datasource?: { type?: string; uid?: string };
  targets?: Target[];
  gridPos?: { h: number; w: number; x: number; y: number };
}
interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

const dashboard = JSON.parse(readFileSync(DASHBOARD, "utf8")) as {
  uid: string;
  title: string;
  panels: Panel[];
  templating: { list: Array<{ name: string; type: string; query: string }> };
};
const rules = (
  parseYaml(readFileSync(RULES, "utf8")) as { groups: Array<{ name: string; rules: Rule[] }> }
).groups.flatMap((group) => group.rules);
const dashboardExprs = dashboard.panels.flatMap((panel) =>
  (panel.targets ?? []).map((target) => ({
    where: `panel "${panel.title}" ${target.refId}`,
    expr: target.expr,
  })),
);
const ruleExprs = rules.map((rule) => ({ where: `alert ${rule.alert}`, expr: rule.expr }));

function promtool(...args: string[]): { status: number | null; output: string } {
  const run = spawnSync("promtool", args, { encoding: "utf8", timeout: 120_000 });
  if (run.error)
    throw new Error(
      `promtool could not run (${run.error.message}): install Debian's prometheus package (apt-get install prometheus), as .ci/run does`,
    );
  return { status: run.status, output: `${run.stdout}\n${run.stderr}` };
}

/** Grafana's reference to the dashboard's `datasource` variable (Grafana's syntax, not a JS template). */
// biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's variable syntax
const FROM_DATASOURCE_VARIABLE = { type: "prometheus", uid: "${datasource}" };

const series = keeperSeriesLabels();
const scratch = mkdtempSync(join(tmpdir(), "keeper-promtool-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("the metric check itself", () => {
  it("finds names and labels in selectors and grouping clauses, and not in functions or numbers", () => {
    const refs = promqlReferences(
      'histogram_quantile(0.95, sum by (le, endpoint) (rate(keeper_api_request_duration_seconds_bucket{endpoint!="x"}[$__rate_interval]))) / time() > 1e3',
    );
    expect(refs.selectors).toEqual([
      { name: "keeper_api_request_duration_seconds_bucket", labels: ["endpoint"] },
    ]);
    expect(refs.groupingLabels).toEqual(["le", "endpoint"]);
  });

  it("reports a renamed metric, a label the metric lacks and a grouping by a missing label", () => {
    expect(unknownReferences("sum(increase(keeper_claims_usd_total[5m]))", series)).toEqual([
      "keeper_claims_usd_total: no such metric in Keeper's registry",
    ]);
    expect(unknownReferences('keeper_policy_refusals_total{wallet="x"}', series)).toEqual([
      "keeper_policy_refusals_total{wallet}: no such label on keeper_policy_refusals_total",
    ]);
    expect(
      unknownReferences("sum by (le) (rate(keeper_confirmation_duration_seconds_count[5m]))", series),
    ).toEqual([
      "keeper_confirmation_duration_seconds_count grouped by le: no such label on keeper_confirmation_duration_seconds_count",
    ]);
    expect(unknownReferences("sum by (kind, reason) (keeper_policy_refusals_total)", series)).toEqual([]);
  });
});

describe("the Grafana dashboard", () => {
  it("reads only metrics and labels Keeper's registry has", () => {
    const problems = dashboardExprs.flatMap(({ where, expr }) =>
      unknownReferences(expr, series).map((problem) => `${where}: ${problem}`),
    );
    expect(problems).toEqual([]);
    expect(dashboardExprs.length).toBeGreaterThan(20);
  });

  it("shows what an operator looks for", () => {
    const read = new Set(
      dashboardExprs.flatMap(({ expr }) => promqlReferences(expr).selectors.map((s) => s.name)),
    );
    const wanted = [
      "keeper_transactions_total", // claims confirmed, intents by final status
      "keeper_claimed_usd_total",
      "keeper_intents_total",
      "keeper_intents_not_admitted_total",
      "keeper_policy_refusals_total",
      "keeper_confirmation_duration_seconds_bucket",
      "keeper_api_rate_limited_total",
      "keeper_api_request_duration_seconds_bucket",
      "keeper_queue_jobs",
      "keeper_stale_wallets",
      "keeper_circuit_breaker_tripped",
      "keeper_priority_fee_micro_lamports_bucket",
      "keeper_paused",
      "keeper_intents_stuck_sending",
    ];
    expect(wanted.filter((name) => !read.has(name))).toEqual([]);
  });

  it("takes its Prometheus from a datasource variable, with unique panel ids and query ids", () => {
    expect(dashboard.templating.list).toContainEqual(
      expect.objectContaining({ name: "datasource", type: "datasource", query: "prometheus" }),
    );
    const ids = dashboard.panels.map((panel) => panel.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const panel of dashboard.panels.filter((p) => p.type !== "row")) {
      expect(panel.datasource, panel.title).toEqual(FROM_DATASOURCE_VARIABLE);
      expect(panel.gridPos, panel.title).toBeDefined();
      const refIds = (panel.targets ?? []).map((t) => t.refId);
      expect(refIds.length, panel.title).toBeGreaterThan(0);
      expect(new Set(refIds).size, panel.title).toBe(refIds.length);
      for (const target of panel.targets ?? [])
        expect(target.datasource, panel.title).toEqual(FROM_DATASOURCE_VARIABLE);
    }
  });

  it("is valid PromQL, as promtool parses it", () => {
    // Each query as a recording rule, with Grafana's interval variables as a plain duration.
    const file = join(scratch, "dashboard-queries.yml");
    const asRules = dashboardExprs.map(({ expr }, i) => ({
      record: `keeper_dashboard:query_${i}`,
      expr: withoutGrafanaVariables(expr),
    }));
    writeFileSync(file, JSON.stringify({ groups: [{ name: "dashboard", rules: asRules }] }));
    const check = promtool("check", "rules", file);
    expect(check.output).toContain(`SUCCESS: ${asRules.length} rules found`);
    expect(check.status).toBe(0);
  });
});

describe("the Prometheus alert rules", () => {
  it("read only metrics and labels Keeper's registry has", () => {
    const problems = ruleExprs.flatMap(({ where, expr }) =>
      unknownReferences(expr, series).map((problem) => `${where}: ${problem}`),
    );
    expect(problems).toEqual([]);
  });

  it("cover stale wallets, refusals, failures, breakers, backlog, 429s and stuck sends, each with a severity and a text", () => {
    const names = rules.map((rule) => rule.alert);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toEqual(
      expect.arrayContaining([
        "KeeperWalletStale",
        "KeeperPolicyRefusal",
        "KeeperTransactionsFailing",
        "KeeperJobsFailing",
        "KeeperCircuitBreakerTripped",
        "KeeperQueueBacklog",
        "KeeperRateLimited",
        "KeeperIntentsStuckSending",
      ]),
    );
    for (const rule of rules) {
      expect(["page", "ticket"], rule.alert).toContain(rule.labels?.severity);
      expect(rule.annotations?.summary, rule.alert).toBeTruthy();
      expect(rule.annotations?.description, rule.alert).toBeTruthy();
    }
  });

  it("pass promtool check rules", () => {
    const check = promtool("check", "rules", RULES);
    expect(check.output).toContain(`SUCCESS: ${rules.length} rules found`);
    expect(check.status).toBe(0);
  });

  it("fire on the series that should fire them and stay quiet on normal work (promtool test rules)", () => {
    const run = promtool("test", "rules", RULE_TESTS);
    expect(run.output).toContain("SUCCESS");
    expect(run.output).not.toContain("FAILED");
    expect(run.status).toBe(0);
  });

  it("are loaded by the Prometheus config, which promtool accepts", () => {
    const check = promtool("check", "config", PROMETHEUS_CONFIG);
    expect(check.output).toContain("is valid prometheus config file syntax");
    expect(check.output).toContain(`SUCCESS: ${rules.length} rules found`);
    expect(check.status).toBe(0);
  });
});
