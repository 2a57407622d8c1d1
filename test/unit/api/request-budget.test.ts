import { describe, expect, it } from "vitest";
import type { RequestRateLimiter } from "../../../src/api/rate-limiter.js";
import {
  type ChargeableLimiter,
  createRequestBudget,
  type RequestBudgetConfig,
  type RequestBudgetParts,
  requestBudgetParts,
} from "../../../src/api/request-budget.js";
import type { SlidingWindowLimiter } from "../../../src/api/sliding-window.js";

/** Limiters that grant at once and write down every turn, charge and back-off, by name. */
function recordingParts() {
  const log: string[] = [];
  const paces: Array<{ name: string; requestsPerSecond: number }> = [];
  const limiter = (name: string): ChargeableLimiter => ({
    async acquire() {
      log.push(`${name}:acquire`);
    },
    async backOff(ms) {
      log.push(`${name}:backOff:${ms}`);
    },
    async charge(points) {
      log.push(`${name}:charge:${points}`);
    },
  });
  const parts: RequestBudgetParts = {
    planWindow: () => limiter("plan"),
    pace: (requestsPerSecond, name) => {
      paces.push({ name, requestsPerSecond });
      return limiter(name);
    },
  };
  return { parts, log, paces };
}

function configWith(watcher: Partial<RequestBudgetConfig["watcher"]>): RequestBudgetConfig {
  return {
    service: { requestsPerSecond: 10, rateLimitWindowSeconds: 60, rateLimitSharePct: 95 },
    watcher: { enabled: true, sweepSharePct: 50, sweepShareWhileActingPct: 20, ...watcher },
    redis: { prefix: "budget-test" },
  };
}

const take = async (limiter: RequestRateLimiter) => {
  await limiter.acquire();
};

describe("the request budget: how the sweep, the market watcher and targeted work share one plan", () => {
  it("paces the sweep at its share, and at the smaller share while acting, each under its own key", () => {
    const { parts, paces } = recordingParts();
    createRequestBudget({ config: configWith({}), apiKey: "k" }, parts);
    expect(paces).toEqual([
      { name: "api-rate-sweep", requestsPerSecond: 5 },
      { name: "api-rate-sweep-acting", requestsPerSecond: 2 },
    ]);
  });

  it.each([
    { sweepSharePct: 30, sweepShareWhileActingPct: 60, acting: 3 },
    { sweepSharePct: 60, sweepShareWhileActingPct: 30, acting: 3 },
  ])(
    "never lets the sweep take more while acting than at rest ($sweepSharePct%, $sweepShareWhileActingPct% while acting)",
    ({ sweepSharePct, sweepShareWhileActingPct, acting }) => {
      const { parts, paces } = recordingParts();
      createRequestBudget(
        { config: configWith({ sweepSharePct, sweepShareWhileActingPct }), apiKey: "k" },
        parts,
      );
      expect(paces.find((p) => p.name === "api-rate-sweep-acting")?.requestsPerSecond).toBe(acting);
    },
  );

  it("with the market watcher off, paces the sweep at the whole plan and never slows it while acting", async () => {
    const { parts, log, paces } = recordingParts();
    const budget = createRequestBudget({ config: configWith({ enabled: false }), apiKey: "k" }, parts);
    expect(paces).toEqual([{ name: "api-rate-sweep", requestsPerSecond: 10 }]);
    await budget.acting(() => take(budget.sweep));
    expect(log).toEqual(["api-rate-sweep:acquire", "plan:acquire"]);
  });

  it("takes a turn of the sweep's share, then of the plan; while acting, of the smaller share first", async () => {
    const { parts, log } = recordingParts();
    const budget = createRequestBudget({ config: configWith({}), apiKey: "k" }, parts);
    await take(budget.sweep);
    expect(budget.isActing).toBe(false);
    await budget.acting(async () => {
      expect(budget.isActing).toBe(true);
      await take(budget.sweep);
    });
    expect(budget.isActing).toBe(false);
    expect(log).toEqual([
      "api-rate-sweep:acquire",
      "plan:acquire",
      "api-rate-sweep-acting:acquire",
      "api-rate-sweep:acquire",
      "plan:acquire",
    ]);
  });

  it("gives targeted work the plan's turns alone, and charges the watcher's reads to the sweep's share", async () => {
    const { parts, log } = recordingParts();
    const budget = createRequestBudget({ config: configWith({}), apiKey: "k" }, parts);
    await take(budget.targeted);
    await take(budget.watcher);
    expect(log).toEqual(["plan:acquire", "plan:acquire", "api-rate-sweep:charge:1"]);
  });

  it("backs the whole plan off after a 429, whichever lane met it", async () => {
    const { parts, log } = recordingParts();
    const budget = createRequestBudget({ config: configWith({}), apiKey: "k" }, parts);
    await budget.sweep.backOff(1000);
    await budget.watcher.backOff(2000);
    await budget.targeted.backOff(3000);
    expect(log).toEqual(["plan:backOff:1000", "plan:backOff:2000", "plan:backOff:3000"]);
  });

  it("counts acting work as done when it fails", async () => {
    const { parts } = recordingParts();
    const budget = createRequestBudget({ config: configWith({}), apiKey: "k" }, parts);
    await expect(budget.acting(() => Promise.reject(new Error("build failed")))).rejects.toThrow(
      "build failed",
    );
    expect(budget.isActing).toBe(false);
  });

  it("without Redis (the CLI), is this process's own budget and grants turns", async () => {
    const budget = createRequestBudget({ config: configWith({}), apiKey: undefined });
    await take(budget.targeted);
    await take(budget.sweep);
    await take(budget.watcher);
    expect(budget.isActing).toBe(false);
  });
});

describe("the plan's window as configured", () => {
  it("fills service.rateLimitSharePct of the window, then makes the next request wait in line", async () => {
    const config: RequestBudgetConfig = {
      service: { requestsPerSecond: 10, rateLimitWindowSeconds: 1, rateLimitSharePct: 50 },
      watcher: { enabled: true, sweepSharePct: 50, sweepShareWhileActingPct: 20 },
      redis: { prefix: "budget-share-test" },
    };
    const window = requestBudgetParts({ config, apiKey: "k" }).planWindow() as SlidingWindowLimiter;
    for (let i = 0; i < 5; i++) await window.acquire();
    expect(window.stats).toMatchObject({ acquired: 5, waits: 0 });
    const stop = new AbortController();
    const sixth = window.acquire(stop.signal).catch((error: Error) => error.name);
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(window.queued).toBe(1);
    stop.abort();
    expect(await sixth).toBe("AbortError");
  });
});
