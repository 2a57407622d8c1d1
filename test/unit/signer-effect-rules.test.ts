import {
  AuthorityType,
  createApproveInstruction,
  createCloseAccountInstruction,
  createSetAuthorityInstruction,
  createTransferCheckedInstruction,
  TOKEN_PROGRAM_ID,
} from "@solana/spl-token";
import { Keypair, SystemProgram, type TransactionInstruction } from "@solana/web3.js";
import bs58 from "bs58";
import { describe, expect, it } from "vitest";
import { checkEffect, type EffectContext, newTotals } from "../../src/chain/effect-rules.js";
import { innerEffect, rawEffect } from "../../src/chain/instruction-effects.js";
import { PolicyRefusal } from "../../src/core/errors.js";

const wallet = Keypair.generate().publicKey;
const ours = Keypair.generate().publicKey;
const stranger = Keypair.generate().publicKey;
const mint = Keypair.generate().publicKey;
const otherMint = Keypair.generate().publicKey;

const ctx: EffectContext = {
  wallet: wallet.toBase58(),
  walletTokens: new Map([
    [
      ours.toBase58(),
      {
        programId: TOKEN_PROGRAM_ID.toBase58(),
        mint: mint.toBase58(),
        owner: wallet.toBase58(),
        amount: 100n,
        delegatedAmount: 0n,
        lamports: 2_039_280n,
      },
    ],
  ]),
  allowance: { maxLamports: 10_000n, tokens: new Map([[mint.toBase58(), 50n]]) },
};

function run(ix: TransactionInstruction, form: "raw" | "inner"): string | undefined {
  const accounts = ix.keys.map((k) => k.pubkey.toBase58());
  const effect =
    form === "raw"
      ? rawEffect("0", ix.programId.toBase58(), accounts, ix.data)
      : innerEffect("0.0", {
          programId: ix.programId,
          accounts: ix.keys.map((k) => k.pubkey),
          data: bs58.encode(ix.data),
        });
  try {
    checkEffect(effect, ctx, newTotals());
    return undefined;
  } catch (error) {
    if (error instanceof PolicyRefusal) return error.reason;
    throw error;
  }
}

const cases: [string, TransactionInstruction, string | undefined][] = [
  [
    "any SOL transfer out when the intent spends no SOL",
    SystemProgram.transfer({ fromPubkey: wallet, toPubkey: stranger, lamports: 1 }),
    "outflow_sol",
  ],
  [
    "createAccount funded by the wallet within the rent allowance",
    SystemProgram.createAccount({
      fromPubkey: wallet,
      newAccountPubkey: stranger,
      lamports: 10_000,
      space: 0,
      programId: stranger,
    }),
    undefined,
  ],
  [
    "SOL transfer into the wallet",
    SystemProgram.transfer({ fromPubkey: stranger, toPubkey: wallet, lamports: 1_000_000_000_000 }),
    undefined,
  ],
  [
    "assign of the wallet",
    SystemProgram.assign({ accountPubkey: wallet, programId: stranger }),
    "system_assign",
  ],
  ["allocate of the wallet", SystemProgram.allocate({ accountPubkey: wallet, space: 10 }), "system_allocate"],
  [
    "createAccount funded by the wallet",
    SystemProgram.createAccount({
      fromPubkey: wallet,
      newAccountPubkey: stranger,
      lamports: 1_000_000_000,
      space: 0,
      programId: stranger,
    }),
    "outflow_sol",
  ],
  [
    "createAccountWithSeed funded by the wallet",
    SystemProgram.createAccountWithSeed({
      fromPubkey: wallet,
      newAccountPubkey: stranger,
      basePubkey: wallet,
      seed: "abc",
      lamports: 1_000_000_000,
      space: 0,
      programId: stranger,
    }),
    "outflow_sol",
  ],
  [
    "nonce advance",
    SystemProgram.nonceAdvance({ noncePubkey: stranger, authorizedPubkey: wallet }),
    "durable_nonce",
  ],
  [
    "token transfer within the allowance",
    createTransferCheckedInstruction(ours, mint, stranger, wallet, 50n, 6),
    undefined,
  ],
  [
    "token transfer beyond it",
    createTransferCheckedInstruction(ours, mint, stranger, wallet, 51n, 6),
    "outflow_token",
  ],
  [
    "transferChecked naming another mint",
    createTransferCheckedInstruction(ours, otherMint, stranger, wallet, 1n, 6),
    "outflow_token",
  ],
  ["approve", createApproveInstruction(ours, stranger, wallet, 1n), "token_approve"],
  [
    "set authority",
    createSetAuthorityInstruction(ours, wallet, AuthorityType.AccountOwner, stranger),
    "token_authority_change",
  ],
  ["close to a stranger", createCloseAccountInstruction(ours, stranger, wallet), "token_close_account"],
  ["close to the wallet", createCloseAccountInstruction(ours, wallet, wallet), undefined],
  ["approve on someone else's account", createApproveInstruction(stranger, wallet, stranger, 1n), undefined],
];

describe("instruction rules", () => {
  it.each(cases)("top-level %s", (_name, ix, reason) => {
    expect(run(ix, "raw")).toBe(reason);
  });
  it.each(cases)("inner %s", (_name, ix, reason) => {
    expect(run(ix, "inner")).toBe(reason);
  });

  it.each([
    [
      "approve",
      {
        type: "approve",
        info: {
          source: ours.toBase58(),
          delegate: stranger.toBase58(),
          owner: wallet.toBase58(),
          amount: "1",
        },
      },
      "token_approve",
    ],
    [
      "transfer",
      {
        type: "transfer",
        info: {
          source: ours.toBase58(),
          destination: stranger.toBase58(),
          authority: wallet.toBase58(),
          amount: "99",
        },
      },
      "outflow_token",
    ],
    [
      "closeAccount",
      {
        type: "closeAccount",
        info: { account: ours.toBase58(), destination: stranger.toBase58(), owner: wallet.toBase58() },
      },
      "token_close_account",
    ],
    [
      "unknown op",
      {
        type: "freezeAccount",
        info: { account: ours.toBase58(), mint: mint.toBase58(), freezeAuthority: stranger.toBase58() },
      },
      "token_instruction_not_allowed",
    ],
  ])("jsonParsed inner %s", (_name, parsed, reason) => {
    const effect = innerEffect("1.0", {
      programId: TOKEN_PROGRAM_ID.toBase58(),
      program: "spl-token",
      parsed,
    });
    expect(() => checkEffect(effect, ctx, newTotals())).toThrow(expect.objectContaining({ reason }));
  });

  it("adds up outflows across instructions", () => {
    const totals = newTotals();
    const half = createTransferCheckedInstruction(ours, mint, stranger, wallet, 30n, 6);
    const effect = rawEffect(
      "0",
      TOKEN_PROGRAM_ID.toBase58(),
      half.keys.map((k) => k.pubkey.toBase58()),
      half.data,
    );
    checkEffect(effect, ctx, totals);
    expect(() => checkEffect({ ...effect, where: "1" }, ctx, totals)).toThrow(
      expect.objectContaining({ reason: "outflow_token" }),
    );
  });
});
