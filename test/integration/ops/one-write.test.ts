import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { inOneWrite } from "../../../src/ops/one-write.js";
import { redisScript } from "../../../src/ops/redis-script.js";
import { testRedis } from "../../helpers/redis.js";
import { countSocketWrites } from "../../helpers/socket-writes.js";

const incrementScript = redisScript<number>("testOneWriteIncrement", 1, "return redis.call('INCR', KEYS[1])");

describe("inOneWrite: commands of several concerns in one socket write", () => {
  let ctx: Awaited<ReturnType<typeof testRedis>>;
  const key = (name: string) => `${ctx.prefix}:${name}`;
  beforeEach(async () => {
    ctx = await testRedis("one-write");
    await incrementScript(ctx.redis, key("warm")); // the server knows the script, as Keeper's after a first run
  });
  afterEach(async () => {
    await ctx.cleanup();
  });

  it("sends what it issues in one write, and answers each command alone, errors included", async () => {
    await ctx.redis.set(key("text"), "plain");
    const writes = countSocketWrites(ctx.redis);
    const [set, exists, wrongType, counted] = await inOneWrite(ctx.redis, () =>
      Promise.allSettled([
        ctx.redis.set(key("lock"), "mine", "PX", 60_000, "NX"),
        ctx.redis.exists(key("absent")),
        ctx.redis.hgetall(key("text")),
        incrementScript(ctx.redis, key("counter")),
      ]),
    );
    expect(writes.count).toBe(1);
    expect([set, exists, counted]).toEqual([
      { status: "fulfilled", value: "OK" },
      { status: "fulfilled", value: 0 },
      { status: "fulfilled", value: 1 },
    ]);
    expect(wrongType).toMatchObject({
      status: "rejected",
      reason: { message: expect.stringMatching(/WRONGTYPE/) },
    });
  });

  it("the same commands without it take a write each", async () => {
    const writes = countSocketWrites(ctx.redis);
    await Promise.all([ctx.redis.exists(key("a")), ctx.redis.exists(key("b")), ctx.redis.exists(key("c"))]);
    expect(writes.count).toBe(3);
  });

  it("what `issue` throws still lets the client's next commands go out", async () => {
    expect(() =>
      inOneWrite(ctx.redis, () => {
        void ctx.redis.set(key("before"), "1");
        throw new Error("issuing failed");
      }),
    ).toThrow("issuing failed");
    expect(await ctx.redis.get(key("before"))).toBe("1");
    expect(await ctx.redis.incr(key("after"))).toBe(1);
  });
});
