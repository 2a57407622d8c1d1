import { afterEach, describe, expect, it } from "vitest";
import { expectAreaError } from "./error-shapes.js";
import { KEY, type RunningServer, startTestServer } from "./http-harness.js";

const T0 = 1_800_000_000_000;
const PATH = "/prediction/v1/orders";

/** A clock the test moves, so windows slide without waiting. */
function manualClock(startMs = T0) {
  let now = startMs;
  return {
    nowMs: () => now,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

const header = (response: Response, name: string) => response.headers.get(name);

let sandbox: RunningServer | undefined;
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});

describe("sandbox rate limit", () => {
  it("counts a sliding window per key, answers 429 past the limit, and recovers as the window slides", async () => {
    const clock = manualClock();
    sandbox = await startTestServer({
      rateLimit: { requestsPerSecond: 1, windowSeconds: 3, retryAfter: true },
      nowMs: clock.nowMs,
    });
    const resetAt = String((T0 + 3000) / 1000);
    for (const [i, remaining] of ["2", "1", "0"].entries()) {
      const response = await sandbox.get(PATH);
      expect(response.status).toBe(200);
      expect(header(response, "x-ratelimit-remaining")).toBe(remaining);
      expect(header(response, "x-ratelimit-current")).toBe(String(i + 1));
      expect(header(response, "x-ratelimit-reset")).toBe(resetAt);
      expect(header(response, "retry-after")).toBeNull();
      clock.advance(1000);
    }
    clock.advance(-500); // T0 + 2.5 s: three requests in the window
    const limited = await sandbox.get(PATH);
    await expectAreaError(limited, { status: 429, area: "prediction" });
    expect(header(limited, "x-ratelimit-remaining")).toBe("0");
    expect(header(limited, "x-ratelimit-current")).toBe("3");
    expect(header(limited, "x-ratelimit-reset")).toBe(resetAt);
    expect(header(limited, "retry-after")).toBe("1");

    clock.advance(500); // T0 + 3 s: the first request has left the window
    const recovered = await sandbox.get(PATH);
    expect(recovered.status).toBe(200);
    expect(header(recovered, "x-ratelimit-remaining")).toBe("0");
    expect(header(recovered, "x-ratelimit-reset")).toBe(String((T0 + 4000) / 1000));
  });

  it("prediction execute calls use no credits: answered past the limit, and the window still has room", async () => {
    const clock = manualClock();
    sandbox = await startTestServer({
      rateLimit: { requestsPerSecond: 1, windowSeconds: 1, retryAfter: true },
      nowMs: clock.nowMs,
    });
    for (let i = 0; i < 3; i++) {
      const executed = await sandbox.send("POST", "/prediction/v1/execute", { signedTransaction: "AQAB" });
      expect(executed.status).toBe(200);
      expect(header(executed, "x-ratelimit-remaining")).toBeNull();
      const cli = await sandbox.send("POST", "/prediction/v1/orders/execute", { signedTransaction: "AQAB" });
      expect(cli.status).toBe(200);
    }
    const counted = await sandbox.get(PATH);
    expect(counted.status).toBe(200);
    expect(header(counted, "x-ratelimit-remaining")).toBe("0");
  });

  it("leaves Retry-After out when the plan does not send it", async () => {
    const clock = manualClock();
    sandbox = await startTestServer({
      rateLimit: { requestsPerSecond: 1, windowSeconds: 1, retryAfter: false },
      nowMs: clock.nowMs,
    });
    expect((await sandbox.get(PATH)).status).toBe(200);
    const limited = await sandbox.get("/swap/v2/build");
    await expectAreaError(limited, { status: 429, area: "swap" });
    expect(header(limited, "retry-after")).toBeNull();
    expect(header(limited, "x-ratelimit-reset")).toBe(String((T0 + 1000) / 1000));
  });

  it("gives each key its own window and plan", async () => {
    const clock = manualClock();
    sandbox = await startTestServer({
      apiKeys: [
        KEY,
        { key: "small", rateLimit: { requestsPerSecond: 1, windowSeconds: 1 } },
        { key: "free", rateLimit: false },
      ],
      rateLimit: { requestsPerSecond: 5, windowSeconds: 1 },
      nowMs: clock.nowMs,
    });
    const as = (key: string) => sandbox?.get(PATH, { "x-api-key": key }) as Promise<Response>;
    expect((await as("small")).status).toBe(200);
    expect((await as("small")).status).toBe(429);
    for (let i = 0; i < 5; i++) expect((await as(KEY)).status).toBe(200);
    expect((await as(KEY)).status).toBe(429);
    for (let i = 0; i < 20; i++) {
      const response = await as("free");
      expect(response.status).toBe(200);
      expect(header(response, "x-ratelimit-remaining")).toBeNull();
    }
  });

  it("does not count requests refused for their key", async () => {
    const clock = manualClock();
    sandbox = await startTestServer({
      rateLimit: { requestsPerSecond: 1, windowSeconds: 1 },
      nowMs: clock.nowMs,
    });
    for (let i = 0; i < 3; i++) expect((await sandbox.get(PATH, { "x-api-key": "wrong" })).status).toBe(401);
    expect((await sandbox.get(PATH)).status).toBe(200);
  });
});
