import {
  ComputeBudgetProgram,
  Keypair,
  PublicKey,
  SystemProgram,
  TransactionInstruction,
  TransactionMessage,
  VersionedTransaction,
} from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import { viewTransaction } from "../../../src/chain/decode.js";
import { checkStatic, type PolicyConfig } from "../../../src/chain/policy.js";
import { MEMO_PROGRAM, SYSTEM_PROGRAM } from "../../../src/chain/programs.js";
import { PolicyRefusal } from "../../../src/core/errors.js";
import { Wallets } from "../../../src/signer/keys.js";

/**
 * The policy's checks that need no chain (checkStatic): who pays, who signs, which programs, what
 * compute budget. Each refusal is asserted by its reason and by the figures its detail names.
 */
const walletKey = Keypair.generate();
const otherKey = Keypair.generate();
const wallet = walletKey.publicKey;
const otherWallet = otherKey.publicKey;
const stranger = Keypair.generate();
const wallets = Wallets.fromSecretKeys([walletKey.secretKey.slice(), otherKey.secretKey.slice()]);
const blockhash = Keypair.generate().publicKey.toBase58();

// A base fee of 10 lamports a signature keeps the figures small: the budget is 100 of priority fee
// for a transaction with one signature.
const config: PolicyConfig = {
  maxComputeUnitPriceMicroLamports: 1_000n,
  maxPriorityFeeLamports: 110n,
  lamportsPerSignature: 10n,
};

function memoIx(signers: PublicKey[] = []): TransactionInstruction {
  return new TransactionInstruction({
    programId: new PublicKey(MEMO_PROGRAM),
    keys: signers.map((pubkey) => ({ pubkey, isSigner: true, isWritable: false })),
    data: Buffer.from("hi"),
  });
}

function view(
  instructions: TransactionInstruction[],
  options: { payer?: PublicKey; coSigners?: Keypair[]; tamper?: boolean } = {},
) {
  const message = new TransactionMessage({
    payerKey: options.payer ?? wallet,
    recentBlockhash: blockhash,
    instructions,
  }).compileToV0Message();
  const tx = new VersionedTransaction(message);
  if (options.coSigners?.length) tx.sign(options.coSigners);
  if (options.tamper) {
    // A signature slot filled with a signature of other bytes.
    const index = tx.message.staticAccountKeys.findIndex((k) => k.equals(stranger.publicKey));
    const forged = tx.signatures[index] as Uint8Array;
    forged[0] = (forged[0] as number) ^ 0xff;
  }
  return viewTransaction(tx, []);
}

function refusal(run: () => unknown): { reason: string; detail: string } | undefined {
  try {
    run();
    return undefined;
  } catch (error) {
    if (error instanceof PolicyRefusal) return { reason: error.reason, detail: error.detail };
    throw error;
  }
}

const check = (decoded: ReturnType<typeof view>, overrides: Partial<PolicyConfig> = {}, who = wallet) =>
  checkStatic(decoded, { wallet: who.toBase58(), wallets, config: { ...config, ...overrides } });

const price = (microLamports: number) => ComputeBudgetProgram.setComputeUnitPrice({ microLamports });
const limit = (units: number) => ComputeBudgetProgram.setComputeUnitLimit({ units });

