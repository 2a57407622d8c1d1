import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningKeeper } from "../../src/app/start-keeper.js";
import { loadConfig } from "../../src/config/load-config.js";
import type { Position } from "../../src/core/schemas/prediction.js";
import type { LedgerRow } from "../../src/keeper/state/ledger.js";
import type { RunningSandbox } from "../../src/sandbox/index.js";
import { RedisAttemptStore } from "../../src/signer/attempt-store.js";
import {
  eventually,
  positionsOf,
  startTestKeeper,
  startTestSandbox,
  usdcBalance,
  writeKeeperConfig,
} from "../helpers/keeper-harness.js";
import { countLandedClaims } from "../helpers/landed.js";
import { lastPollsOf } from "../helpers/last-polls.js";
import { type TestCluster, testCluster } from "../helpers/redis-cluster.js";

/** The port of the master that serves `key`'s slot. */
async function masterPortOf(redis: Redis, key: string): Promise<number> {
  const slot = Number(await redis.call("CLUSTER", "KEYSLOT", key));
  const ranges = (await redis.call("CLUSTER", "SLOTS")) as Array<[number, number, [string, number]]>;
  const range = ranges.find(([start, end]) => slot >= start && slot <= end);
  if (!range) throw new Error(`no master serves slot ${slot}`);
  return range[2][1];
}

describe("a keeper on a three-master Redis Cluster, a master restarted with claims in flight", () => {
  let cluster: TestCluster;
  let sandbox: RunningSandbox;
  let keeper: RunningKeeper | undefined;
  const prefix = `t-e2e-cluster-${Date.now().toString(36)}`;

  beforeAll(async () => {
    cluster = await testCluster();
    // Slots of 400 ms: a blockhash outlives the master's restart, so held sends land once released.
    ({ sandbox } = await startTestSandbox({ walletCount: 6, slotMs: 400 }));
  }, 60_000);
  afterAll(async () => {
    await keeper?.stop();
    await sandbox?.close();
    await cluster?.deleteKeys(prefix);
    await cluster?.stop();
  });

  it("claims every winner once, on chain and in the ledger, across the master's restart", async () => {
    const config = await loadConfig({
      file: await writeKeeperConfig(sandbox, prefix),
      env: { KEEPER_REDIS_CLUSTER: cluster.nodes.join(",") },
    });
    const initial: Position[] = (
      await Promise.all(sandbox.wallets.map((w) => positionsOf(sandbox, w)))
    ).flat();
    const winners = initial.filter((p) => p.claimable && !p.claimed);
    expect(winners.length).toBeGreaterThan(1);
    const open = initial.find((p) => p.marketMetadata.status === "open" && !p.claimable);
    if (!open) throw new Error("the sandbox holds no open position to resolve");
    const before = new Map<string, bigint>();
    for (const w of sandbox.wallets) before.set(w, await usdcBalance(sandbox, w, sandbox.usdcMint));
    const landed = countLandedClaims(sandbox);

    // The chain holds every send until released: claims are signed, recorded and sent, not landed,
    // when the master goes down.
    const chain = sandbox.chain?.chain;
    if (!chain) throw new Error("the sandbox runs no chain");
    chain.faults.landDelayMs = 10 * 60_000;
    ({ keeper } = await startTestKeeper(config, sandbox));
    const running = keeper;
    const attempts = new RedisAttemptStore(running.redis, running.keys.attemptsPrefix);
    const sentAndHeld = async (): Promise<Map<string, string>> => {
      const found = new Map<string, string>();
      for (const row of await running.ledger.list()) {
        const attempt = row.status === "sending" ? await attempts.get(row.key) : undefined;
        if (attempt?.status === "sent" && attempt.signature && chain.isHeld(attempt.signature))
          found.set(row.key, attempt.signature);
      }
      return found;
    };
    await eventually("claims signed, recorded and sent", async () =>
      (await sentAndHeld()).size > 0 ? true : undefined,
    );
    const recorded = await sentAndHeld();

    // A market resolves as the ledger's master goes down: its winners' claims start during the outage.
    sandbox.world.resolveMarket(open.marketId, open.isYes ? "yes" : "no");
    const expected = [...winners, open];
    const ledgerPort = await masterPortOf(running.redis, running.keys.ledgerIndex);
    await cluster.restartMaster(ledgerPort);
    chain.faults.landDelayMs = 0;
    chain.landHeldSends();

    const rows = await eventually(
      "every winner's claim confirmed after the restart",
      async () => {
        const claims = (await running.ledger.list()).filter((r: LedgerRow) => r.kind === "claim");
        return claims.filter((r) => r.status === "confirmed").length >= expected.length ? claims : undefined;
      },
      90_000,
    ).catch(async (error: Error) => {
      const state = (await running.ledger.list()).map(
        (r) => `${r.key.slice(0, 20)} ${r.status} ${r.error ?? ""}`,
      );
      throw new Error(`${error.message}\n${state.join("\n")}`);
    });

    expect(rows.map((r) => r.key).sort()).toEqual(expected.map((p) => `claim-${p.pubkey}`).sort());
    // The records written before the restart survived it (append-only file): the sends held then
    // were followed by their recorded signature, never signed again.
    for (const [key, signature] of recorded) {
      const attempt = await attempts.get(key);
      expect(attempt?.attempt).toBe(1);
      expect(attempt?.signature).toBe(signature);
    }
    // On chain: each claim landed once, and each owner received exactly its payouts.
    for (const p of expected) expect(landed.get(p.pubkey)).toBe(1);
    for (const wallet of sandbox.wallets) {
      const paid = rows
        .filter((r) => r.wallet === wallet)
        .reduce((sum, r) => sum + BigInt(r.amountMicroUsd ?? "0"), 0n);
      expect((await usdcBalance(sandbox, wallet, sandbox.usdcMint)) - (before.get(wallet) ?? 0n)).toBe(paid);
    }
    const after = (await Promise.all(sandbox.wallets.map((w) => positionsOf(sandbox, w)))).flat();
    for (const p of expected) expect(after.find((a) => a.pubkey === p.pubkey)?.claimed).toBe(true);

    // More sweeps change nothing: no claim is admitted or lands a second time.
    const ticks = await lastPollsOf(running.redis, running.keys);
    await eventually("two more polls of every wallet", async () => {
      const now = await lastPollsOf(running.redis, running.keys);
      return sandbox.wallets.every((w) => Number(now[w]) >= Number(ticks[w]) + 2) ? true : undefined;
    });
    expect((await running.ledger.list()).filter((r) => r.kind === "claim")).toHaveLength(expected.length);
    for (const p of expected) expect(landed.get(p.pubkey)).toBe(1);
  }, 180_000);
});
