import { afterEach, describe, expect, it } from "vitest";
import type { RunningKeeper } from "../../src/app/start-keeper.js";
import { PauseSwitch } from "../../src/keeper/operator/pause.js";
import type { RunningSandbox } from "../../src/sandbox/index.js";
import {
  eventually,
  loadTestConfig,
  positionsOf,
  startTestKeeper,
  startTestSandbox,
  usdcBalance,
  writeKeeperConfig,
} from "../helpers/keeper-harness.js";
import { testRedis } from "../helpers/redis.js";

describe("modes and the pause switch", () => {
  let sandbox: RunningSandbox | undefined;
  let keeper: RunningKeeper | undefined;
  let redis: Awaited<ReturnType<typeof testRedis>> | undefined;
  afterEach(async () => {
    await keeper?.stop();
    await sandbox?.close();
    await redis?.cleanup();
    keeper = undefined;
  });

  it("dry-run records every intent and signs nothing", async () => {
    ({ sandbox } = await startTestSandbox());
    redis = await testRedis("e2e-dry");
    const config = await loadTestConfig(
      await writeKeeperConfig(sandbox, redis.prefix, { extra: "mode: dry-run\n" }),
    );
    expect(config.mode).toBe("dry-run");
    const winners = (await Promise.all(sandbox.wallets.map((w) => positionsOf(sandbox as RunningSandbox, w))))
      .flat()
      .filter((p) => p.claimable && !p.claimed);
    const before = await Promise.all(
      sandbox.wallets.map((w) => usdcBalance(sandbox as RunningSandbox, w, sandbox?.usdcMint ?? "")),
    );
    ({ keeper } = await startTestKeeper(config, sandbox));
    const running = keeper;
    const rows = await eventually("every claim recorded as dry-run", async () => {
      const all = await running.ledger.list();
      return all.length >= winners.length ? all : undefined;
    });
    expect(rows.map((r) => r.status)).toEqual(winners.map(() => "dry-run"));
    expect(rows.every((r) => r.signature === undefined)).toBe(true);
    const after = await Promise.all(
      sandbox.wallets.map((w) => usdcBalance(sandbox as RunningSandbox, w, sandbox?.usdcMint ?? "")),
    );
    expect(after).toEqual(before);
    // Its storage is its own: a live keeper on the same prefix would start from a clean ledger.
    expect(keeper.keys.ledgerIndex).toContain("-dry-run:");
    const signQueue = await keeper.queues.sign.getJobCounts();
    expect(Object.values(signQueue).reduce((a, b) => a + b, 0)).toBe(0);
  }, 60_000);

  it("a pause stops new work within a tick; resume picks it up", async () => {
    ({ sandbox } = await startTestSandbox());
    redis = await testRedis("e2e-pause");
    const config = await loadTestConfig(await writeKeeperConfig(sandbox, redis.prefix));
    const pause = new PauseSwitch(
      redis.redis,
      (await import("../../src/keeper/names.js")).redisKeys(redis.prefix, "live"),
    );
    await pause.pause("test", 0);
    ({ keeper } = await startTestKeeper(config, sandbox));
    const running = keeper;
    // Several ticks pass while paused: skipped and counted, nothing recorded.
    await eventually("three paused ticks", async () => {
      const text = await running.metrics.render();
      const skipped = Number(/keeper_poll_skipped_total\{reason="paused"\} (\d+)/.exec(text)?.[1] ?? 0);
      return skipped >= 3 ? true : undefined;
    });
    expect(await keeper.ledger.list()).toEqual([]);

    await pause.resume();
    const confirmed = await eventually("claims confirmed after resume", async () => {
      const rows = (await running.ledger.list()).filter((r) => r.status === "confirmed");
      return rows.length > 0 ? rows : undefined;
    });
    expect(confirmed.length).toBeGreaterThan(0);
  }, 60_000);
});
