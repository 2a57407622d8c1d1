import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningKeeper } from "../../src/app/start-keeper.js";
import type { Position } from "../../src/core/schemas/prediction.js";
import type { PollJobData } from "../../src/keeper/queues/queues.js";
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
import { lastPollsOf } from "../helpers/last-polls.js";
import { testRedis } from "../helpers/redis.js";

/**
 * The sweeps are set to once a day, so after the sweep at start only the market watcher can act: a
 * claim that confirms while the test runs was asked for by the watcher (from the index, or by a poll).
 */
describe("market watcher end to end: a market resolves, only its winners claim, from the index", () => {
  let sandbox: RunningSandbox;
  let keeper: RunningKeeper;
  let redis: Awaited<ReturnType<typeof testRedis>>;

  beforeAll(async () => {
    ({ sandbox } = await startTestSandbox({ walletCount: 6 }));
    redis = await testRedis("e2e-watch");
    const config = await loadTestConfig(
      await writeKeeperConfig(sandbox, redis.prefix, {
        pollPositions: "0 0 3 * * *",
        pollOrders: "0 0 3 * * *",
        extra: `watcher:\n  schedule: "* * * * * *"\n`,
      }),
    );
    ({ keeper } = await startTestKeeper(config, sandbox));
  }, 60_000);

  afterAll(async () => {
    await keeper?.stop();
    await sandbox?.close();
    await redis?.cleanup();
  });

  /** Every poll job of the run (the queue keeps the last 1,000 finished ones), by wallet. */
  async function pollsByWallet(): Promise<Map<string, PollJobData[]>> {
    const jobs = await keeper.queues.poll.getJobs([
      "completed",
      "failed",
      "active",
      "waiting",
      "prioritized",
      "delayed",
    ]);
    const out = new Map<string, PollJobData[]>();
    for (const job of jobs)
      if (job?.data) out.set(job.data.wallet, [...(out.get(job.data.wallet) ?? []), job.data]);
    return out;
  }

  it("claims the winning side's positions from the index, ahead of the daily sweep, polling nobody", async () => {
    // The sweep at start fills the index and claims the genesis winners.
    await eventually(
      "every wallet swept once and every genesis claim done",
      async () => {
        const polled = await lastPollsOf(keeper.redis, keeper.keys);
        if (!sandbox.wallets.every((w) => polled[w] !== undefined)) return undefined;
        if ((await keeper.redis.hlen(keeper.keys.holdingsMarkets)) === 0) return undefined;
        const ledger = await keeper.ledger.list();
        if (ledger.some((row) => !["confirmed", "failed", "refused"].includes(row.status))) return undefined;
        const positions = (await Promise.all(sandbox.wallets.map((w) => positionsOf(sandbox, w)))).flat();
        return positions.some((p) => p.claimable && !p.claimed) ? undefined : true;
      },
      90_000,
    );

    // An open market some wallets hold and others do not; its result makes one side win.
    const positions = (await Promise.all(sandbox.wallets.map((w) => positionsOf(sandbox, w)))).flat();
    const openHeld = positions.filter(
      (p) => p.marketMetadata.status === "open" && !p.claimed && BigInt(p.sizeUsd) > 0n,
    );
    const byMarket = new Map<string, Position[]>();
    for (const p of openHeld) byMarket.set(p.marketId, [...(byMarket.get(p.marketId) ?? []), p]);
    const [marketId, holders] = [...byMarket].sort((a, b) => b[1].length - a[1].length)[0] ?? [];
    expect(marketId).toBeDefined();
    if (!marketId || !holders) return;
    const winningSide = holders[0]?.isYes ? "yes" : "no";
    const winners = holders.filter((p) => (p.isYes ? "yes" : "no") === winningSide);
    const winnerWallets = new Set(winners.map((p) => p.ownerPubkey));
    const others = sandbox.wallets.filter((w) => !winnerWallets.has(w));
    expect(others.length).toBeGreaterThan(0);

    const usdc = sandbox.usdcMint;
    const before = new Map<string, bigint>();
    for (const w of sandbox.wallets) before.set(w, await usdcBalance(sandbox, w, usdc));
    const pollsBefore = await pollsByWallet();

    sandbox.world.resolveMarket(marketId, winningSide);

    const rows = await eventually(
      "a confirmed claim of every winning position",
      async () => {
        const ledger = await keeper.ledger.list();
        const done = winners.every((p) =>
          ledger.some((r) => r.key === `claim-${p.pubkey}` && r.status === "confirmed"),
        );
        return done ? ledger : undefined;
      },
      90_000,
    );

    // The payouts landed on the winners' token accounts.
    for (const wallet of winnerWallets) {
      const paid = winners
        .filter((p) => p.ownerPubkey === wallet)
        .reduce(
          (sum, p) => sum + BigInt(rows.find((r) => r.key === `claim-${p.pubkey}`)?.amountMicroUsd ?? "0"),
          0n,
        );
      expect(paid).toBeGreaterThan(0n);
      expect((await usdcBalance(sandbox, wallet, usdc)) - (before.get(wallet) ?? 0n)).toBe(paid);
    }

    // The winners' claims came from the holdings index (auto-claim's claimFromIndex): nobody was
    // polled, and nobody else received anything.
    const pollsAfter = await pollsByWallet();
    for (const wallet of sandbox.wallets)
      expect((pollsAfter.get(wallet) ?? []).length).toBe((pollsBefore.get(wallet) ?? []).length);
    for (const wallet of others) expect(await usdcBalance(sandbox, wallet, usdc)).toBe(before.get(wallet));

    const metrics = await keeper.metrics.render();
    expect(metrics).toMatch(/keeper_index_claims_total\{outcome="claimed"\} [1-9]/);
    expect(metrics).toMatch(/keeper_watched_markets [1-9]/);
    expect(metrics).toMatch(/keeper_watcher_requests_total\{endpoint="list\w+"\} [1-9]/);
    expect(metrics).toMatch(/keeper_market_reaction_seconds_count\{trigger="resolved"\} [1-9]/);
  }, 240_000);
});

