import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Fastify from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningKeeper } from "../../src/app/start-keeper.js";
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

describe("auto-claim end to end: sandbox service, local chain, real Redis, whole keeper", () => {
  let sandbox: RunningSandbox;
  let keeper: RunningKeeper;
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let usdcMint: string;
  const before = new Map<string, bigint>();
  const webhook = Fastify();
  const notifications: Array<{ text: string; keeper: { event: string; intent?: string } }> = [];

  beforeAll(async () => {
    ({ sandbox } = await startTestSandbox());
    redis = await testRedis("e2e-claim");
    usdcMint = sandbox.usdcMint;
    for (const wallet of sandbox.wallets) before.set(wallet, await usdcBalance(sandbox, wallet, usdcMint));
    webhook.post("/hook", async (request) => {
      notifications.push(request.body as (typeof notifications)[number]);
      return { ok: true };
    });
    const hookUrl = `${await webhook.listen({ port: 0, host: "127.0.0.1" })}/hook`;
    const hookFile = join(await mkdtemp(join(tmpdir(), "keeper-hook-")), "url");
    await writeFile(hookFile, hookUrl, { mode: 0o600 });
    const config = await loadTestConfig(
      await writeKeeperConfig(sandbox, redis.prefix, {
        extra: `notifications:\n  webhookUrlFile: ${hookFile}\n`,
      }),
    );
    ({ keeper } = await startTestKeeper(config, sandbox));
  }, 60_000);

  afterAll(async () => {
    await keeper?.stop();
    await sandbox?.close();
    await redis?.cleanup();
    await webhook.close();
  });

  it("claims every winning position exactly once, pays out on chain, and leaves losers alone", async () => {
    const initial = (await Promise.all(sandbox.wallets.map((w) => positionsOf(sandbox, w)))).flat();
    const winners = initial.filter((p) => p.claimable && !p.claimed);
    const losers = initial.filter((p) => !p.claimable && p.marketMetadata.result !== null);
    expect(winners.length).toBeGreaterThan(0);
    expect(losers.length).toBeGreaterThan(0);
    // The sandbox answers as the live service: a closed market's positions have no valuation or pnl.
    for (const p of [...winners, ...losers])
      expect([p.valueUsd, p.markPriceUsd, p.pnlUsd, p.pnlUsdPercent, p.sellPriceUsd]).toEqual([
        null,
        null,
        null,
        null,
        null,
      ]);

    // A market resolving while the keeper runs: one open position's side wins now.
    const open = initial.find((p) => p.marketMetadata.status === "open" && !p.claimable);
    expect(open).toBeDefined();
    if (!open) return;
    sandbox.world.resolveMarket(open.marketId, open.isYes ? "yes" : "no");
    const expected = [...winners, open];

    const rows = await eventually(
      "every winning position claimed and confirmed",
      async () => {
        const ledger = await keeper.ledger.list();
        const confirmed = ledger.filter((r) => r.kind === "claim" && r.status === "confirmed");
        return confirmed.length >= expected.length ? ledger : undefined;
      },
      60_000,
    );

    const claimRows = rows.filter((r) => r.kind === "claim");
    expect(claimRows.map((r) => r.key).sort()).toEqual(expected.map((p) => `claim-${p.pubkey}`).sort());
    expect(claimRows.every((r) => r.status === "confirmed" && r.signature)).toBe(true);
    for (const loser of losers) expect(rows.find((r) => r.key.includes(loser.pubkey))).toBeUndefined();

    // The service sees them claimed, and the payouts are on the owners' token accounts.
    for (const wallet of sandbox.wallets) {
      const paid = expected
        .filter((p) => p.ownerPubkey === wallet)
        .reduce(
          (sum, p) =>
            sum + BigInt(claimRows.find((r) => r.key === `claim-${p.pubkey}`)?.amountMicroUsd ?? "0"),
          0n,
        );
      const now = await usdcBalance(sandbox, wallet, usdcMint);
      expect(now - (before.get(wallet) ?? 0n)).toBe(paid);
    }
    const after = (await Promise.all(sandbox.wallets.map((w) => positionsOf(sandbox, w)))).flat();
    for (const p of expected) expect(after.find((a) => a.pubkey === p.pubkey)?.claimed).toBe(true);

    // More polls change nothing: no second claim of anything.
    const ticks = await lastPollsOf(keeper.redis, keeper.keys);
    await eventually("two more polls of every wallet", async () => {
      const now = await lastPollsOf(keeper.redis, keeper.keys);
      return sandbox.wallets.every((w) => Number(now[w]) >= Number(ticks[w]) + 2) ? true : undefined;
    });
    const again = (await keeper.ledger.list()).filter((r) => r.kind === "claim");
    expect(again).toHaveLength(expected.length);

    // A person was told about each claim, once.
    const told = await eventually("a webhook notification per claim", async () => {
      const confirmedNotes = notifications.filter((n) => n.keeper.event === "confirmed");
      return confirmedNotes.length >= expected.length ? confirmedNotes : undefined;
    });
    expect(told.map((n) => n.keeper.intent).sort()).toEqual(expected.map((p) => `claim-${p.pubkey}`).sort());

    const metrics = await keeper.metrics.render();
    expect(metrics).toContain(
      `keeper_transactions_total{kind="claim",outcome="confirmed"} ${expected.length}`,
    );
    expect(metrics).toMatch(/keeper_claimed_usd_total [1-9]/);
    // Every position was read: none skipped as unreadable.
    expect(metrics).not.toMatch(/keeper_api_items_skipped_total\{[^}]*\} [1-9]/);
  }, 120_000);
});
