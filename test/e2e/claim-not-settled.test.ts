import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningKeeper } from "../../src/app/start-keeper.js";
import type { Position } from "../../src/core/schemas/prediction.js";
import type { RunningSandbox } from "../../src/sandbox/index.js";
import type { DrivenClock } from "../../src/sandbox/world/clock.js";
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

/**
 * The live service may show a market's result before the market is settled: the position is not yet
 * `claimable`, and a claim asked for then is answered 400 market_not_settled. Keeper takes the result
 * as a candidate, hears "not yet", and claims once the market settles, without counting a failure.
 */
describe("a winner seen before its market settles: deferred, then claimed", () => {
  let sandbox: RunningSandbox;
  let clock: DrivenClock;
  let keeper: RunningKeeper;
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let wallet: string;
  let held: Position;

  beforeAll(async () => {
    ({ sandbox, clock } = await startTestSandbox());
    redis = await testRedis("e2e-claim-not-settled");
    wallet = sandbox.wallets[0] ?? "";
    const open = (await positionsOf(sandbox, wallet)).find(
      (p) => p.marketMetadata.status === "open" && !p.claimable && p.openOrders === 0,
    );
    if (!open) throw new Error("the sandbox seed no longer gives wallet 0 an open position");
    held = open;
    const config = await loadTestConfig(
      await writeKeeperConfig(sandbox, redis.prefix, { walletYaml: `wallets:\n  - pubkey: ${wallet}\n` }),
    );
    ({ keeper } = await startTestKeeper(config, sandbox));
  }, 60_000);

  afterAll(async () => {
    await keeper?.stop();
    await sandbox?.close();
    await redis?.cleanup();
  });

  it("asks, is told market_not_settled, records it as deferred, and claims after settlement", async () => {
    const key = `claim-${held.pubkey}`;
    // The wallet's winners of the generated past are claimed first, so the balance below is this one's.
    const winners = (await positionsOf(sandbox, wallet)).filter((p) => p.claimable && !p.claimed);
    await eventually(
      "the earlier winners claimed",
      async () => {
        const rows = await keeper.ledger.list();
        const done = rows.filter((r) => r.kind === "claim" && r.status === "confirmed");
        return done.length >= winners.length ? done : undefined;
      },
      60_000,
    );
    sandbox.world.resolveMarket(held.marketId, held.isYes ? "yes" : "no", { settleAfterSeconds: 3600 });
    const listed = (await positionsOf(sandbox, wallet)).find((p) => p.pubkey === held.pubkey);
    // What the live service shows in that window: the result, no claimable, no valuation.
    expect(listed).toMatchObject({ claimable: false, claimed: false, valueUsd: null, pnlUsdPercent: null });
    expect(listed?.marketMetadata.result).toBe(held.isYes ? "yes" : "no");

    const deferred = await eventually(
      "the early claim deferred",
      async () => {
        const row = await keeper.ledger.get(key);
        return row?.status === "deferred" ? row : undefined;
      },
      60_000,
    );
    expect(deferred.error).toMatch(/market_not_settled/);
    expect(deferred.tries).toBe(1);
    const before = await usdcBalance(sandbox, wallet, sandbox.usdcMint);

    // The market settles; the ledger's retry delay (a minute) is let pass by dating the record back.
    clock.advance(3601);
    await keeper.redis.hset(
      keeper.keys.ledgerIntent(key),
      "updatedAt",
      String(Math.floor(Date.now() / 1000) - 120),
    );
    const claimed = await eventually(
      "the claim confirmed after settlement",
      async () => {
        const row = await keeper.ledger.get(key);
        return row?.status === "confirmed" ? row : undefined;
      },
      60_000,
    );
    expect(claimed.tries).toBe(2);
    expect((await usdcBalance(sandbox, wallet, sandbox.usdcMint)) - before).toBe(BigInt(held.payoutUsd));
    const metrics = await keeper.metrics.render();
    expect(metrics).not.toMatch(/keeper_transactions_total\{kind="claim",outcome="failed"\} [1-9]/);
  }, 120_000);
});
