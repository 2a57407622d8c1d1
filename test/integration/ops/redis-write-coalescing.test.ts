import type { Socket } from "node:net";
import type { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { connectRedis } from "../../../src/keeper/state/redis-connection.js";

/** Counts the writes that reach a socket (one system call each; a corked socket's flush is one). */
function countFlushes(socket: Socket): { count: () => number } {
  let flushes = 0;
  const internal = socket as unknown as { _writeGeneric: (...args: unknown[]) => unknown };
  const flush = internal._writeGeneric.bind(socket);
  internal._writeGeneric = (...args: unknown[]) => {
    flushes += 1;
    return flush(...args);
  };
  return { count: () => flushes };
}

const KEY = `t-coalesce-${process.pid}`;

describe("Keeper's Redis connection writes a turn's commands together", () => {
  let redis: Redis | undefined;
  afterEach(async () => {
    await redis?.del(KEY);
    redis?.disconnect();
  });

  it("sends 200 commands of one turn in a handful of writes, each answered as if sent alone", async () => {
    redis = await connectRedis({ url: "redis://127.0.0.1:6379" });
    const flushes = countFlushes(redis.stream as Socket);
    const client = redis;
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) => client.hincrby(KEY, `field-${i % 10}`, i)),
    );
    // Each field's running total, in the order the commands were called.
    const totals = new Map<string, number>();
    const expected = Array.from({ length: 200 }, (_, i) => {
      const field = `field-${i % 10}`;
      totals.set(field, (totals.get(field) ?? 0) + i);
      return totals.get(field);
    });
    expect(answers).toEqual(expected);
    // Without coalescing each command is a write of its own: 200.
    expect(flushes.count()).toBeLessThanOrEqual(2);
  });

  it("writes separately what is sent a turn apart, and keeps coalescing on a new socket after a reconnect", async () => {
    redis = await connectRedis({ url: "redis://127.0.0.1:6379" });
    const client = redis;
    const first = countFlushes(client.stream as Socket);
    for (let i = 0; i < 5; i += 1) await client.set(KEY, String(i));
    expect(first.count()).toBe(5);

    const before = client.stream;
    client.disconnect(true);
    await new Promise<void>((resolve) => client.once("ready", () => resolve()));
    expect(client.stream).not.toBe(before);
    const second = countFlushes(client.stream as Socket);
    const answers = await Promise.all(Array.from({ length: 50 }, () => client.incr(KEY)));
    expect(answers).toEqual(Array.from({ length: 50 }, (_, i) => 5 + i));
    expect(second.count()).toBeLessThanOrEqual(2);
  });
});
