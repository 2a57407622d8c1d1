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
import { testRedis } from "../helpers/redis.js";

/**
 * The RPC node cannot simulate for a while (an outage, a 429 storm): every sign job uses up its
 * attempts. The intents must end `failed` (admitted again later), never stay `sending` nor become
 * `refused`; once the node is back, every claim lands once.
 */
describe("an RPC outage while claims are signed", () => {
  let sandbox: RunningSandbox;
  let keeper: RunningKeeper;
  let redis: Awaited<ReturnType<typeof testRedis>>;

  beforeAll(async () => {
    // Mainnet-like slots: a blockhash lives about a minute, so the outage, not expiry, ends the jobs.
    ({ sandbox } = await startTestSandbox({ slotMs: 400 }));
    redis = await testRedis("e2e-rpc-outage");
  }, 60_000);

  afterAll(async () => {
    await keeper?.stop();
    await sandbox?.close();
    await redis?.cleanup();
  });

  it("fails the intents whose sign jobs ran out, then claims each winner once when the node is back", async () => {
    const chain = sandbox.chain?.chain;
    if (!chain) throw new Error("the sandbox runs no chain");
    const winners = (await Promise.all(sandbox.wallets.map((w) => positionsOf(sandbox, w))))
      .flat()
      .filter((p) => p.claimable && !p.claimed);
    expect(winners.length).toBeGreaterThan(1);
    const before = new Map<string, bigint>();
    for (const w of sandbox.wallets) before.set(w, await usdcBalance(sandbox, w, sandbox.usdcMint));

    chain.faults.methodErrors = {
      simulateTransaction: { rate: 1, code: -32005, message: "node is unhealthy" },
    };
    const config = await loadTestConfig(await writeKeeperConfig(sandbox, redis.prefix));
    ({ keeper } = await startTestKeeper(
      { ...config, queues: { ...config.queues, attempts: 2, backoffMs: 100 } },
      sandbox,
    ));

    const keys = winners.map((p) => `claim-${p.pubkey}`);
    await eventually(
      "every claim failed by its exhausted sign job",
      async () => {
        const rows = await keeper.ledger.list();
        const claims = rows.filter((r) => keys.includes(r.key));
        return claims.length === keys.length && claims.every((r) => r.status === "failed") ? true : undefined;
      },
      120_000,
    );
    const failed = (await keeper.ledger.list()).filter((r) => keys.includes(r.key));
    // Failed for what the node did, not refused for what the transaction does.
    for (const row of failed) expect(row.error).toMatch(/simulateTransaction/);

    chain.faults.methodErrors = {};
    const confirmed = await eventually(
      "every claim confirmed once the node is back",
      async () => {
        const claims = (await keeper.ledger.list()).filter((r) => keys.includes(r.key));
        return claims.every((r) => r.status === "confirmed") ? claims : undefined;
      },
      120_000,
    );
    expect(confirmed.every((r) => (r.tries ?? 1) >= 2)).toBe(true);
    for (const wallet of sandbox.wallets) {
      const expected = confirmed
        .filter((r) => r.wallet === wallet)
        .reduce((sum, r) => sum + BigInt(r.amountMicroUsd ?? "0"), 0n);
      expect((await usdcBalance(sandbox, wallet, sandbox.usdcMint)) - (before.get(wallet) ?? 0n)).toBe(
        expected,
      );
    }
  }, 300_000);
});
