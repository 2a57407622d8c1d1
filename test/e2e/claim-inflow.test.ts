import { Keypair } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningKeeper } from "../../src/app/start-keeper.js";
import type { KeeperConfig } from "../../src/config/load-config.js";
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
import { countLandedClaims } from "../helpers/landed.js";
import { testRedis } from "../helpers/redis.js";

/**
 * The keeper's sign path hands the policy what each claim must bring in: the position's payout, in
 * the payout mints of the config. A keeper that expects payouts in a mint the service does not pay in
 * signs no claim: each is refused `inflow_short`, naming the mint and the position's payout, and
 * nothing lands. Whole keeper, sandbox service, local chain, real Redis.
 */
describe("claims must pay the wallet, end to end", () => {
  let sandbox: RunningSandbox;
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let config: KeeperConfig;
  let keeper: RunningKeeper | undefined;
  let wallet: string;
  /** Claim payouts that landed on chain, by position. */
  let landedClaims: Map<string, number>;

  beforeAll(async () => {
    ({ sandbox } = await startTestSandbox({ walletCount: 1 }));
    landedClaims = countLandedClaims(sandbox);
    redis = await testRedis("e2e-claim-inflow");
    wallet = sandbox.wallets[0] ?? "";
    config = await loadTestConfig(await writeKeeperConfig(sandbox, redis.prefix));
  }, 60_000);

  afterAll(async () => {
    await keeper?.stop();
    await sandbox?.close();
    await redis?.cleanup();
  });

  it("refuses every claim whose payout does not arrive in a payout mint, and signs none", async () => {
    const winners = (await positionsOf(sandbox, wallet)).filter((p) => p.claimable && !p.claimed);
    expect(winners.length).toBeGreaterThan(0);
    const usdcBefore = await usdcBalance(sandbox, wallet, sandbox.usdcMint);
    const elsewhere = Keypair.generate().publicKey.toBase58();

    const started = await startTestKeeper(
      { ...config, signer: { ...config.signer, payoutMints: [elsewhere] } },
      sandbox,
    );
    keeper = started.keeper;
    const refused = await eventually(
      "every claim refused",
      async () => {
        const rows = (await started.keeper.ledger.list()).filter((r) => r.kind === "claim");
        return rows.length === winners.length && rows.every((r) => r.status === "refused") ? rows : undefined;
      },
      60_000,
    );
    for (const row of refused) {
      const payout = BigInt(winners.find((p) => `claim-${p.pubkey}` === row.key)?.payoutUsd ?? "0");
      // The payout less the default tolerance of 50 bps.
      const least = (payout * 9_950n) / 10_000n;
      expect(row.reason).toBe("inflow_short");
      expect(row.error).toContain(`brings the wallet 0 of mint ${elsewhere}, expected at least ${least}`);
      expect(row.signature).toBeUndefined();
    }
    expect(landedClaims.size).toBe(0);
    expect(await usdcBalance(sandbox, wallet, sandbox.usdcMint)).toBe(usdcBefore);
  }, 90_000);
});
