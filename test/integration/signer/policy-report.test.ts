import { createCloseAccountInstruction, createTransferCheckedInstruction } from "@solana/spl-token";
import {
  ComputeBudgetProgram,
  Keypair,
  type PublicKey,
  SystemProgram,
  type VersionedTransaction,
} from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { decodeTransaction, rpcLookupTableLoader } from "../../../src/chain/decode.js";
import { checkTransaction, type PolicyReport } from "../../../src/chain/policy.js";
import { NATIVE_MINT } from "../../../src/chain/programs.js";
import { PolicyRefusal, StaleTransaction, TransientError } from "../../../src/core/errors.js";
import type { Intent } from "../../../src/core/intent.js";
import { type SignerEnv, startSignerEnv } from "./env.js";
import { buildTransaction, toBase64 } from "./tx-builders.js";

/**
 * What the policy reports of transactions it passes, and the figures it compares, on the local chain:
 * the fee it allows, what the simulation shows the wallet losing and gaining, and the block height.
 * A figure read wrong here is an outflow allowed or an inflow not checked.
 */
let env: SignerEnv;
beforeAll(async () => {
  env = await startSignerEnv("policy-report");
});
afterAll(async () => {
  await env?.close();
});

async function check(
  tx: VersionedTransaction,
  options: {
    intent?: Intent;
    lastValidBlockHeight?: number;
    inflow?: Parameters<typeof checkTransaction>[0]["inflow"];
  } = {},
): Promise<PolicyReport> {
  const { lastValidBlockHeight } = await env.connection.getLatestBlockhash("confirmed");
  return checkTransaction({
    decoded: await decodeTransaction(toBase64(tx), rpcLookupTableLoader(env.connection)),
    intent: options.intent ?? env.claimIntent(),
    wallets: env.wallets,
    connection: env.connection,
    config: env.policy,
    lastValidBlockHeight: options.lastValidBlockHeight ?? lastValidBlockHeight,
    ...(options.inflow ? { inflow: options.inflow } : {}),
  });
}

async function refusal(run: Promise<unknown>): Promise<string> {
  try {
    await run;
  } catch (error) {
    if (error instanceof PolicyRefusal) return `${error.reason}: ${error.detail}`;
    throw error;
  }
  throw new Error("not refused");
}

const blockhash = async () => (await env.connection.getLatestBlockhash("confirmed")).blockhash;

