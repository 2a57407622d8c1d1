import { ACCOUNT_SIZE, AccountLayout, AccountState } from "@solana/spl-token";
import { type AccountInfo, Keypair, PublicKey } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import { NATIVE_MINT, SYSTEM_PROGRAM, TOKEN_PROGRAM } from "../../../src/chain/programs.js";
import {
  checkOutflow,
  compareStates,
  keptTokenAccounts,
  type PostAccount,
  tokensGained,
} from "../../../src/chain/simulated-effects.js";
import { readTokenAccount, type TokenAccountState } from "../../../src/chain/token-account.js";
import { PolicyRefusal } from "../../../src/core/errors.js";

/**
 * The policy's second line after the simulation, on hand-built states: the wallet's token accounts
 * before, the node's post-state after. The effect rules refuse the instructions that lead here first,
 * so no transaction on the local chain reaches these refusals; each is asserted here by its reason and
 * by the account and figures its detail names.
 */
const key = () => Keypair.generate().publicKey.toBase58();
const wallet = key();
const stranger = key();
const usdc = key();
const other = key();
const RENT = 2_039_280;

interface TokenSpec {
  mint?: string;
  owner?: string;
  amount?: bigint;
  delegate?: string;
  closeAuthority?: string;
  frozen?: boolean;
  lamports?: number;
}

/** A token account as the node returns it after a simulation. */
function tokenPost(spec: TokenSpec = {}): PostAccount {
  const data = Buffer.alloc(ACCOUNT_SIZE);
  AccountLayout.encode(
    {
      mint: new PublicKey(spec.mint ?? usdc),
      owner: new PublicKey(spec.owner ?? wallet),
      amount: spec.amount ?? 0n,
      delegateOption: spec.delegate ? 1 : 0,
      delegate: new PublicKey(spec.delegate ?? SYSTEM_PROGRAM),
      delegatedAmount: spec.delegate ? 1n : 0n,
      state: spec.frozen ? AccountState.Frozen : AccountState.Initialized,
      isNativeOption: 0,
      isNative: 0n,
      closeAuthorityOption: spec.closeAuthority ? 1 : 0,
      closeAuthority: new PublicKey(spec.closeAuthority ?? SYSTEM_PROGRAM),
    },
    data,
  );
  return { owner: TOKEN_PROGRAM, lamports: spec.lamports ?? RENT, data };
}

/** The same account as the policy reads it before the simulation. */
function tokenState(spec: TokenSpec = {}): TokenAccountState {
  const raw = tokenPost(spec);
  const state = readTokenAccount({ owner: new PublicKey(raw.owner), lamports: raw.lamports, data: raw.data });
  if (!state) throw new Error("not a token account");
  return state;
}

const walletInfo = (lamports: number): AccountInfo<Buffer> => ({
  owner: new PublicKey(SYSTEM_PROGRAM),
  lamports,
  data: Buffer.alloc(0),
  executable: false,
});
const walletPost = (lamports: number): PostAccount => ({
  owner: SYSTEM_PROGRAM,
  lamports,
  data: Buffer.alloc(0),
});

interface Case {
  walletBefore?: number | null;
  walletAfter?: number | null;
  /** Token accounts of the wallet before, by address. */
  before?: Record<string, TokenSpec>;
  /** Post-state of the watched accounts, by address (null: closed). */
  post?: Record<string, TokenSpec | null>;
  newAccounts?: string[];
}

/** Runs the policy's sequence on the states of a case: kept accounts, then the comparison. */
function compare(c: Case) {
  const before = new Map(Object.entries(c.before ?? {}).map(([a, s]) => [a, tokenState(s)]));
  const post = new Map<string, PostAccount | null>(
    Object.entries(c.post ?? {}).map(([a, s]) => [a, s ? tokenPost(s) : null]),
  );
  const walletAfter = c.walletAfter === undefined ? 1_000_000 : c.walletAfter;
  if (walletAfter !== null) post.set(wallet, walletPost(walletAfter));
  const after = keptTokenAccounts(post, before, new Set(c.newAccounts ?? []), wallet);
  const walletBefore = c.walletBefore === undefined ? 1_000_000 : c.walletBefore;
  return compareStates(
    walletBefore === null ? null : walletInfo(walletBefore),
    post.get(wallet),
    before,
    after,
    post,
    wallet,
  );
}

function refusal(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof PolicyRefusal) return `${error.reason}: ${error.detail}`;
    throw error;
  }
  throw new Error("not refused");
}

const A = key();
const B = key();

