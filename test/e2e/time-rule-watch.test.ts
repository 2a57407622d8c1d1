import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningKeeper } from "../../src/app/start-keeper.js";
import type { Position } from "../../src/core/schemas/prediction.js";
import type { RunningSandbox } from "../../src/sandbox/index.js";
import { DrivenClock } from "../../src/sandbox/world/clock.js";
import { startCheckedSandbox } from "../helpers/checked-sandbox.js";
import {
  eventually,
  loadTestConfig,
  positionsOf,
  startTestKeeper,
  usdcBalance,
  writeKeeperConfig,
} from "../helpers/keeper-harness.js";
import { testRedis } from "../helpers/redis.js";
import { TEST_API_KEY } from "../helpers/test-secrets.js";

/** Seconds from the keeper's start to the moment the time rule enters. */
const LEAD_SECONDS = 10;

/**
 * A time rule between sweeps: exit-rules' `closeBeforeSeconds` enters at a moment, whatever the
 * price. The keeper sweeps once at start, then once a day; the holdings index keeps the moment, and
 * the market watcher polls the holder when it comes, so the position is sold in time, not at the
 * next day's sweep. The sandbox's world runs on the keeper's own clock (a driven clock set to now),
 * so a market's close time means the same to both.
 */
describe("a time rule fires between sweeps: the watcher polls its holder at the moment", () => {
  let sandbox: RunningSandbox;
  let keeper: RunningKeeper;
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let target: Position;
  let wallet: string;

  beforeAll(async () => {
    const nowSeconds = Math.floor(Date.now() / 1000);
    sandbox = await startCheckedSandbox({
      port: 0,
      apiKey: TEST_API_KEY,
      clock: new DrivenClock(nowSeconds),
      rateLimit: false,
      chain: { port: 0, slotMs: 100 },
    });
    redis = await testRedis("e2e-time-rule");
    // The wallet's open position whose market closes first (a minute away at least): with the rule
    // set to enter LEAD_SECONDS after start for it, every later-closing one stays below its moment.
    const candidates = [];
    for (const w of sandbox.wallets)
      for (const p of await positionsOf(sandbox, w))
        if (
          p.marketMetadata.status === "open" &&
          !p.claimed &&
          p.openOrders === 0 &&
          p.sellPriceUsd !== null &&
          Number(p.valueUsd ?? p.sizeUsd) >= 5_000_000 &&
          Number(p.marketMetadata.closeTime) > nowSeconds + 60
        )
          candidates.push(p);
    const byWallet = new Map<string, Position[]>();
    for (const p of candidates) byWallet.set(p.ownerPubkey, [...(byWallet.get(p.ownerPubkey) ?? []), p]);
    const [owner, held] = [...byWallet].find(([, list]) => list.length > 0) ?? [];
    if (!owner || !held) throw new Error("the sandbox seed no longer gives an open position to sell");
    wallet = owner;
    const closesAt = (p: Position) => Number(p.marketMetadata.closeTime);
    target = [...held].sort((a, b) => closesAt(a) - closesAt(b))[0] as Position;
    // Other open positions of the wallet closing at the same second would be sold with it: none here.
    expect(held.filter((p) => closesAt(p) === closesAt(target))).toHaveLength(1);
    const closeBeforeSeconds = closesAt(target) - (nowSeconds + LEAD_SECONDS);

    const file = await writeKeeperConfig(sandbox, redis.prefix, {
      walletYaml: `wallets:\n  - pubkey: ${wallet}\n`,
      pollPositions: "0 0 3 * * *",
      pollOrders: "0 0 3 * * *",
      extra: `watcher:\n  schedule: "* * * * * *"\nstrategies:\n  - name: exit-rules\n    closeBeforeSeconds: ${closeBeforeSeconds}\n`,
    });
    ({ keeper } = await startTestKeeper(await loadTestConfig(file), sandbox));
  }, 90_000);

  afterAll(async () => {
    await keeper?.stop();
    await sandbox?.close();
    await redis?.cleanup();
  });

  it("sells the position when its moment comes, polled by the watcher, with no sweep in between", async () => {
    await eventually(
      "the sweep at start indexed the position with its moment",
      async () => ((await keeper.redis.zscore(keeper.keys.lastPolls, wallet)) !== null ? true : undefined),
      30_000,
    );
    const sweptAt = Number(await keeper.redis.zscore(keeper.keys.lastPolls, wallet));
    const before = await usdcBalance(sandbox, wallet, sandbox.usdcMint);
    // Nothing was sold at the sweep: the rule's moment had not come.
    expect(await keeper.ledger.get(`close-${target.pubkey}`)).toBeUndefined();

    const row = await eventually(
      "the position's close confirmed",
      async () => {
        const r = await keeper.ledger.get(`close-${target.pubkey}`);
        return r?.status === "confirmed" ? r : undefined;
      },
      LEAD_SECONDS * 1000 + 45_000,
    );
    expect(row.reason).toMatch(/close-before/);
    // Sold on the chain and in the sandbox: the wallet holds none of it, and got the proceeds.
    const after = (await positionsOf(sandbox, wallet)).find((p) => p.pubkey === target.pubkey);
    expect(after === undefined || BigInt(after.contractsMicro ?? after.contracts) === 0n).toBe(true);
    expect((await usdcBalance(sandbox, wallet, sandbox.usdcMint)) - before).toBe(
      BigInt(row.amountMicroUsd ?? -1),
    );
    // The watcher's poll, on the time trigger; the day's sweep never ran.
    const metrics = await keeper.metrics.render();
    expect(metrics).toMatch(/keeper_targeted_polls_total\{trigger="time"\} [1-9]/);
    expect(Number(await keeper.redis.zscore(keeper.keys.lastPolls, wallet))).toBeGreaterThan(sweptAt);
  }, 90_000);
});
