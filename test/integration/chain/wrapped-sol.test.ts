import {
  createCloseAccountInstruction,
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
  NATIVE_MINT,
} from "@solana/spl-token";
import { Keypair, LAMPORTS_PER_SOL, Transaction } from "@solana/web3.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSandboxAssets, type SandboxAssets } from "../../../src/sandbox/chain/sandbox-assets.js";
import { type Harness, startHarness } from "./chain-harness.js";

/**
 * Wrapped SOL on the local chain is the real thing: the mint `So111…112` exists from genesis, and
 * funded wrapped SOL accounts are native ones, so the SPL Token program moves lamports with the amount
 * and CloseAccount unwraps.
 */
let h: Harness;
let assets: SandboxAssets;

beforeEach(async () => {
  h = await startHarness();
  assets = createSandboxAssets(h.chain, { seed: 3 });
});
afterEach(() => h.close());

async function send(tx: Transaction, ...signers: Keypair[]): Promise<void> {
  const { blockhash } = await h.connection.getLatestBlockhash();
  tx.recentBlockhash = blockhash;
  tx.feePayer = signers[0]?.publicKey;
  tx.sign(...signers);
  h.chain.send(tx.serialize());
}

describe("wrapped SOL", () => {
  it("the mint exists with 9 decimals and no mint authority", async () => {
    const info = await h.connection.getParsedAccountInfo(NATIVE_MINT);
    expect(info.value?.data).toMatchObject({ parsed: { info: { decimals: 9, mintAuthority: null } } });
  });

  it("a funded account is native: a transfer moves lamports, a close unwraps balance and rent", async () => {
    const alice = Keypair.generate();
    const bob = Keypair.generate();
    assets.fundWallets([alice.publicKey, bob.publicKey], {
      sol: 1,
      tokens: new Map([[NATIVE_MINT.toBase58(), 2n * BigInt(LAMPORTS_PER_SOL)]]),
    });
    const aliceWrapped = getAssociatedTokenAddressSync(NATIVE_MINT, alice.publicKey);
    const bobWrapped = getAssociatedTokenAddressSync(NATIVE_MINT, bob.publicKey);
    const reserve = h.chain.minimumBalanceForRentExemption(165);
    expect(BigInt(h.chain.lamportsOf(aliceWrapped))).toBe(reserve + 2n * BigInt(LAMPORTS_PER_SOL));

    await send(
      new Transaction().add(
        createTransferCheckedInstruction(
          aliceWrapped,
          NATIVE_MINT,
          bobWrapped,
          alice.publicKey,
          500_000_000n,
          9,
        ),
      ),
      alice,
    );
    expect(h.chain.tokenBalance(bob.publicKey, NATIVE_MINT)).toBe(2_500_000_000n);
    expect(BigInt(h.chain.lamportsOf(bobWrapped))).toBe(reserve + 2_500_000_000n);

    const bobLamports = BigInt(h.chain.lamportsOf(bob.publicKey));
    await send(
      new Transaction().add(createCloseAccountInstruction(bobWrapped, bob.publicKey, bob.publicKey)),
      bob,
    );
    expect(h.chain.getAccount(bobWrapped)).toBeNull();
    expect(BigInt(h.chain.lamportsOf(bob.publicKey))).toBe(bobLamports + reserve + 2_500_000_000n - 5_000n);
  });
});