describe("compareStates: refusals", () => {
  it.each<[string, Case, string]>([
    [
      "a wallet token account whose owner changes",
      { before: { [A]: {} }, post: { [A]: { owner: stranger } } },
      `token_authority_change: simulation: the owner of ${A} changes to ${stranger}`,
    ],
    [
      "a wallet token account that gets a stranger as delegate",
      { before: { [A]: {} }, post: { [A]: { delegate: stranger } } },
      `token_approve: simulation: ${A} gets the delegate ${stranger}`,
    ],
    [
      "a delegate replaced by another",
      { before: { [A]: { delegate: other } }, post: { [A]: { delegate: stranger } } },
      `token_approve: simulation: ${A} gets the delegate ${stranger}`,
    ],
    [
      "a token account created for the wallet with a stranger as delegate",
      { post: { [A]: { delegate: stranger } }, newAccounts: [A] },
      `token_approve: simulation: ${A} gets the delegate ${stranger}`,
    ],
    [
      "a wallet token account that gets a close authority",
      { before: { [A]: {} }, post: { [A]: { closeAuthority: stranger } } },
      `token_authority_change: simulation: the close authority of ${A} changes`,
    ],
    [
      "a close authority replaced by another",
      { before: { [A]: { closeAuthority: other } }, post: { [A]: { closeAuthority: stranger } } },
      `token_authority_change: simulation: the close authority of ${A} changes`,
    ],
    [
      "a close authority removed (even the wallet's own: a change all the same)",
      { before: { [A]: { closeAuthority: wallet } }, post: { [A]: {} } },
      `token_authority_change: simulation: the close authority of ${A} changes`,
    ],
    [
      "a token account created for the wallet with a stranger as close authority",
      { post: { [A]: { closeAuthority: stranger } }, newAccounts: [A] },
      `token_authority_change: simulation: the close authority of ${A} changes`,
    ],
    [
      "the second of two accounts whose owner changes",
      { before: { [B]: {}, [A]: {} }, post: { [B]: {}, [A]: { owner: other } } },
      `token_authority_change: simulation: the owner of ${A} changes to ${other}`,
    ],
  ])("%s", (_, c, expected) => {
    expect(refusal(() => compare(c))).toBe(expected);
  });
});

describe("compareStates: figures", () => {
  it.each<[string, Case, bigint, Record<string, bigint>]>([
    [
      "nothing moves but the fee",
      { walletAfter: 995_000, before: { [A]: { amount: 7n } }, post: { [A]: { amount: 7n } } },
      5_000n,
      { [usdc]: 0n },
    ],
    [
      "tokens in: a negative outflow of the mint",
      { before: { [A]: { amount: 7n } }, post: { [A]: { amount: 12n } } },
      0n,
      { [usdc]: -5n },
    ],
    ["tokens out", { before: { [A]: { amount: 7n } }, post: { [A]: { amount: 3n } } }, 0n, { [usdc]: 4n }],
    [
      "a closed account: its tokens and its rent are lost (rent not back in the wallet)",
      { before: { [A]: { amount: 7n } }, post: { [A]: null } },
      BigInt(RENT),
      { [usdc]: 7n },
    ],
    [
      "a closed account whose rent comes back to the wallet",
      { walletAfter: 1_000_000 + RENT, before: { [A]: {} }, post: { [A]: null } },
      0n,
      { [usdc]: 0n },
    ],
    [
      "an account the node did not return counts as closed",
      { before: { [A]: { amount: 2n } } },
      BigInt(RENT),
      { [usdc]: 2n },
    ],
    [
      "an account re-created for another mint: the old mint's tokens count as gone",
      { before: { [A]: { amount: 9n } }, post: { [A]: { mint: other, amount: 50n } } },
      0n,
      { [usdc]: 9n },
    ],
    [
      "two accounts of one mint add up; another mint apart",
      {
        before: { [A]: { amount: 10n }, [B]: { mint: other, amount: 4n } },
        post: { [A]: { amount: 1n }, [B]: { mint: other, amount: 6n } },
      },
      0n,
      { [usdc]: 9n, [other]: -2n },
    ],
    [
      "lamports moved from the wallet into its own token account are not lost",
      { walletAfter: 999_000, before: { [A]: {} }, post: { [A]: { lamports: RENT + 1_000 } } },
      0n,
      { [usdc]: 0n },
    ],
    [
      "lamports that leave a token account of the wallet are lost",
      { before: { [A]: {} }, post: { [A]: { lamports: RENT - 300 } } },
      300n,
      { [usdc]: 0n },
    ],
    [
      "rent of a token account created for the wallet stays the wallet's",
      { walletAfter: 1_000_000 - RENT, post: { [A]: { amount: 3n } }, newAccounts: [A] },
      0n,
      {},
    ],
    [
      "a wallet account that does not exist before: nothing to lose",
      { walletBefore: null, walletAfter: 500 },
      -500n,
      {},
    ],
    ["a wallet emptied and gone after", { walletBefore: 800, walletAfter: null }, 800n, {}],
  ])("%s", (_, c, lamportsOut, tokensOut) => {
    const result = compare(c);
    expect(result.lamportsOut).toBe(lamportsOut);
    expect(Object.fromEntries(result.tokensOut)).toEqual(tokensOut);
  });

  it.each<[string, Case]>([
    ["the same delegate kept", { before: { [A]: { delegate: other } }, post: { [A]: { delegate: other } } }],
    ["the wallet as delegate", { before: { [A]: {} }, post: { [A]: { delegate: wallet } } }],
    ["a delegate revoked", { before: { [A]: { delegate: other } }, post: { [A]: {} } }],
    [
      "the same close authority kept",
      { before: { [A]: { closeAuthority: other } }, post: { [A]: { closeAuthority: other } } },
    ],
    [
      "a new account with the wallet as close authority and delegate",
      { post: { [A]: { closeAuthority: wallet, delegate: wallet } }, newAccounts: [A] },
    ],
  ])("allowed: %s", (_, c) => {
    expect(() => compare(c)).not.toThrow();
  });
});

