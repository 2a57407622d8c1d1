import { once } from "node:events";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { coalesceWrites } from "../../../src/ops/coalesce-writes.js";
import { redisScript } from "../../../src/ops/redis-script.js";
import { testRedis } from "../../helpers/redis.js";
import { countSocketWrites } from "../../helpers/socket-writes.js";

const incrementScript = redisScript<number>("testCoalesceIncrement", 1, "return redis.call('INCR', KEYS[1])");

describe("coalesceWrites: a turn's commands in one socket write", () => {
  let ctx: Awaited<ReturnType<typeof testRedis>>;
  const key = (name: string) => `${ctx.prefix}:${name}`;
  beforeEach(async () => {
    ctx = await testRedis("coalesce");
    await incrementScript(ctx.redis, key("warm")); // the server knows the script, as Keeper's after a first run
    coalesceWrites(ctx.redis);
  });
  afterEach(async () => {
    await ctx.cleanup();
  });

  it("sends the commands of separate callers in one turn in one write, each answered alone", async () => {
    await ctx.redis.set(key("text"), "plain");
    const writes = countSocketWrites(ctx.redis);
    const [set, exists, wrongType, counted, pipelined] = await Promise.allSettled([
      ctx.redis.set(key("lock"), "mine", "PX", 60_000, "NX"),
      ctx.redis.exists(key("absent")),
      ctx.redis.hgetall(key("text")),
      incrementScript(ctx.redis, key("counter")),
      ctx.redis.pipeline().incr(key("counter")).get(key("text")).exec(),
    ]);
    expect(writes.count).toBe(1);
    expect([set, exists, counted, pipelined]).toEqual([
      { status: "fulfilled", value: "OK" },
      { status: "fulfilled", value: 0 },
      { status: "fulfilled", value: 1 },
      {
        status: "fulfilled",
        value: [
          [null, 2],
          [null, "plain"],
        ],
      },
    ]);
    expect(wrongType).toMatchObject({
      status: "rejected",
      reason: { message: expect.stringMatching(/WRONGTYPE/) },
    });
  });

  it("leaves nothing corked: each later turn's command goes out, in a write of its own", async () => {
    const writes = countSocketWrites(ctx.redis);
    for (let i = 1; i <= 3; i++) expect(await ctx.redis.incr(key("turns"))).toBe(i);
    expect(writes.count).toBe(3);
  });

  it("follows the client onto a new socket after a reconnect", async () => {
    const ready = once(ctx.redis, "ready");
    ctx.redis.disconnect(true);
    await ready;
    const writes = countSocketWrites(ctx.redis);
    const answers = await Promise.all([ctx.redis.incr(key("after")), ctx.redis.incr(key("after"))]);
    expect(answers).toEqual([1, 2]);
    expect(writes.count).toBe(1);
  });
});
