import type { Socket } from "node:net";
import type { Cluster, Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { connectRedis } from "../../../../src/keeper/state/redis-connection.js";
import { REDIS_URL } from "../../../helpers/redis.js";
import { type TestCluster, testCluster } from "../../../helpers/redis-cluster.js";

/** How many times the socket handed bytes to the system (one write or writev each). */
function countFlushes(socket: Socket): { readonly count: number } {
  const counter = { count: 0 };
  const internals = socket as unknown as Record<"_write" | "_writev", (...args: unknown[]) => unknown>;
  for (const method of ["_write", "_writev"] as const) {
    const original = internals[method];
    internals[method] = function (this: Socket, ...args: unknown[]) {
      counter.count += 1;
      return original.apply(this, args);
    };
  }
  return counter;
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe("Keeper's Redis connection coalesces the writes of one turn", () => {
  let redis: Redis | undefined;
  afterEach(() => redis?.disconnect());

  it("sends forty commands issued in one turn in one write, each with its own reply", async () => {
    redis = await connectRedis({ url: REDIS_URL });
    const key = `t-coalesce-${process.pid}`;
    const flushes = countFlushes(redis.stream as Socket);
    const replies = Promise.all(
      Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? redis?.incr(key) : redis?.get(key))),
    );
    const answered = await replies;
    expect(flushes.count).toBe(1);
    // In order, as sent: every INCR's count, every GET the value before it.
    expect(answered.filter((_, i) => i % 2 === 0)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(answered.filter((_, i) => i % 2 === 1)).toEqual(
      Array.from({ length: 20 }, (_, i) => String(i + 1)),
    );
    await redis.del(key);
  });

  it("leaves nothing waiting past its turn: commands of separate turns go out separately", async () => {
    redis = await connectRedis({ url: REDIS_URL });
    const flushes = countFlushes(redis.stream as Socket);
    for (let i = 0; i < 5; i++) {
      await redis.ping();
      await nextTurn();
    }
    expect(flushes.count).toBe(5);
  });

  it("coalesces on the new socket after a reconnect, and an error stays with its own command", async () => {
    redis = await connectRedis({ url: REDIS_URL });
    const first = redis.stream as Socket;
    const reconnected = new Promise((resolve) => redis?.once("ready", resolve));
    first.destroy();
    await reconnected;
    const second = redis.stream as Socket;
    expect(second).not.toBe(first);
    const flushes = countFlushes(second);
    const results = await Promise.allSettled([
      redis.ping(),
      redis.call("NO-SUCH-COMMAND"),
      redis.echo("after the error"),
    ]);
    expect(flushes.count).toBe(1);
    expect(results[0]).toEqual({ status: "fulfilled", value: "PONG" });
    expect(results[1].status).toBe("rejected");
    expect(results[2]).toEqual({ status: "fulfilled", value: "after the error" });
  });
});

describe("on a Redis Cluster, each master's connection coalesces its own writes", () => {
  let cluster: TestCluster | undefined;
  let redis: Redis | undefined;
  afterEach(async () => {
    redis?.disconnect();
    await cluster?.stop();
  });

  it("sends a turn's commands for keys of one slot to their master in one write", async () => {
    cluster = await testCluster();
    redis = await connectRedis({ url: REDIS_URL, cluster: cluster.nodes });
    const tag = `{t-coalesce-${process.pid}}`;
    await redis.set(`${tag}:warm`, "1"); // the slots are known and the master's connection open
    // The master that holds the slot answers; the others redirect (MOVED).
    const masters = (redis as unknown as Cluster).nodes("master");
    const holds = await Promise.all(masters.map((m) => m.exists(`${tag}:warm`).catch(() => 0)));
    const node = masters[holds.indexOf(1)];
    if (!node?.stream) throw new Error("no connection to the master of the test's slot");
    const flushes = countFlushes(node.stream as Socket);
    const values = await Promise.all(Array.from({ length: 10 }, (_, i) => redis?.incr(`${tag}:n${i % 2}`)));
    expect(flushes.count).toBe(1);
    expect(values).toEqual([1, 1, 2, 2, 3, 3, 4, 4, 5, 5]);
    await redis.del(`${tag}:warm`, `${tag}:n0`, `${tag}:n1`);
  });
});