describe("policy report", () => {
  it("reports a claim's fee (two signatures and the priority fee), the payout as a negative outflow", async () => {
    const tx = buildTransaction({
      payer: env.wallet,
      blockhash: await blockhash(),
      coSigners: [env.vault],
      instructions: [
        ComputeBudgetProgram.setComputeUnitLimit({ units: 200_000 }),
        ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 1_000 }),
        createTransferCheckedInstruction(
          env.vaultUsdc,
          env.usdc,
          env.walletUsdc,
          env.vault.publicKey,
          5_000_000n,
          6,
        ),
      ],
    });
    const report = await check(tx);
    expect(report).toMatchObject({
      wallet: env.wallet.toBase58(),
      // 2 signatures x 5,000 + 200,000 units x 1,000 micro-lamports.
      feeLamports: 10_200n,
      budget: { unitPriceMicroLamports: 1_000n, unitLimit: 200_000n, priorityFeeLamports: 200n },
      walletTokenAccounts: [env.walletUsdc.toBase58()],
      innerPrograms: [],
      tokensOut: { [env.usdc.toBase58()]: "-5000000" },
    });
    // The simulation charges what the chain charges: the fee, here at most the allowed one.
    expect(report.lamportsOut).toBeGreaterThan(0n);
    expect(report.lamportsOut).toBeLessThanOrEqual(10_200n);
    expect(report.unitsConsumed).toBeGreaterThan(0);
  });

  it("checks a claim's payout against the expected inflow: the exact amount passes, one more is refused", async () => {
    const claim = async () => env.claimTransaction(4_000_000n, await blockhash());
    const inflow = (minRaw: bigint) => ({ what: "claim payout", mints: [env.usdc.toBase58()], minRaw });
    await expect(check(await claim(), { inflow: inflow(4_000_000n) })).resolves.toBeDefined();
    expect(await refusal(check(await claim(), { inflow: inflow(4_000_001n) }))).toBe(
      `inflow_short: simulation: the claim payout brings the wallet 4000000 of mint ${env.usdc.toBase58()}, expected at least 4000001`,
    );
  });

  it("counts SOL coming in as the native mint's inflow, fees not against it", async () => {
    const tx = async () =>
      buildTransaction({
        payer: env.wallet,
        blockhash: await blockhash(),
        coSigners: [env.vault],
        instructions: [
          SystemProgram.transfer({
            fromPubkey: env.vault.publicKey,
            toPubkey: env.wallet,
            lamports: 1_000_000,
          }),
        ],
      });
    const inflow = (minRaw: bigint) => ({ what: "swap output", mints: [NATIVE_MINT], minRaw });
    const report = await check(await tx(), { inflow: inflow(1_000_000n) });
    expect(report.lamportsOut).toBe(10_000n - 1_000_000n);
    expect(await refusal(check(await tx(), { inflow: inflow(1_000_001n) }))).toBe(
      `inflow_short: simulation: the swap output brings the wallet 1000000 of mint ${NATIVE_MINT}, expected at least 1000001`,
    );
  });

  it("counts the rent of a token account the wallet closes to itself as still its own, its tokens as zero", async () => {
    const empty = env.chain.mintTo(
      env.chain.createMint({
        address: Keypair.generate(),
        decimals: 0,
        authority: env.vault.publicKey,
      }),
      env.wallet,
      0n,
    );
    const rent = BigInt(env.chain.lamportsOf(empty));
    const tx = buildTransaction({
      payer: env.wallet,
      blockhash: await blockhash(),
      instructions: [createCloseAccountInstruction(empty, env.wallet, env.wallet)],
    });
    const report = await check(tx);
    expect(report.feeLamports).toBe(5_000n);
    // The rent moves from the wallet's token account to the wallet: only the fee is lost.
    expect(rent).toBeGreaterThan(0n);
    expect(report.lamportsOut).toBe(5_000n);
    expect(Object.values(report.tokensOut)).toEqual(["0"]);
    expect(report.walletTokenAccounts).toEqual([empty.toBase58()]);
  });

  it("watches a wallet token account the transaction only reads: its balance is not counted as lost", async () => {
    // Read-only, the account is watched because it is the wallet's: unwatched, the comparison would
    // take it for closed and count its 100 USDC as gone. The System program ignores the extra account.
    const transferIn = SystemProgram.transfer({
      fromPubkey: env.vault.publicKey,
      toPubkey: env.wallet,
      lamports: 1_000,
    });
    transferIn.keys.push({ pubkey: env.walletUsdc, isSigner: false, isWritable: false });
    const tx = buildTransaction({
      payer: env.wallet,
      blockhash: await blockhash(),
      coSigners: [env.vault],
      instructions: [transferIn],
    });
    const report = await check(tx);
    expect(report.walletTokenAccounts).toEqual([env.walletUsdc.toBase58()]);
    expect(report.tokensOut).toEqual({ [env.usdc.toBase58()]: "0" });
    expect(report.lamportsOut).toBe(10_000n - 1_000n);
  });

  it("passes a swap that spends exactly its amount: the comparison shows that amount out, the fee lost", async () => {
    const intent: Intent = {
      key: `swap-exact-${Keypair.generate().publicKey.toBase58()}`,
      kind: "swap",
      wallet: env.wallet.toBase58(),
      strategy: "test",
      inputMint: env.usdc.toBase58(),
      outputMint: env.t22.toBase58(),
      amount: "2500000",
    };
    const tx = buildTransaction({
      payer: env.wallet,
      blockhash: await blockhash(),
      instructions: [
        createTransferCheckedInstruction(env.walletUsdc, env.usdc, env.escrowUsdc, env.wallet, 2_500_000n, 6),
      ],
    });
    const report = await check(tx, { intent });
    expect(report.tokensOut).toEqual({ [env.usdc.toBase58()]: "2500000" });
    expect(report.lamportsOut).toBe(5_000n);
  });

  it("is stale past the last valid block height, not a refusal", async () => {
    const tx = env.claimTransaction(1n, await blockhash());
    const height = await env.connection.getBlockHeight("confirmed");
    const stale = check(tx, { lastValidBlockHeight: height - 1 });
    await expect(stale).rejects.toThrow(StaleTransaction);
    await expect(stale).rejects.toThrow(/is past the transaction's last valid block height/);
  });

  /**
   * Lands a change to the wallet (by default 1 lamport in) right after each of the first `times`
   * simulations.
   */
  function walletChangesAfterSimulating(times: number, change = () => env.chain.airdrop(env.wallet, 1n)) {
    const simulate = env.connection.simulateTransaction.bind(env.connection);
    let count = 0;
    return vi.spyOn(env.connection, "simulateTransaction").mockImplementation((async (...args: unknown[]) => {
      const result = await (simulate as (...a: unknown[]) => Promise<unknown>)(...args);
      count += 1;
      if (count <= times) change();
      return result;
    }) as typeof env.connection.simulateTransaction);
  }

  it("simulates again when another transaction changes the wallet meanwhile, and passes once it holds still", async () => {
    const spy = walletChangesAfterSimulating(2);
    try {
      const report = await check(env.claimTransaction(1_000n, await blockhash()));
      expect(spy).toHaveBeenCalledTimes(3);
      expect(report.tokensOut).toEqual({ [env.usdc.toBase58()]: "-1000" });
    } finally {
      spy.mockRestore();
    }
  });

  it("leaves a wallet that changes during every simulation to the job's retry: transient, not refused", async () => {
    const spy = walletChangesAfterSimulating(10);
    try {
      const run = check(env.claimTransaction(1_000n, await blockhash()));
      await expect(run).rejects.toThrow(TransientError);
      await expect(run).rejects.toThrow("the wallet's accounts changed during each of 3 simulations");
      expect(spy).toHaveBeenCalledTimes(3);
    } finally {
      spy.mockRestore();
    }
  });

  it("counts a change of data alone (tokens minted to the wallet's account, no lamports moved) as the accounts changing", async () => {
    // A payout landing meanwhile would otherwise pass for this transaction's inflow.
    const spy = walletChangesAfterSimulating(10, () => env.chain.mintTo(env.usdc, env.wallet, 1n));
    try {
      const run = check(env.claimTransaction(1_000n, await blockhash()));
      await expect(run).rejects.toThrow(TransientError);
      await expect(run).rejects.toThrow("the wallet's accounts changed during each of 3 simulations");
      expect(spy).toHaveBeenCalledTimes(3);
    } finally {
      spy.mockRestore();
    }
  });

  it("counts a change of owner alone (same lamports, same data) of the wallet's account as the accounts changing", async () => {
    // The wallet's own account passes to another owner program after each simulation (owned by the
    // System program again while each simulation runs, so every simulation itself succeeds).
    const lamports = BigInt(env.chain.lamportsOf(env.wallet));
    const owners = [Keypair.generate().publicKey, Keypair.generate().publicKey];
    const setOwner = (owner: PublicKey) =>
      env.chain.setAccount({ address: env.wallet, lamports, owner, data: new Uint8Array() });
    const simulate = env.connection.simulateTransaction.bind(env.connection);
    let changes = 0;
    const spy = vi.spyOn(env.connection, "simulateTransaction").mockImplementation((async (
      ...args: unknown[]
    ) => {
      setOwner(SystemProgram.programId);
      const result = await (simulate as (...a: unknown[]) => Promise<unknown>)(...args);
      changes += 1;
      setOwner(owners[changes % 2] as PublicKey);
      return result;
    }) as typeof env.connection.simulateTransaction);
    try {
      const run = check(env.claimTransaction(1_000n, await blockhash()));
      await expect(run).rejects.toThrow(TransientError);
      await expect(run).rejects.toThrow("the wallet's accounts changed during each of 3 simulations");
      expect(spy).toHaveBeenCalledTimes(3);
    } finally {
      spy.mockRestore();
      setOwner(SystemProgram.programId);
    }
  });

  it("lets an account that is not the wallet's change owner between the reads (a vault paying other claims)", async () => {
    const lamports = BigInt(env.chain.lamportsOf(env.vault.publicKey));
    const owners = [Keypair.generate().publicKey, Keypair.generate().publicKey];
    const setOwner = (owner: PublicKey) =>
      env.chain.setAccount({ address: env.vault.publicKey, lamports, owner, data: new Uint8Array() });
    // Owned by a program from the start: the account exists before and after each change.
    setOwner(owners[0] as PublicKey);
    let changes = 0;
    const spy = walletChangesAfterSimulating(10, () => {
      changes += 1;
      setOwner(owners[changes % 2] as PublicKey);
    });
    try {
      const report = await check(env.claimTransaction(1_000n, await blockhash()));
      expect(spy).toHaveBeenCalledTimes(1);
      expect(report.tokensOut).toEqual({ [env.usdc.toBase58()]: "-1000" });
    } finally {
      spy.mockRestore();
      setOwner(SystemProgram.programId);
    }
  });
});
