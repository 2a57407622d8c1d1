import {
  AuthorityType,
  createApproveInstruction,
  createAssociatedTokenAccountIdempotentInstruction,
  createCloseAccountInstruction,
  createInitializeAccount3Instruction,
  createSetAuthorityInstruction,
  createTransferCheckedInstruction,
  createTransferInstruction,
  getAssociatedTokenAddressSync,
  NATIVE_MINT,
  TOKEN_PROGRAM_ID,
} from "@solana/spl-token";
import { Keypair, SystemProgram, type TransactionInstruction } from "@solana/web3.js";
import bs58 from "bs58";
import { describe, expect, it } from "vitest";
import {
  checkEffect,
  createdWalletTokenAccounts,
  type EffectContext,
  newTotals,
} from "../../../src/chain/effect-rules.js";
import { innerEffect, rawEffect } from "../../../src/chain/instruction-effects.js";
import { PolicyRefusal } from "../../../src/core/errors.js";

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
  simulated: true,
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

describe("native SOL and rent rules", () => {
  const native = NATIVE_MINT.toBase58();
  const wrapped = getAssociatedTokenAddressSync(NATIVE_MINT, wallet);
  // A SOL order of 1,000 lamports whose wrapped SOL account is the wallet's.
  const solOrder = (simulated: boolean): EffectContext => ({
    wallet: wallet.toBase58(),
    walletTokens: new Map([[wrapped.toBase58(), { mint: native }]]),
    allowance: { maxLamports: 1_000n, tokens: new Map([[native, 1_000n]]) },
    simulated,
  });
  const effectOf = (ix: TransactionInstruction, where = "0") =>
    rawEffect(
      where,
      ix.programId.toBase58(),
      ix.keys.map((k) => k.pubkey.toBase58()),
      ix.data,
    );
  const reasonOf = (ix: TransactionInstruction, ctx: EffectContext): string | undefined => {
    try {
      checkEffect(effectOf(ix), ctx, newTotals());
      return undefined;
    } catch (error) {
      if (error instanceof PolicyRefusal) return `${error.reason}: ${error.detail}`;
      throw error;
    }
  };

  it.each<[string, TransactionInstruction, boolean, RegExp | undefined]>([
    [
      "wrapping the order's SOL into the wallet's own wrapped SOL account",
      SystemProgram.transfer({ fromPubkey: wallet, toPubkey: wrapped, lamports: 1_000 }),
      true,
      undefined,
    ],
    [
      "the order's SOL to a stranger, once simulated",
      SystemProgram.transfer({ fromPubkey: wallet, toPubkey: stranger, lamports: 1_000 }),
      true,
      /^outflow_sol: .*not a token account of the wallet/,
    ],
    [
      "the order's SOL to an account not yet known, before simulating (decided after)",
      SystemProgram.transfer({ fromPubkey: wallet, toPubkey: stranger, lamports: 1_000 }),
      false,
      undefined,
    ],
    [
      "more SOL than the order's amount, even into the wallet's account, before simulating",
      SystemProgram.transfer({ fromPubkey: wallet, toPubkey: wrapped, lamports: 1_001 }),
      false,
      /^outflow_sol: .*allowed 1000/,
    ],
    [
      "rent for a new account that ends up the wallet's, beyond the allowance",
      SystemProgram.createAccount({
        fromPubkey: wallet,
        newAccountPubkey: wrapped,
        lamports: 2_039_280,
        space: 165,
        programId: TOKEN_PROGRAM_ID,
      }),
      true,
      undefined,
    ],
    [
      "rent for a stranger's new account, beyond the allowance",
      SystemProgram.createAccount({
        fromPubkey: wallet,
        newAccountPubkey: stranger,
        lamports: 1_001,
        space: 0,
        programId: stranger,
      }),
      true,
      /^outflow_sol: .*not a token account of the wallet; 1001 lamports/,
    ],
    [
      "an unchecked transfer the wallet signs from an account of unknown mint, once simulated",
      createTransferInstruction(stranger, ours, wallet, 1n),
      true,
      /^outflow_token: .*unknown mint/,
    ],
    [
      "a transferChecked the wallet signs from an account it is not known to own counts against its mint",
      createTransferCheckedInstruction(stranger, otherMint, ours, wallet, 1n, 6),
      true,
      /^outflow_token: .*allowed 0/,
    ],
    [
      "wrapped SOL the wallet signs away from its account, within the order's amount",
      createTransferCheckedInstruction(wrapped, NATIVE_MINT, stranger, wallet, 1_000n, 9),
      true,
      undefined,
    ],
  ])("%s", (_name, ix, simulated, refusal) => {
    const reason = reasonOf(ix, solOrder(simulated));
    if (refusal === undefined) expect(reason).toBeUndefined();
    else expect(reason).toMatch(refusal);
  });

  it("finds the token accounts created for the wallet: associated ones checked against their derivation, initialized ones by owner", () => {
    const usdcAta = getAssociatedTokenAddressSync(mint, wallet);
    const strangersAta = getAssociatedTokenAddressSync(mint, stranger);
    const temporary = Keypair.generate().publicKey;
    const effects = [
      createAssociatedTokenAccountIdempotentInstruction(wallet, wrapped, wallet, NATIVE_MINT),
      createAssociatedTokenAccountIdempotentInstruction(wallet, strangersAta, stranger, mint),
      // Names the wallet as owner of an address that is not its associated account.
      createAssociatedTokenAccountIdempotentInstruction(wallet, stranger, wallet, mint),
      createInitializeAccount3Instruction(temporary, otherMint, wallet),
      createInitializeAccount3Instruction(Keypair.generate().publicKey, otherMint, stranger),
    ].map((ix, i) => effectOf(ix, String(i)));
    // The same instruction as an RPC's jsonParsed inner instruction.
    effects.push(
      innerEffect("5.0", {
        programId: "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL",
        program: "spl-associated-token-account",
        parsed: {
          type: "create",
          info: {
            source: wallet.toBase58(),
            account: usdcAta.toBase58(),
            wallet: wallet.toBase58(),
            mint: mint.toBase58(),
            systemProgram: SystemProgram.programId.toBase58(),
            tokenProgram: TOKEN_PROGRAM_ID.toBase58(),
          },
        },
      }),
    );
    expect([...createdWalletTokenAccounts(effects, wallet.toBase58())]).toEqual([
      [wrapped.toBase58(), { mint: native }],
      [temporary.toBase58(), { mint: otherMint.toBase58() }],
      [usdcAta.toBase58(), { mint: mint.toBase58() }],
    ]);
  });

  it("leaves out the associated accounts the caller already counts as the wallet's of that mint, and only those", () => {
    const usdcAta = getAssociatedTokenAddressSync(mint, wallet);
    const otherAta = getAssociatedTokenAddressSync(otherMint, wallet);
    const effects = [
      createAssociatedTokenAccountIdempotentInstruction(wallet, usdcAta, wallet, mint),
      createAssociatedTokenAccountIdempotentInstruction(wallet, otherAta, wallet, otherMint),
      // Not the derivation of (wallet, mint): known or not, only a derivation could admit it.
      createAssociatedTokenAccountIdempotentInstruction(wallet, stranger, wallet, mint),
    ].map((ix, i) => effectOf(ix, String(i)));
    const asked: string[] = [];
    // The caller knows the USDC account with its mint, and the other one with another mint.
    const known = new Map([
      [usdcAta.toBase58(), mint.toBase58()],
      [otherAta.toBase58(), mint.toBase58()],
    ]);
    const created = createdWalletTokenAccounts(effects, wallet.toBase58(), (account, m) => {
      asked.push(account);
      return known.get(account) === m;
    });
    expect([...created]).toEqual([[otherAta.toBase58(), { mint: otherMint.toBase58() }]]);
    expect(asked).toEqual([usdcAta.toBase58(), otherAta.toBase58(), stranger.toBase58()]);
  });
});