describe("keptTokenAccounts", () => {
  const C = key();
  const D = key();
  const E = key();
  const F = key();
  const G = key();
  const post = new Map<string, PostAccount | null>([
    [A, tokenPost({ amount: 5n })], // the wallet's before, still its own
    [B, tokenPost({ amount: 1n, frozen: true })], // the wallet's before, frozen since
    [C, tokenPost({ owner: stranger })], // the wallet's before, handed to a stranger
    [D, tokenPost({ amount: 2n })], // created for the wallet
    [E, tokenPost({ frozen: true })], // created for the wallet, frozen: its rent cannot come back
    [F, tokenPost({ amount: 9n })], // existed, handed over to the wallet
    [G, null], // closed
    [wallet, walletPost(1)], // not a token account
  ]);
  // Computed in each test, not at collection: a mutant is active only while a test runs.
  const kept = () =>
    keptTokenAccounts(
      post,
      new Map([A, B, C, G].map((a) => [a, tokenState()])),
      new Set([D, E, wallet]),
      wallet,
    );

  it("keeps the wallet's accounts from before and the ones created for it unfrozen", () => {
    expect([...kept().keys()].sort()).toEqual([A, B, D].sort());
  });
  it("keeps their state after the simulation", () => {
    const states = kept();
    expect(states.get(A)?.amount).toBe(5n);
    expect(states.get(B)?.frozen).toBe(true);
    expect(states.get(D)?.amount).toBe(2n);
  });
});

describe("checkOutflow", () => {
  const allowance = { maxLamports: 1_000n, tokens: new Map([[usdc, 50n]]) };
  const run =
    (lamportsOut: bigint, tokens: Record<string, bigint> = {}) =>
    () =>
      checkOutflow({ lamportsOut, tokensOut: new Map(Object.entries(tokens)) }, 5_000n, allowance);

  it.each<[string, bigint, Record<string, bigint>]>([
    ["the fees and the allowed lamports exactly", 6_000n, {}],
    ["an allowed mint up to its limit", 0n, { [usdc]: 50n }],
    ["a mint not allowed that comes in or does not move", 0n, { [other]: -3n, [stranger]: 0n }],
    ["wrapped SOL, counted with the lamports", 0n, { [NATIVE_MINT]: 1_000_000n }],
    ["a gain of lamports", -1_000_000n, {}],
  ])("allows %s", (_, lamports, tokens) => {
    expect(run(lamports, tokens)).not.toThrow();
  });

  it.each<[string, bigint, Record<string, bigint>, string]>([
    [
      "a lamport beyond the fees and the allowance",
      6_001n,
      {},
      "outflow_sol: simulation: the wallet loses 6001 lamports (SOL and wrapped SOL), allowed 5000 fees + 1000",
    ],
    [
      "a token beyond the mint's limit",
      0n,
      { [usdc]: 51n },
      `outflow_token: simulation: the wallet loses 51 of mint ${usdc}, allowed 50`,
    ],
    [
      "one token of a mint not allowed",
      0n,
      { [usdc]: 1n, [other]: 1n },
      `outflow_token: simulation: the wallet loses 1 of mint ${other}, allowed 0`,
    ],
    [
      "a mint over its limit after wrapped SOL",
      0n,
      { [NATIVE_MINT]: 1n, [usdc]: 60n },
      `outflow_token: simulation: the wallet loses 60 of mint ${usdc}, allowed 50`,
    ],
  ])("refuses %s", (_, lamports, tokens, expected) => {
    expect(refusal(run(lamports, tokens))).toBe(expected);
  });
});

describe("tokensGained", () => {
  it("is what the kept accounts hold after less what the wallet's accounts held before, per mint", () => {
    const before = new Map([
      [A, tokenState({ amount: 10n })],
      [B, tokenState({ amount: 4n })],
      [key(), tokenState({ mint: other, amount: 7n })],
    ]);
    const after = new Map([
      [A, tokenState({ amount: 30n })],
      [B, tokenState({ amount: 4n })],
      [key(), tokenState({ mint: stranger, amount: 2n })],
    ]);
    expect(Object.fromEntries(tokensGained(before, after))).toEqual({
      [usdc]: 20n,
      [other]: -7n,
      [stranger]: 2n,
    });
  });
});
