import { Connection } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningKeeper } from "../../src/app/start-keeper.js";
import type { Position } from "../../src/core/schemas/prediction.js";
import type { LocalChain } from "../../src/sandbox/chain/local-chain.js";
import type { RunningSandbox } from "../../src/sandbox/index.js";
import { RedisAttemptStore } from "../../src/signer/attempt-store.js";
import {
  eventually,
  loadTestConfig,
  positionsOf,
  startTestKeeper,
  startTestSandbox,
  usdcBalance,
  writeKeeperConfig,
} from "../helpers/keeper-harness.js";
import { countLandedClaims } from "../helpers/landed.js";
import { testRedis } from "../helpers/redis.js";

/** The chain drops every send while this is set: a transaction can only expire. */
const DROP_EVERY_SEND = 1_000_000;

describe("claims whose blockhash expires, end to end: the whole keeper rebuilds each and it lands once", () => {
  let sandbox: RunningSandbox;
  let chain: LocalChain;
  let keeper: RunningKeeper;
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let wallet: string;
  let winners: Position[];
  let paidBefore: bigint;
  /** Claim payouts that landed on chain, by position. */
  let landedClaims: Map<string, number>;

  beforeAll(async () => {
    // One wallet, so every claim is signed at once (the signer's concurrency is 16).
    ({ sandbox } = await startTestSandbox({ walletCount: 1 }));
    if (!sandbox.chain) throw new Error("the sandbox runs no chain");
    chain = sandbox.chain.chain;
    landedClaims = countLandedClaims(sandbox);
    redis = await testRedis("e2e-claim-expiry");
    wallet = sandbox.wallets[0] ?? "";
    winners = (await positionsOf(sandbox, wallet)).filter((p) => p.claimable && !p.claimed);
    paidBefore = await usdcBalance(sandbox, wallet, sandbox.usdcMint);
  }, 60_000);

  afterAll(async () => {
    chain?.faults.reset();
    await keeper?.stop();
    await sandbox?.close();
    await redis?.cleanup();
  });

  it("records each first signature as expired, builds a second transaction, confirms it, pays once", async () => {
    expect(winners.length).toBeGreaterThan(0);
    const claimKeys = winners.map((p) => `claim-${p.pubkey}`).sort();
    // Every send of the first transactions is lost, so each can only expire.
    chain.dropFirstSends(DROP_EVERY_SEND);
    const config = await loadTestConfig(await writeKeeperConfig(sandbox, redis.prefix));
    ({ keeper } = await startTestKeeper(config, sandbox));
    const running = keeper;

    // The signer found each first transaction expired (the ledger keeps its signature) and the builder
    // made the second one, whose sends are still lost.
    const expiredSignatures = await eventually(
      "every claim's first transaction expired and rebuilt",
      async () => {
        const rows = (await running.ledger.list()).filter((r) => r.kind === "claim");
        const rebuilt = rows.filter((r) => r.builds >= 2 && r.status !== "confirmed" && r.signature);
        return rebuilt.length === claimKeys.length
          ? new Map(rebuilt.map((r) => [r.key, r.signature ?? ""]))
          : undefined;
      },
      60_000,
    );
    chain.faults.reset();

    const rows = await eventually(
      "every claim confirmed",
      async () => {
        const claims = (await running.ledger.list()).filter((r) => r.kind === "claim");
        return claims.length === claimKeys.length && claims.every((r) => r.status === "confirmed")
          ? claims
          : undefined;
      },
      60_000,
    );
    expect(rows.map((r) => r.key).sort()).toEqual(claimKeys);
    for (const row of rows) expect(row).toMatchObject({ status: "confirmed", builds: 2, tries: 1 });

    // None of the expired signatures is on chain; each rebuilt one is, as the signer's second attempt.
    const connection = new Connection(sandbox.chain?.url ?? "", "confirmed");
    const attempts = new RedisAttemptStore(redis.redis, `${redis.prefix}:`);
    for (const row of rows) {
      const first = expiredSignatures.get(row.key) ?? "";
      expect(row.signature).not.toBe(first);
      expect(await attempts.get(row.key)).toMatchObject({
        status: "confirmed",
        attempt: 2,
        signature: row.signature,
      });
      const [firstStatus, secondStatus] = (
        await connection.getSignatureStatuses([first, row.signature ?? ""], {
          searchTransactionHistory: true,
        })
      ).value;
      expect(firstStatus).toBeNull();
      expect(secondStatus?.err).toBeNull();
    }

    // Exactly one claim landed per position, and the owner got exactly one payout of each.
    for (const p of winners) expect(landedClaims.get(p.pubkey)).toBe(1);
    const payouts = rows.reduce((sum, r) => sum + BigInt(r.amountMicroUsd ?? "0"), 0n);
    expect(payouts).toBeGreaterThan(0n);
    expect(await usdcBalance(sandbox, wallet, sandbox.usdcMint)).toBe(paidBefore + payouts);
    const after = await positionsOf(sandbox, wallet);
    for (const p of winners) expect(after.find((a) => a.pubkey === p.pubkey)?.claimed).toBe(true);

    const metrics = await running.metrics.render();
    expect(metrics).toContain(`keeper_transactions_total{kind="claim",outcome="expired"} ${winners.length}`);
    expect(metrics).toContain(
      `keeper_transactions_total{kind="claim",outcome="confirmed"} ${winners.length}`,
    );
  }, 120_000);
});
