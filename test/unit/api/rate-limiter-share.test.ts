import { describe, expect, it } from "vitest";
import {
  ApiRateLimiter,
  chargedTo,
  type RequestRateLimiter,
  slowerWhile,
  withinShare,
} from "../../../src/api/index.js";
import { WorkInProgress } from "../../../src/api/work-in-progress.js";

function recording(name: string, log: string[]): RequestRateLimiter {
  return {
    async acquire() {
      log.push(`${name}:acquire`);
    },
    async backOff(ms) {
      log.push(`${name}:backOff:${ms}`);
    },
  };
}

describe("a share of the plan (the sweep's budget)", () => {
  it("takes a turn of the share, then of the plan; a 429 backs the whole plan off", async () => {
    const log: string[] = [];
    const limiter = withinShare(recording("plan", log), recording("share", log));
    await limiter.acquire();
    await limiter.backOff(1500);
    expect(log).toEqual(["share:acquire", "plan:acquire", "plan:backOff:1500"]);
  });
});

describe("a smaller share while this process acts (the sweep during a burst of claims)", () => {
  it("takes a turn of the smaller share first only while busy; a 429 backs the plan off", async () => {
    const log: string[] = [];
    const work = new WorkInProgress();
    const limiter = slowerWhile(() => work.isBusy, recording("acting", log), recording("plan", log));
    await limiter.acquire();
    let release = () => {};
    const building = work.run(() => new Promise<void>((resolve) => (release = resolve)));
    await limiter.acquire();
    release();
    await building;
    await limiter.acquire();
    await limiter.backOff(1000);
    expect(log).toEqual([
      "plan:acquire",
      "acting:acquire",
      "plan:acquire",
      "plan:acquire",
      "plan:backOff:1000",
    ]);
  });

  it("counts work as done when it fails too", async () => {
    const work = new WorkInProgress();
    await expect(work.run(() => Promise.reject(new Error("build failed")))).rejects.toThrow("build failed");
    expect(work.isBusy).toBe(false);
  });
});

describe("turns charged to the sweep's share (the watcher's reads)", () => {
  it("takes a turn of the plan and charges one to the share without waiting for it", async () => {
    const log: string[] = [];
    const charges: number[] = [];
    const limiter = chargedTo(recording("plan", log), {
      charge: async (points) => {
        charges.push(points);
      },
    });
    await limiter.acquire();
    await limiter.acquire();
    await limiter.backOff(2000);
    expect(log).toEqual(["plan:acquire", "plan:acquire", "plan:backOff:2000"]);
    expect(charges).toEqual([1, 1]);
  });

  it("a charge that fails costs the read nothing", async () => {
    const log: string[] = [];
    const limiter = chargedTo(recording("plan", log), { charge: () => Promise.reject(new Error("down")) });
    await expect(limiter.acquire()).resolves.toBeUndefined();
    expect(log).toEqual(["plan:acquire"]);
  });

  it("a share charged with its whole window makes its next caller wait", async () => {
    const share = new ApiRateLimiter({ apiKey: "k", requestsPerSecond: 1 }); // 9 a 10 s window
    await share.charge(9);
    const controller = new AbortController();
    const waiting = share.acquire(controller.signal).then(
      () => "granted",
      (e: Error) => e.name,
    );
    while (share.stats.waits === 0) await new Promise((r) => setTimeout(r, 5));
    controller.abort();
    expect(await waiting).toBe("AbortError");
    expect(share.stats.waitedMs).toBeGreaterThan(1_000);
  });
});
