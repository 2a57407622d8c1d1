import {
  createBurnCheckedInstruction,
  createInitializeAccount2Instruction,
  createInitializeAccount3Instruction,
  createInitializeAccountInstruction,
  createInitializeImmutableOwnerInstruction,
  createMintToInstruction,
  TOKEN_PROGRAM_ID,
} from "@solana/spl-token";
import { Keypair, type TransactionInstruction } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import {
  checkEffect,
  createdWalletTokenAccounts,
  type EffectContext,
  newTotals,
} from "../../../src/chain/effect-rules.js";
import { rawEffect } from "../../../src/chain/instruction-effects.js";
import { PolicyRefusal } from "../../../src/core/errors.js";

const wallet = Keypair.generate().publicKey;
const ours = Keypair.generate().publicKey;
const mint = Keypair.generate().publicKey;

const ctx: EffectContext = {
  wallet: wallet.toBase58(),
  walletTokens: new Map([[ours.toBase58(), { mint: mint.toBase58() }]]),
  allowance: { maxLamports: 0n, tokens: new Map([[mint.toBase58(), 50n]]) },
  simulated: true,
};

const effectOf = (ix: TransactionInstruction) =>
  rawEffect(
    "0",
    ix.programId.toBase58(),
    ix.keys.map((k) => k.pubkey.toBase58()),
    ix.data,
  );

function refusal(ix: TransactionInstruction): string | undefined {
  try {
    checkEffect(effectOf(ix), ctx, newTotals());
    return undefined;
  } catch (error) {
    if (error instanceof PolicyRefusal) return error.reason;
    throw error;
  }
}

describe("token operations on the wallet's own account", () => {
  it.each<[string, TransactionInstruction, string | undefined]>([
    ["initializeAccount", createInitializeAccountInstruction(ours, mint, wallet), undefined],
    ["initializeAccount2", createInitializeAccount2Instruction(ours, mint, wallet), undefined],
    ["initializeAccount3", createInitializeAccount3Instruction(ours, mint, wallet), undefined],
    [
      "initializeImmutableOwner",
      createInitializeImmutableOwnerInstruction(ours, TOKEN_PROGRAM_ID),
      undefined,
    ],
    ["mintTo into it", createMintToInstruction(mint, ours, Keypair.generate().publicKey, 5n), undefined],
    ["burnChecked within the allowance", createBurnCheckedInstruction(ours, mint, wallet, 50n, 6), undefined],
    ["burnChecked beyond it", createBurnCheckedInstruction(ours, mint, wallet, 51n, 6), "outflow_token"],
  ])("%s", (_name, ix, reason) => {
    expect(refusal(ix)).toBe(reason);
  });

  it("counts an account initialized with initializeAccount for the wallet as the wallet's", () => {
    const temporary = Keypair.generate().publicKey;
    const created = createdWalletTokenAccounts(
      [effectOf(createInitializeAccountInstruction(temporary, mint, wallet))],
      wallet.toBase58(),
    );
    expect([...created]).toEqual([[temporary.toBase58(), { mint: mint.toBase58() }]]);
  });
});
