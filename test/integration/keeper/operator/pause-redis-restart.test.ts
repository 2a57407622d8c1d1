import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startPrivateRedis } from "../../../../src/cli/private-redis.js";
import { loadConfig } from "../../../../src/config/load-config.js";
import { type RedisKeys, redisKeys } from "../../../../src/keeper/names.js";
import { pauseKeeper, resumeKeeper } from "../../../../src/keeper/operator/operator-actions.js";
import { type PausedState, PauseSwitch } from "../../../../src/keeper/operator/pause.js";
import { connectRedis } from "../../../../src/keeper/state/redis-connection.js";
import { createCaptureStream } from "../../../../src/ops/capture-stream.js";
import { createLogger } from "../../../../src/ops/logger.js";
import { freePort } from "../../../helpers/password-redis.js";

/**
 * The pause switch is a Redis key: a Redis restarted without its data (nothing on disk) would lift an
 * operator's pause by itself. A process that saw the switch on puts it back; one that saw it off (or
 * saw an operator lift it) leaves Redis alone.
 */
describe("the pause switch across a Redis restarted empty", () => {
  const url = { value: "" };
  let server: ChildProcess;
  let redis: Redis;
  const keys: RedisKeys = redisKeys("pause-restart", "live");
  let operator: Parameters<typeof pauseKeeper>[0];

  /** Stops the private Redis and starts it again on the same port: in memory only, so empty. */
  async function restartEmpty(): Promise<void> {
    const exited = once(server, "exit");
    server.kill();
    await exited;
    server = await startPrivateRedis({ url: url.value });
  }

  beforeAll(async () => {
    url.value = `redis://127.0.0.1:${await freePort()}`;
    server = await startPrivateRedis({ url: url.value });
    // Keeper's own client: it reconnects by itself, and its commands wait for the reconnect.
    redis = await connectRedis({ url: url.value });
    operator = { config: await loadConfig({ env: {} }), redis, keys };
  });

  afterAll(() => {
    redis.disconnect();
    server.kill();
  });

  beforeEach(async () => {
    await restartEmpty();
  });

  function watchedSwitch() {
    const logs = createCaptureStream();
    const restored: PausedState[] = [];
    const pause = new PauseSwitch(redis, keys, {
      logger: createLogger({ level: "info", pretty: false, destination: logs }),
      onRestored: (state) => restored.push(state),
    });
    const warnings = () => logs.records().filter((record) => record.level === "warn");
    return { pause, restored, warnings };
  }

  it("keeps a paused keeper paused: the switch is put back with its reason, told once", async () => {
    const running = watchedSwitch();
    await pauseKeeper(operator, "hands off during the migration", 1_700_000_000);
    expect(await running.pause.isPaused()).toBe(true);

    await restartEmpty();
    expect(await running.pause.isPaused()).toBe(true);
    expect(await running.pause.isPaused()).toBe(true);
    // Any process, the CLI's included, sees the switch back in Redis.
    expect(await new PauseSwitch(redis, keys).status()).toEqual({
      paused: true,
      reason: "hands off during the migration",
      since: 1_700_000_000,
    });
    expect(running.restored).toEqual([
      { paused: true, reason: "hands off during the migration", since: 1_700_000_000 },
    ]);
    expect(running.warnings()).toHaveLength(1);
    expect(running.warnings()[0]?.msg).toMatch(/lost its data.*pause.*restored/);
  });

  it("puts the switch back once across processes: the first to see the loss tells it", async () => {
    const first = watchedSwitch();
    const second = watchedSwitch();
    await pauseKeeper(operator, "paused by hand", 1_700_000_000);
    expect(await first.pause.isPaused()).toBe(true);
    expect(await second.pause.isPaused()).toBe(true);

    await restartEmpty();
    expect(await Promise.all([first.pause.isPaused(), second.pause.isPaused()])).toEqual([true, true]);
    expect(first.restored.length + second.restored.length).toBe(1);
    expect(first.warnings().length + second.warnings().length).toBe(1);
  });

  it("keeps a running keeper running, and writes nothing", async () => {
    const running = watchedSwitch();
    expect(await running.pause.isPaused()).toBe(false);
    await restartEmpty();
    expect(await running.pause.isPaused()).toBe(false);
    expect(await redis.dbsize()).toBe(0);
    expect(running.warnings()).toEqual([]);
  });

  it("leaves a pause the operator lifted before the restart lifted", async () => {
    const running = watchedSwitch();
    await pauseKeeper(operator, "paused by hand", 1_700_000_000);
    expect(await running.pause.isPaused()).toBe(true);
    await resumeKeeper(operator, 1_700_000_100);
    expect(await running.pause.isPaused()).toBe(false);

    await restartEmpty();
    expect(await running.pause.isPaused()).toBe(false);
    expect(running.restored).toEqual([]);
  });

  it("does not undo an operator's resume made after the restart, before the process looked", async () => {
    const running = watchedSwitch();
    await pauseKeeper(operator, "paused by hand", 1_700_000_000);
    expect(await running.pause.isPaused()).toBe(true);

    await restartEmpty();
    await resumeKeeper(operator, 1_700_000_100);
    expect(await running.pause.isPaused()).toBe(false);
    expect(running.restored).toEqual([]);
  });

  it("remembers a pause set before markers existed (an upgrade) and restores it too", async () => {
    const running = watchedSwitch();
    // What an older `keeper pause` wrote: the switch alone.
    await redis.set(keys.paused, JSON.stringify({ reason: "old pause", since: 1_600_000_000 }));
    expect(await running.pause.isPaused()).toBe(true);

    await restartEmpty();
    expect(await running.pause.isPaused()).toBe(true);
    expect(running.restored).toEqual([{ paused: true, reason: "old pause", since: 1_600_000_000 }]);
  });
});
