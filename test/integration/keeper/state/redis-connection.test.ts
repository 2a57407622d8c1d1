import { Queue, Worker } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError } from "../../../../src/core/errors.js";
import { connectRedis, type RedisTarget } from "../../../../src/keeper/state/redis-connection.js";
import { startPasswordRedis } from "../../../helpers/password-redis.js";

const PASSWORD = "redis-requirepass-3c9e1f7a5b2d8e4f";

/** What connecting to `target` throws, or undefined when it connects. */
async function connectError(target: RedisTarget): Promise<Error | undefined> {
  try {
    (await connectRedis(target)).disconnect();
    return undefined;
  } catch (error) {
    return error as Error;
  }
}

describe("Keeper's Redis connection to a Redis that requires a password", () => {
  let server: Awaited<ReturnType<typeof startPasswordRedis>>;
  beforeAll(async () => {
    server = await startPasswordRedis(PASSWORD);
  });
  afterAll(() => server?.stop());

  it("connects with the password, and BullMQ's own connections (duplicates of it) get in too", async () => {
    const redis = await connectRedis({ url: server.url, password: PASSWORD });
    const queue = new Queue("password-check", { connection: redis, prefix: "t-password" });
    // A worker's blocking connection is a duplicate of the given one: it must carry the password.
    const worker = new Worker("password-check", async (job) => `done ${job.data.n}`, {
      connection: redis,
      prefix: "t-password",
    });
    try {
      const job = await queue.add("check", { n: 7 });
      const finished = await new Promise<string>((resolve, reject) => {
        worker.on("completed", (j, result: string) => (j.id === job.id ? resolve(result) : undefined));
        worker.on("failed", (_j, error) => reject(error));
      });
      expect(finished).toBe("done 7");
    } finally {
      await worker.close();
      await queue.obliterate({ force: true });
      await queue.close();
      redis.disconnect();
    }
  });

  it("without the password: a configuration error naming redis.passwordFile and the rule", async () => {
    const error = await connectError({ url: server.url });
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([
      `redis.passwordFile: Redis at ${server.url} requires a password (NOAUTH): set redis.passwordFile or KEEPER_REDIS_PASSWORD_FILE to a file holding it`,
    ]);
  });

  it("with a wrong password: a configuration error that shows neither password", async () => {
    const wrong = "not-the-password-0123456789";
    const fromFile = await connectError({ url: server.url, password: wrong });
    expect(fromFile).toBeInstanceOf(ConfigError);
    expect(fromFile?.message).toContain("redis.passwordFile: ");
    expect(fromFile?.message).toContain("(WRONGPASS)");
    const inUrl = await connectError({ url: `redis://:${wrong}@127.0.0.1:${server.port}` });
    expect((inUrl as ConfigError).problems).toEqual([
      `redis.url: Redis at ${server.url} refused the password in the URL (WRONGPASS)`,
    ]);
    for (const error of [fromFile, inUrl]) {
      expect(error?.message).not.toContain(wrong);
      expect(error?.message).not.toContain(PASSWORD);
    }
  });

  it("a password in the URL itself still works when no password file is given", async () => {
    const redis = await connectRedis({ url: `redis://:${PASSWORD}@127.0.0.1:${server.port}` });
    try {
      expect(await redis.ping()).toBe("PONG");
    } finally {
      redis.disconnect();
    }
  });
});
