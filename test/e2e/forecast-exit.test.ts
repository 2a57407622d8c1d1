import { Connection, PublicKey, VersionedTransaction } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningKeeper } from "../../src/app/start-keeper.js";
import type { Position } from "../../src/core/schemas/prediction.js";
import type { RunningSandbox } from "../../src/sandbox/index.js";
import { openForecastPosition } from "../helpers/forecast-position.js";
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
 * A Forecast (bisonfi) position, opened through the service's execute endpoint, exited by exit-rules
 * through the same endpoint: the service co-signs the atomic swap there, so the path is the only one
 * that lands. The proceeds are read on the local chain.
 */
async function keeperFor(sandbox: RunningSandbox, prefix: string, position: Position, submit: string) {
  const extra = `strategies:
  - name: exit-rules
    overrides:
      - match: { marketId: "${position.marketId}", side: yes }
        rules: { takeProfitPct: 20 }
`;
  const file = await writeKeeperConfig(sandbox, prefix, {
    extra,
    walletYaml: `wallets:\n  - pubkey: ${position.ownerPubkey}\n`,
  });
  const config = await loadTestConfig(file);
  return startTestKeeper(
    { ...config, service: { ...config.service, predictionSubmit: submit as "auto" } },
    sandbox,
  );
}

describe("Forecast exit through the service's execute endpoint", () => {
  let sandbox: RunningSandbox;
  let keeper: RunningKeeper | undefined;
  let redis: Awaited<ReturnType<typeof testRedis>>;

  beforeAll(async () => {
    ({ sandbox } = await startTestSandbox());
    redis = await testRedis("e2e-forecast-exit");
  }, 60_000);

  afterAll(async () => {
    await keeper?.stop();
    await sandbox?.close();
    await redis?.cleanup();
  });

  it("with predictionSubmit: rpc the service's co-signature is missing: the signer refuses, nothing is sold", async () => {
    const position = await openForecastPosition(sandbox, 1);
    const wallet = position.ownerPubkey;
    const before = await usdcBalance(sandbox, wallet, sandbox.usdcMint);
    ({ keeper } = await keeperFor(sandbox, `${redis.prefix}-rpc`, position, "rpc"));
    sandbox.world.setPrice(
      position.marketId,
      Math.min(950_000, Math.round(Number(position.avgPriceUsd) * 1.6)),
    );
    const row = await eventually("the close refused", async () => {
      const close = (await keeper?.ledger.list())?.find((r) => r.kind === "close");
      return close?.status === "refused" ? close : undefined;
    });
    expect(row.reason).toBe("foreign_signer");
    expect(await usdcBalance(sandbox, wallet, sandbox.usdcMint)).toBe(before);
    expect((await positionsOf(sandbox, wallet)).some((p) => p.pubkey === position.pubkey)).toBe(true);
    await keeper?.stop();
    keeper = undefined;
  }, 90_000);

  it("exits a Forecast position on take-profit through POST /prediction/v1/execute; the proceeds land on chain", async () => {
    const position = await openForecastPosition(sandbox, 0);
    const wallet = position.ownerPubkey;
    sandbox.world.setPrice(position.marketId, Number(position.avgPriceUsd));
    ({ keeper } = await keeperFor(sandbox, redis.prefix, position, "auto"));
    const before = await usdcBalance(sandbox, wallet, sandbox.usdcMint);
    sandbox.world.setPrice(
      position.marketId,
      Math.min(950_000, Math.round(Number(position.avgPriceUsd) * 1.6)),
    );

    const row = await eventually(
      "the Forecast close confirmed",
      async () => {
        const close = (await keeper?.ledger.list())?.find((r) => r.kind === "close");
        if (close?.status === "refused" || close?.status === "failed")
          throw new Error(`close ${close.status}: ${close.reason ?? ""} ${close.error ?? ""}`);
        return close?.status === "confirmed" ? close : undefined;
      },
      60_000,
    );
    expect(row.key).toBe(`close-${position.pubkey}`);
    expect(row.execution).toMatchObject({
      context: { type: "bisonfi_swap" },
      executionModel: "atomic_swap",
      settlement: "auto",
      requiredSigners: [wallet, sandbox.chain?.assets.vault.publicKey.toBase58()],
    });
    // Landed, with the service's signature beside the wallet's; paid to the micro-dollar announced.
    const connection = new Connection(sandbox.chain?.url ?? "", "confirmed");
    const landed = await connection.getTransaction(row.signature ?? "", {
      commitment: "confirmed",
      maxSupportedTransactionVersion: 0,
    });
    expect(landed?.meta?.err).toBeNull();
    expect(landed?.transaction.signatures).toHaveLength(2);
    expect((await usdcBalance(sandbox, wallet, sandbox.usdcMint)) - before).toBe(
      BigInt(row.amountMicroUsd ?? "-1"),
    );
    expect((await positionsOf(sandbox, wallet)).some((p) => p.pubkey === position.pubkey)).toBe(false);

    // What Keeper signed and recorded lacks the service's signature: sent to the RPC, it cannot land.
    const attempt = await keeper?.redis.hgetall(`${keeper?.keys.attemptsPrefix}attempt:${row.key}`);
    const recorded = VersionedTransaction.deserialize(
      Buffer.from(attempt?.signedTransaction ?? "", "base64"),
    );
    const vault = sandbox.chain?.assets.vault.publicKey ?? PublicKey.default;
    const slot = recorded.message.staticAccountKeys.findIndex((k) => k.equals(vault));
    expect(slot).toBeGreaterThan(0);
    expect(recorded.signatures[slot]?.every((b) => b === 0)).toBe(true);
    const metrics = await keeper?.metrics.render();
    expect(metrics).toContain('keeper_prediction_executes_total{outcome="success"} 1');
  }, 120_000);
});