describe("policy: static checks", () => {
  it("passes a plain transaction of the wallet and returns its compute budget", () => {
    expect(check(view([limit(50_000), price(1_000), memoIx()]))).toEqual({
      unitPriceMicroLamports: 1_000n,
      unitLimit: 50_000n,
      priorityFeeLamports: 50n,
      priceInstructions: 1,
      limitInstructions: 1,
    });
  });

  it.each([
    [
      "advanceNonce",
      () => SystemProgram.nonceAdvance({ noncePubkey: stranger.publicKey, authorizedPubkey: wallet }),
    ],
    [
      "withdrawFromNonce",
      () =>
        SystemProgram.nonceWithdraw({
          noncePubkey: stranger.publicKey,
          authorizedPubkey: wallet,
          toPubkey: wallet,
          lamports: 1,
        }),
    ],
    [
      "authorizeNonce",
      () =>
        SystemProgram.nonceAuthorize({
          noncePubkey: stranger.publicKey,
          authorizedPubkey: wallet,
          newAuthorizedPubkey: otherWallet,
        }),
    ],
  ])("refuses a durable nonce (System %s) before any blockhash is asked about", (op, ix) => {
    expect(refusal(() => check(view([ix(), memoIx()])))).toEqual({
      reason: "durable_nonce",
      detail: `instruction 0: System ${op}`,
    });
  });

  it("refuses an intent for a wallet Keeper holds no key for", () => {
    const decoded = view([memoIx()], { payer: stranger.publicKey });
    expect(refusal(() => check(decoded, {}, stranger.publicKey))).toEqual({
      reason: "wallet_not_held",
      detail: `Keeper holds no key for ${stranger.publicKey.toBase58()}`,
    });
  });

  it("refuses a fee payer other than the intent's wallet, even another wallet Keeper holds", () => {
    expect(refusal(() => check(view([memoIx()], { payer: otherWallet })))).toEqual({
      reason: "fee_payer",
      detail: `fee payer ${otherWallet.toBase58()} is not the intent's wallet ${wallet.toBase58()}`,
    });
  });

  it("counts the base fee of every signature against the budget", () => {
    const cosigned = view([limit(91_000), price(1_000), memoIx([stranger.publicKey])], {
      coSigners: [stranger],
    });
    // 91 lamports of priority fee and 2 signatures of 10: one over the budget of 110.
    expect(refusal(() => check(cosigned))).toEqual({
      reason: "priority_fee_too_high",
      detail:
        "fee 111 lamports: priority 91 (91000 units x 1000 micro-lamports) + base 20 (2 signatures), budget 110",
    });
  });

  it("keeps a valid co-signature and refuses one that does not verify for these bytes", () => {
    const ixs = [memoIx([stranger.publicKey])];
    expect(refusal(() => check(view(ixs, { coSigners: [stranger] })))).toBeUndefined();
    expect(refusal(() => check(view(ixs, { coSigners: [stranger], tamper: true })))).toEqual({
      reason: "invalid_signature",
      detail: `the existing signature of ${stranger.publicKey.toBase58()} does not verify`,
    });
  });

  it("refuses a required signer that has not signed, naming whether Keeper holds its key", () => {
    expect(refusal(() => check(view([memoIx([stranger.publicKey])])))).toEqual({
      reason: "foreign_signer",
      detail: `${stranger.publicKey.toBase58()} must sign and has not: a key Keeper does not hold`,
    });
    expect(refusal(() => check(view([memoIx([otherWallet])])))).toEqual({
      reason: "foreign_signer",
      detail: `${otherWallet.toBase58()} must sign and has not: another wallet Keeper holds`,
    });
  });

  it("refuses a program off the allow-list; extraPrograms adds to it, allowedPrograms replaces it", () => {
    const program = Keypair.generate().publicKey;
    const call = new TransactionInstruction({ programId: program, keys: [], data: Buffer.alloc(0) });
    expect(refusal(() => check(view([memoIx(), call])))).toEqual({
      reason: "program_not_allowed",
      detail: `instruction 1 calls ${program.toBase58()}, not on the allow-list`,
    });
    expect(refusal(() => check(view([memoIx(), call]), { extraPrograms: [program.toBase58()] }))).toBe(
      undefined,
    );
    // A stricter deployment drops the memo program: the memo is refused, the service's program passes.
    expect(
      refusal(() =>
        check(view([call, memoIx()]), {
          allowedPrograms: [SYSTEM_PROGRAM],
          extraPrograms: [program.toBase58()],
        }),
      ),
    ).toEqual({
      reason: "program_not_allowed",
      detail: `instruction 1 calls ${MEMO_PROGRAM}, not on the allow-list`,
    });
  });

  it("refuses malformed compute budget data as decode_failed", () => {
    const bad = new TransactionInstruction({
      programId: ComputeBudgetProgram.programId,
      keys: [],
      data: Buffer.from([3, 1, 2]),
    });
    expect(refusal(() => check(view([bad])))).toEqual({
      reason: "decode_failed",
      detail: "instruction 0: compute unit price data is 3 bytes",
    });
  });

  it("allows a unit price up to its ceiling, not one micro-lamport more", () => {
    expect(refusal(() => check(view([limit(1_000), price(1_000)])))).toBeUndefined();
    expect(refusal(() => check(view([limit(1_000), price(1_001)])))).toEqual({
      reason: "compute_price_too_high",
      detail: "compute unit price 1001 micro-lamports, ceiling 1000",
    });
  });

  it("allows a fee (priority and base) up to its budget in lamports, not one lamport more", () => {
    // 100,000 units x 1,000 micro-lamports = 100 lamports, and one signature of 10: the budget.
    expect(refusal(() => check(view([limit(100_000), price(1_000)])))).toBeUndefined();
    expect(refusal(() => check(view([limit(100_001), price(1_000)])))).toEqual({
      reason: "priority_fee_too_high",
      detail:
        "fee 111 lamports: priority 101 (100001 units x 1000 micro-lamports) + base 10 (1 signatures), budget 110",
    });
  });

  it("refuses a repeated compute budget instruction even when every value is within the ceilings", () => {
    expect(refusal(() => check(view([limit(1_000), price(1), price(2)])))).toEqual({
      reason: "compute_budget_duplicate",
      detail: "2 SetComputeUnitPrice and 1 SetComputeUnitLimit instructions; at most one of each",
    });
    expect(refusal(() => check(view([limit(1_000), limit(2_000), price(1)])))).toEqual({
      reason: "compute_budget_duplicate",
      detail: "1 SetComputeUnitPrice and 2 SetComputeUnitLimit instructions; at most one of each",
    });
  });
});
