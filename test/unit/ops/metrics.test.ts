import { describe, expect, it } from "vitest";
import { createMetrics, queueCountsFrom } from "../../../src/ops/metrics.js";
import { PollTracker } from "../../../src/ops/poll-tracker.js";
import { mergePrometheusText } from "../../../src/ops/prometheus-text.js";

const quiet = { defaultMetrics: false } as const;

describe("createMetrics", () => {
  it("exposes each metric with its labels after it is used", async () => {
    const metrics = createMetrics(quiet);
    metrics.observeApiRequest("positions.list", 200, 0.12);
    metrics.observeApiRequest("positions.list", 429, 0.01);
    metrics.recordJob("poll", "completed");
    metrics.recordIntent("auto-claim", "claim");
    metrics.recordIntentNotAdmitted("dca", "createRecurring", "in_flight");
    metrics.strategyErrors.inc({ strategy: "take-profit" });
    metrics.recordTransaction("claim", "confirmed", 2.5);
    metrics.recordTransaction("close", "refused");
    metrics.policyRefusals.inc({ kind: "close", reason: "unknown_program" });
    metrics.addClaimedMicroUsd(1_500_000n);
    metrics.pollSkipped.inc({ reason: "previous_running" });
    metrics.pollDuration.observe({ kind: "positions" }, 0.3);
    metrics.setPaused(true);
    metrics.setCircuitBreaker("rpc", true);

    const text = await metrics.render();
    const expected = [
      'keeper_api_requests_total{endpoint="positions.list",status="200"} 1',
      'keeper_api_requests_total{endpoint="positions.list",status="429"} 1',
      'keeper_api_request_duration_seconds_count{endpoint="positions.list"} 2',
      'keeper_api_rate_limited_total{endpoint="positions.list"} 1',
      'keeper_jobs_total{queue="poll",outcome="completed"} 1',
      'keeper_intents_total{strategy="auto-claim",kind="claim"} 1',
      'keeper_intents_not_admitted_total{strategy="dca",kind="createRecurring",reason="in_flight"} 1',
      'keeper_strategy_errors_total{strategy="take-profit"} 1',
      'keeper_transactions_total{kind="claim",outcome="confirmed"} 1',
      'keeper_transactions_total{kind="close",outcome="refused"} 1',
      'keeper_confirmation_duration_seconds_count{kind="claim"} 1',
      'keeper_policy_refusals_total{kind="close",reason="unknown_program"} 1',
      "keeper_claimed_usd_total 1.5",
      'keeper_poll_skipped_total{reason="previous_running"} 1',
      'keeper_poll_duration_seconds_count{kind="positions"} 1',
      "keeper_paused 1",
      'keeper_circuit_breaker_tripped{breaker="rpc"} 1',
    ];
    for (const line of expected) expect(text).toContain(line);
  });

  it("uses a registry of its own per call", async () => {
    const first = createMetrics(quiet);
    const second = createMetrics(quiet);
    first.recordJob("sign", "failed");
    expect(await second.render()).not.toContain('keeper_jobs_total{queue="sign"');
  });

  it("adds process metrics with the keeper_ prefix", async () => {
    const text = await createMetrics().render();
    expect(text).toContain("keeper_process_cpu_user_seconds_total");
    expect(text).toContain("keeper_nodejs_eventloop_lag_seconds");
  });

  it("fills queue depths from the counts function at scrape time", async () => {
    const queues = [
      { name: "poll", getJobCounts: async () => ({ waiting: 3, active: 1 }) },
      { name: "sign", getJobCounts: async () => ({ waiting: 0, failed: 2 }) },
    ];
    const metrics = createMetrics({ ...quiet, getQueueCounts: queueCountsFrom(queues) });
    const text = await metrics.render();
    expect(text).toContain('keeper_queue_jobs{queue="poll",state="waiting"} 3');
    expect(text).toContain('keeper_queue_jobs{queue="sign",state="failed"} 2');
  });

  it("counts a failing or hanging collector instead of failing the scrape", async () => {
    const metrics = createMetrics({
      ...quiet,
      collectTimeoutMs: 20,
      getQueueCounts: () => new Promise(() => {}),
      polls: {
        pollTimes: () => {
          throw new Error("redis down");
        },
      },
    });
    await metrics.render();
    const text = await metrics.render();
    expect(text).toContain('keeper_metrics_collect_errors_total{collector="queue_jobs"}');
    expect(text).toContain('keeper_metrics_collect_errors_total{collector="polls"}');
    expect(text).not.toContain("keeper_queue_jobs{");
  });

  it("summarises poll times: oldest last poll and stale wallets, never a wallet label", async () => {
    let nowMs = 1_000_000;
    const tracker = new PollTracker(() => nowMs);
    tracker.expect(["W1", "W2", "W3"]);
    tracker.recordSuccess("W1", 1_000_000);
    tracker.recordSuccess("W2", 1_050_000);
    nowMs = 1_200_000;
    const metrics = createMetrics({ ...quiet, polls: tracker, stalePollSeconds: 160, now: () => nowMs });
    const text = await metrics.render();
    expect(text).toContain("keeper_last_successful_poll_timestamp_seconds 1000");
    // W1 (polled 200 s ago) and W3 (never polled, tracked for 200 s) are stale; W2 (150 s) is not.
    expect(text).toContain("keeper_stale_wallets 2");
    expect(text).not.toContain("W1");
  });

  it("appends BullMQ's text once per metric family", async () => {
    const bullText = (queue: string) =>
      [
        "# HELP bullmq_job_count Number of jobs in the queue by state",
        "# TYPE bullmq_job_count gauge",
        `bullmq_job_count{queue="${queue}", state="waiting"} 1`,
      ].join("\n");
    const metrics = createMetrics({
      ...quiet,
      bullQueues: [
        { exportPrometheusMetrics: async () => bullText("poll") },
        { exportPrometheusMetrics: async () => bullText("sign") },
      ],
    });
    const text = await metrics.render();
    expect(text.match(/# TYPE bullmq_job_count/g)).toHaveLength(1);
    expect(text).toContain('bullmq_job_count{queue="poll", state="waiting"} 1');
    expect(text).toContain('bullmq_job_count{queue="sign", state="waiting"} 1');
  });
});

describe("mergePrometheusText", () => {
  it("keeps families contiguous and declared once", () => {
    const merged = mergePrometheusText([
      '# HELP a_total A\n# TYPE a_total counter\na_total{q="1"} 1\n# HELP b B\n# TYPE b gauge\nb 2',
      '# HELP a_total A\n# TYPE a_total counter\na_total{q="2"} 3',
    ]);
    expect(merged).toBe(
      '# HELP a_total A\n# TYPE a_total counter\na_total{q="1"} 1\na_total{q="2"} 3\n# HELP b B\n# TYPE b gauge\nb 2\n',
    );
  });

  it("returns nothing for nothing", () => {
    expect(mergePrometheusText([])).toBe("");
  });
});
