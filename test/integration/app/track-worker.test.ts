import { Queue, Worker } from "bullmq";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JobRunsAgainLater, trackWorker } from "../../../src/app/workers.js";
import { createCaptureStream } from "../../../src/ops/capture-stream.js";
import { createMetrics } from "../../../src/ops/metrics.js";
import { eventually } from "../../helpers/keeper-harness.js";
import { testRedis } from "../../helpers/redis.js";

/**
 * A job that must run again later (its wallet's other poll is running) is a retry by design: counted
 * as retried and logged at debug, never as "job failed" (the docs' configs are run with a check that
 * no job failed). A real failure is still logged at warn.
 */
describe("a worker's jobs as the logs and metrics tell them", () => {
  let redis: Awaited<ReturnType<typeof testRedis>>;
  beforeAll(async () => {
    redis = await testRedis("track-worker");
  });
  afterAll(async () => {
    await redis?.cleanup();
  });

  it("a job that runs again later is retried, not failed; a job that fails is a warning", async () => {
    const logs = createCaptureStream();
    const metrics = createMetrics({ defaultMetrics: false });
    const queue = new Queue("track", { connection: redis.redis, prefix: redis.prefix });
    const seen = new Map<string, number>();
    const worker = new Worker(
      "track",
      async (job) => {
        const runs = (seen.get(job.name) ?? 0) + 1;
        seen.set(job.name, runs);
        if (job.name === "later" && runs === 1) throw new JobRunsAgainLater("its wallet's poll is running");
        if (job.name === "broken") throw new Error("the service answered 500");
      },
      { connection: redis.redis, prefix: redis.prefix },
    );
    trackWorker(worker, "track", metrics, pino({ level: "debug" }, logs));
    try {
      await queue.add("later", {}, { attempts: 3, backoff: { type: "fixed", delay: 50 } });
      await queue.add("broken", {}, { attempts: 1 });
      await eventually("both jobs done", async () => {
        const text = await metrics.render();
        return /keeper_jobs_total\{queue="track",outcome="completed"\} 1/.test(text) &&
          /keeper_jobs_total\{queue="track",outcome="failed"\} 1/.test(text)
          ? text
          : undefined;
      });
      const text = await metrics.render();
      expect(text).toMatch(/keeper_jobs_total\{queue="track",outcome="retried"\} 1/);
      const failed = logs.records().filter((r) => r.msg === "job failed");
      expect(failed.map((r) => (r.err as string | undefined) ?? "")).toEqual(["the service answered 500"]);
      expect(failed[0]?.level).toBe(40);
      expect(
        logs
          .records()
          .filter((r) => r.msg === "job runs again later")
          .map((r) => r.level),
      ).toEqual([20]);
    } finally {
      await worker.close();
      await queue.close();
    }
  });
});