describe("market watcher end to end: a price crosses a take-profit, only its holders are polled and close", () => {
  let sandbox: RunningSandbox;
  let keeper: RunningKeeper;
  let redis: Awaited<ReturnType<typeof testRedis>>;

  beforeAll(async () => {
    ({ sandbox } = await startTestSandbox({ walletCount: 5 }));
    redis = await testRedis("e2e-watch-price");
    const config = await loadTestConfig(
      await writeKeeperConfig(sandbox, redis.prefix, {
        pollPositions: "0 0 3 * * *",
        pollOrders: "0 0 3 * * *",
        // The bid at a mark of $0.985 is $0.98, $0.9653 net of the estimated 1.5 % sell fee: above 0.95.
        extra: `watcher:\n  schedule: "* * * * * *"\nstrategies:\n  - name: exit-rules\n    takeProfitPriceUsd: "0.95"\n`,
      }),
    );
    ({ keeper } = await startTestKeeper(config, sandbox));
  }, 60_000);

  afterAll(async () => {
    await keeper?.stop();
    await sandbox?.close();
    await redis?.cleanup();
  });

  it("polls the holders of the moved market at once and their closes land", async () => {
    await eventually(
      "every wallet swept once",
      async () => {
        const polled = await lastPollsOf(keeper.redis, keeper.keys);
        return sandbox.wallets.every((w) => polled[w] !== undefined) ? true : undefined;
      },
      60_000,
    );
    const positions = (await Promise.all(sandbox.wallets.map((w) => positionsOf(sandbox, w)))).flat();
    const candidates = positions.filter(
      (p) =>
        p.marketMetadata.status === "open" &&
        p.isYes &&
        !p.claimed &&
        p.openOrders === 0 &&
        BigInt(p.sizeUsd) > 0n &&
        p.markPriceUsd !== null &&
        BigInt(p.markPriceUsd) < 900_000n,
    );
    const chosen = candidates[0];
    expect(chosen).toBeDefined();
    if (!chosen) return;
    const marketId = chosen.marketId;
    const closers = candidates.filter((p) => p.marketId === marketId);
    const holderWallets = new Set(positions.filter((p) => p.marketId === marketId).map((p) => p.ownerPubkey));

    sandbox.world.setPrice(marketId, 985_000);

    await eventually(
      "a confirmed close of every yes position of the moved market",
      async () => {
        const ledger = await keeper.ledger.list();
        return closers.every((p) =>
          ledger.some((r) => r.key === `close-${p.pubkey}` && r.status === "confirmed"),
        )
          ? true
          : undefined;
      },
      90_000,
    );
    // The service lists them sold.
    for (const p of closers) {
      const after = (await positionsOf(sandbox, p.ownerPubkey)).find((a) => a.pubkey === p.pubkey);
      expect(after === undefined || BigInt(after.sizeUsd) === 0n || after.contracts === "0").toBe(true);
    }
    const jobs = await keeper.queues.poll.getJobs([
      "completed",
      "failed",
      "active",
      "waiting",
      "prioritized",
      "delayed",
    ]);
    const forMarket = jobs.filter((j) => j?.data.target?.marketIds.includes(marketId));
    expect(forMarket.length).toBeGreaterThan(0);
    // (A wallet polled for a resolved market in the same cycle files its one poll under `resolved`;
    // the counter below counts each trigger.)
    // Only holders of that market were polled for it.
    for (const j of forMarket) expect(holderWallets.has(j.data.wallet)).toBe(true);
    const metrics = await keeper.metrics.render();
    expect(metrics).toMatch(/keeper_targeted_polls_total\{trigger="price"\} [1-9]/);
    expect(metrics).toMatch(/keeper_market_reaction_seconds_count\{trigger="(price|resolved)"\} [1-9]/);
  }, 180_000);
});
