import {
  ComputeBudgetProgram,
  Keypair,
  PublicKey,
  TransactionInstruction,
  TransactionMessage,
  VersionedTransaction,
} from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import { decodeTransaction } from "../../../src/chain/decode.js";
import { checkStatic, type PolicyConfig } from "../../../src/chain/policy.js";
import { MEMO_PROGRAM } from "../../../src/chain/programs.js";
import { PolicyRefusal } from "../../../src/core/errors.js";

const wallet = Keypair.generate().publicKey;
// A co-signer (a service's order key) that signed already: only the wallet's signature is missing.
const cosignerKey = Keypair.generate();
const cosigner = cosignerKey.publicKey;
const held = new Set([wallet.toBase58()]);
const config: PolicyConfig = {
  maxComputeUnitPriceMicroLamports: 2_000_000n,
  maxPriorityFeeLamports: 1_000_000n,
};

/** A transaction asking for `units` at `price`, fee paid by the wallet, signed by `signers` in all. */
async function withBudget(units: number, price: number, signers: readonly PublicKey[] = [wallet]) {
  const memo = new TransactionInstruction({
    programId: new PublicKey(MEMO_PROGRAM),
    keys: signers.map((pubkey) => ({ pubkey, isSigner: true, isWritable: false })),
    data: Buffer.from("fee budget"),
  });
  const message = new TransactionMessage({
    payerKey: wallet,
    recentBlockhash: Keypair.generate().publicKey.toBase58(),
    instructions: [
      ComputeBudgetProgram.setComputeUnitLimit({ units }),
      ComputeBudgetProgram.setComputeUnitPrice({ microLamports: price }),
      memo,
    ],
  }).compileToV0Message();
  const transaction = new VersionedTransaction(message);
  if (signers.some((s) => s.equals(cosigner))) transaction.sign([cosignerKey]);
  const base64 = Buffer.from(transaction.serialize()).toString("base64");
  return decodeTransaction(base64, async () => null);
}

function check(decoded: Awaited<ReturnType<typeof withBudget>>) {
  return checkStatic(decoded, {
    wallet: wallet.toBase58(),
    wallets: { has: (k) => held.has(String(k)) },
    config,
  });
}

describe("the fee budget: limit x price + base fee (5,000 lamports a signature) against maxPriorityFeeLamports", () => {
  it("passes a transaction whose priority fee and base fee make exactly the budget", async () => {
    // 1,000,000 units x 995,000 micro-lamports = 995,000 lamports, + 5,000 base = 1,000,000.
    const budget = check(await withBudget(1_000_000, 995_000));
    expect(budget.priorityFeeLamports).toBe(995_000n);
  });

  it("refuses one lamport over: the priority fee alone fits, with the base fee it does not", async () => {
    // 995,001 lamports (rounded up) + 5,000 = 1,000,001.
    const refusal = await Promise.resolve()
      .then(async () => check(await withBudget(1_000_000, 995_001)))
      .catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(PolicyRefusal);
    expect((refusal as PolicyRefusal).reason).toBe("priority_fee_too_high");
    expect((refusal as PolicyRefusal).detail).toMatch(
      /fee 1000001 lamports: priority 995001 .* \+ base 5000 \(1 signatures\), budget 1000000/,
    );
  });

  it("counts the base fee of every required signature", async () => {
    // Two signatures: 10,000 base, so 990,000 of priority fits and 995,000 no longer does.
    expect(check(await withBudget(1_000_000, 990_000, [wallet, cosigner])).priorityFeeLamports).toBe(
      990_000n,
    );
    await expect(
      Promise.resolve().then(async () => check(await withBudget(1_000_000, 995_000, [wallet, cosigner]))),
    ).rejects.toThrow(/\+ base 10000 \(2 signatures\)/);
  });
});
