import { describe, expect, it } from "vitest";
import { type RequestRateLimiter, withinShare } from "../../src/api/index.js";

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
