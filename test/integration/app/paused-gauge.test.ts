import { Keypair } from "@solana/web3.js";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { type RunningKeeper, startKeeper } from "../../../src/app/start-keeper.js";
import { loadConfig } from "../../../src/config/load-config.js";
import { redisKeysOf } from "../../../src/keeper/names.js";
import { PauseSwitch } from "../../../src/keeper/operator/pause.js";
import { eventually } from "../../helpers/keeper-harness.js";
import { REDIS_URL, testRedis } from "../../helpers/redis.js";

// An operator's alert on keeper_paused must fire while Keeper is paused, whoever flipped the switch:
// `keeper pause` runs in a process of its own and only writes Redis.

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function pausedGauge(keeper: RunningKeeper): Promise<string | undefined> {
  const text = await (await fetch(`${keeper.ops?.url}/metrics`)).text();
  return /^keeper_paused (\d+)$/m.exec(text)?.[1];
}

describe("keeper_paused", () => {
  it("follows the switch in Redis, paused and resumed from another process", async () => {
    const { redis, prefix, cleanup } = await testRedis("paused-gauge");
    cleanups.push(cleanup);
    const loaded = await loadConfig({ env: {} });
    const config = {
      ...loaded,
      redis: { ...loaded.redis, url: REDIS_URL, prefix },
      wallets: [{ pubkey: Keypair.generate().publicKey.toBase58() }],
      ops: { ...loaded.ops, port: 0 },
    };
    // No role: the gauge is every process's, idle or not.
    const keeper = await startKeeper({ config, roles: new Set(), logger: pino({ level: "silent" }) });
    cleanups.push(() => keeper.stop());
    expect(await pausedGauge(keeper)).toBe("0");

    // As the CLI does: its own switch, its own connection.
    const cli = new PauseSwitch(redis, redisKeysOf(config));
    await cli.pause("paused by hand", Math.floor(Date.now() / 1000));
    const gaugeReads = (value: string) => async () =>
      (await pausedGauge(keeper)) === value ? true : undefined;
    await eventually("keeper_paused 1", gaugeReads("1"), 15_000);
    await cli.resume();
    await eventually("keeper_paused 0", gaugeReads("0"), 15_000);
  });
});
