import {
  ACCOUNT_SIZE,
  AccountLayout,
  AccountState,
  AccountType,
  ExtensionType,
  getTypeLen,
  MINT_SIZE,
  MintLayout,
  TransferFeeConfigLayout,
} from "@solana/spl-token";
import { Keypair, PublicKey } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import {
  checkReceivedMints,
  dangerousExtensions,
  feeDependsOnEpoch,
  type MintAccount,
  receivedToken2022Mints,
} from "../../../src/chain/mint-extensions.js";
import { TOKEN_2022_PROGRAM, TOKEN_PROGRAM } from "../../../src/chain/programs.js";
import { chargedNewAccounts, rentFreeMints } from "../../../src/chain/rent-rules.js";
import type { PostAccount } from "../../../src/chain/simulated-effects.js";
import type { TokenAccountState } from "../../../src/chain/token-account.js";
import { PolicyRefusal } from "../../../src/core/errors.js";
import type { Intent } from "../../../src/core/intent.js";

/**
 * Received Token-2022 mints and their extensions (mint-extensions), on mint bytes laid out as the
 * Token-2022 program stores them; and which new accounts' rent an intent pays for (rent-rules).
 */
const key = () => Keypair.generate().publicKey;
const wallet = key().toBase58();
const mintAddress = key().toBase58();

type Tlv = [ExtensionType, Buffer];
const fee = (basisPoints: number, maximumFee: bigint, epoch = 0n) => ({
  epoch,
  maximumFee,
  transferFeeBasisPoints: basisPoints,
});

/** A Token-2022 mint: base layout, padding to the account size, account type, then each extension. */
function mint(extensions: Tlv[], owner = TOKEN_2022_PROGRAM): MintAccount {
  const base = Buffer.alloc(MINT_SIZE);
  MintLayout.encode(
    {
      mintAuthorityOption: 0,
      mintAuthority: PublicKey.default,
      supply: 0n,
      decimals: 6,
      isInitialized: true,
      freezeAuthorityOption: 0,
      freezeAuthority: PublicKey.default,
    },
    base,
  );
  const parts: Buffer[] = [base, Buffer.alloc(ACCOUNT_SIZE - MINT_SIZE), Buffer.from([AccountType.Mint])];
  for (const [type, value] of extensions) {
    const header = Buffer.alloc(4);
    header.writeUInt16LE(type, 0);
    header.writeUInt16LE(value.length, 2);
    parts.push(header, value);
  }
  return { owner, lamports: 1, data: Buffer.concat(parts) };
}

function feeConfig(older: ReturnType<typeof fee>, newer: ReturnType<typeof fee>): Tlv {
  const value = Buffer.alloc(getTypeLen(ExtensionType.TransferFeeConfig));
  TransferFeeConfigLayout.encode(
    {
      transferFeeConfigAuthority: PublicKey.default,
      withdrawWithheldAuthority: PublicKey.default,
      withheldAmount: 0n,
      olderTransferFee: older,
      newerTransferFee: newer,
    },
    value,
  );
  return [ExtensionType.TransferFeeConfig, value];
}
const delegate = (to: PublicKey): Tlv => [ExtensionType.PermanentDelegate, to.toBuffer()];
const hook = (program: PublicKey): Tlv => [
  ExtensionType.TransferHook,
  Buffer.concat([key().toBuffer(), program.toBuffer()]),
];
const confidential: Tlv = [ExtensionType.ConfidentialTransferMint, Buffer.alloc(65)];
const closeAuthority: Tlv = [ExtensionType.MintCloseAuthority, key().toBuffer()];
const nonTransferable: Tlv = [ExtensionType.NonTransferable, Buffer.alloc(0)];
/** Pausable (26): the authority (zero for none), then whether it is paused now. */
const pausable = (authority: PublicKey, paused: boolean): Tlv => [
  ExtensionType.PausableConfig,
  Buffer.concat([authority.toBuffer(), Buffer.from([paused ? 1 : 0])]),
];
const defaultState = (state: AccountState): Tlv => [ExtensionType.DefaultAccountState, Buffer.from([state])];

describe("dangerousExtensions", () => {
  it("names nothing for a mint without extensions or with harmless ones", () => {
    expect(dangerousExtensions(mintAddress, mint([]))).toEqual([]);
    // The base layout alone (82 bytes), as a Token-2022 mint with no extension may be stored.
    const bare = mint([]);
    expect(dangerousExtensions(mintAddress, { ...bare, data: bare.data.subarray(0, MINT_SIZE) })).toEqual([]);
    expect(dangerousExtensions(mintAddress, mint([closeAuthority]))).toEqual([]);
  });

  it("names a permanent delegate, a transfer hook and confidential transfers", () => {
    const who = key();
    const program = key();
    expect(dangerousExtensions(mintAddress, mint([delegate(who), hook(program), confidential]))).toEqual([
      `PermanentDelegate ${who.toBase58()}`,
      `TransferHook program ${program.toBase58()}`,
      "ConfidentialTransferMint",
    ]);
  });

  it("names what can lock the balance in: non-transferable, pausable by an authority or paused, frozen by default", () => {
    const authority = key();
    expect(dangerousExtensions(mintAddress, mint([nonTransferable]))).toEqual(["NonTransferable"]);
    expect(dangerousExtensions(mintAddress, mint([pausable(authority, false)]))).toEqual([
      `Pausable by ${authority.toBase58()}`,
    ]);
    expect(dangerousExtensions(mintAddress, mint([pausable(authority, true)]))).toEqual([
      `Pausable by ${authority.toBase58()}, paused`,
    ]);
    // Paused with no authority left: paused for good.
    expect(dangerousExtensions(mintAddress, mint([pausable(PublicKey.default, true)]))).toEqual([
      "Pausable, paused",
    ]);
    expect(dangerousExtensions(mintAddress, mint([defaultState(AccountState.Frozen)]))).toEqual([
      "DefaultAccountState frozen",
    ]);
  });

  it("takes a pausable mint no one can pause and accounts initialized by default as harmless", () => {
    expect(
      dangerousExtensions(
        mintAddress,
        mint([pausable(PublicKey.default, false), defaultState(AccountState.Initialized)]),
      ),
    ).toEqual([]);
  });

  it("takes a delegate or hook program set to none as harmless", () => {
    expect(
      dangerousExtensions(mintAddress, mint([delegate(PublicKey.default), hook(PublicKey.default)])),
    ).toEqual([]);
  });

  it("names a transfer fee in force or coming; a fee of 0 bps or capped at 0 is none", () => {
    expect(dangerousExtensions(mintAddress, mint([feeConfig(fee(0, 0n), fee(0, 0n))]))).toEqual([]);
    expect(dangerousExtensions(mintAddress, mint([feeConfig(fee(50, 0n), fee(50, 0n))]))).toEqual([]);
    // Coming at epoch 9: named now already.
    expect(dangerousExtensions(mintAddress, mint([feeConfig(fee(0, 0n), fee(25, 10n, 9n))]), 3n)).toEqual([
      "TransferFeeConfig 25 bps up to 10 (from epoch 9)",
    ]);
  });

  it("reads the epoch for a fee lowered to 0: the older one is in force until the newer one's epoch", () => {
    const lowered = mint([feeConfig(fee(100, 7n, 1n), fee(0, 0n, 9n))]);
    expect(feeDependsOnEpoch(mintAddress, lowered)).toBe(true);
    expect(dangerousExtensions(mintAddress, lowered, 8n)).toEqual([
      "TransferFeeConfig 100 bps up to 7 (from epoch 1)",
    ]);
    expect(dangerousExtensions(mintAddress, lowered, 9n)).toEqual([]);
    // Without the epoch the older fee counts.
    expect(dangerousExtensions(mintAddress, lowered)).toHaveLength(1);
    expect(feeDependsOnEpoch(mintAddress, mint([feeConfig(fee(0, 0n), fee(100, 7n))]))).toBe(false);
    expect(feeDependsOnEpoch(mintAddress, mint([]))).toBe(false);
  });

  it("names a mint it cannot read (none there, or not the Token-2022 program's)", () => {
    const unreadable = ["unreadable (no Token-2022 mint at that address)"];
    expect(dangerousExtensions(mintAddress, null)).toEqual(unreadable);
    expect(dangerousExtensions(mintAddress, mint([], TOKEN_PROGRAM))).toEqual(unreadable);
  });
});

describe("checkReceivedMints", () => {
  const dangerous = mint([delegate(key())]);
  it("refuses a dangerous mint unless allowed, naming it and its extension", () => {
    const accounts = new Map([[mintAddress, dangerous]]);
    expect(() => checkReceivedMints([mintAddress], accounts, { allowed: new Set() })).toThrow(PolicyRefusal);
    expect(() => checkReceivedMints([mintAddress], accounts, { allowed: new Set() })).toThrow(
      new RegExp(
        `^mint_extension: simulation: the wallet receives Token-2022 mint ${mintAddress} with PermanentDelegate`,
      ),
    );
    expect(() =>
      checkReceivedMints([mintAddress], accounts, { allowed: new Set([mintAddress]) }),
    ).not.toThrow();
  });
});

describe("receivedToken2022Mints", () => {
  const t22Mint = key().toBase58();
  function account(owner: string, amount: bigint, program = TOKEN_2022_PROGRAM, of = t22Mint): PostAccount {
    const data = Buffer.alloc(ACCOUNT_SIZE);
    AccountLayout.encode(
      {
        mint: new PublicKey(of),
        owner: new PublicKey(owner),
        amount,
        delegateOption: 0,
        delegate: PublicKey.default,
        delegatedAmount: 0n,
        state: AccountState.Initialized,
        isNativeOption: 0,
        isNative: 0n,
        closeAuthorityOption: 0,
        closeAuthority: PublicKey.default,
      },
      data,
    );
    return { owner: program, lamports: 1, data };
  }
  const state = (amount: bigint, of = t22Mint): TokenAccountState => ({
    programId: TOKEN_2022_PROGRAM,
    mint: of,
    owner: wallet,
    amount,
    delegatedAmount: 0n,
    lamports: 1n,
  });

  it("takes the wallet's Token-2022 accounts that are new or gain; not those that hold or lose", () => {
    const [gains, fresh, holds, loses] = [key(), key(), key(), key()].map((k) => k.toBase58());
    const others = [key(), key(), key()].map((k) => k.toBase58());
    const post = new Map<string, PostAccount | null>([
      [gains as string, account(wallet, 5n)],
      [holds as string, account(wallet, 5n, TOKEN_2022_PROGRAM, others[0])],
      [loses as string, account(wallet, 1n, TOKEN_2022_PROGRAM, others[1])],
    ]);
    const before = new Map([
      [gains as string, state(4n)],
      [holds as string, state(5n, others[0])],
      [loses as string, state(2n, others[1])],
    ]);
    expect(receivedToken2022Mints(before, post, wallet)).toEqual([t22Mint]);
    // A new account, even empty, is received; a stranger's or an SPL Token account is not.
    const freshMint = others[2] as string;
    post.set(fresh as string, account(wallet, 0n, TOKEN_2022_PROGRAM, freshMint));
    post.set(key().toBase58(), account(key().toBase58(), 9n, TOKEN_2022_PROGRAM, key().toBase58()));
    post.set(key().toBase58(), account(wallet, 9n, TOKEN_PROGRAM, key().toBase58()));
    expect(receivedToken2022Mints(before, post, wallet)).toEqual([t22Mint, freshMint]);
  });
});

describe("rent rules", () => {
  const [usdc, jup, input, output] = [key(), key(), key(), key()].map((k) => k.toBase58()) as [
    string,
    string,
    string,
    string,
  ];
  const base = { key: "k", wallet, strategy: "t" };
  it("frees the payout mints for claims and closes, input and output for orders and swaps", () => {
    const claim: Intent = { ...base, kind: "claim", positionPubkey: input };
    const close: Intent = { ...base, kind: "close", positionPubkey: input };
    const swap: Intent = { ...base, kind: "swap", inputMint: input, outputMint: output, amount: "1" };
    const trigger: Intent = {
      ...base,
      kind: "createTrigger",
      inputMint: input,
      outputMint: output,
      makingAmount: "1",
      takingAmount: "1",
    };
    expect(rentFreeMints(claim, [usdc, jup])).toEqual(new Set([usdc, jup]));
    expect(rentFreeMints(close, [usdc])).toEqual(new Set([usdc]));
    expect(rentFreeMints(swap, [usdc])).toEqual(new Set([input, output]));
    expect(rentFreeMints(trigger, [usdc])).toEqual(new Set([input, output]));
  });

  it("frees a cancel's input mint only when the intent names it", () => {
    const named: Intent = { ...base, kind: "cancelTrigger", order: output, inputMint: input };
    const unnamed: Intent = { ...base, kind: "cancelRecurring", order: output };
    expect(rentFreeMints(named, [usdc])).toEqual(new Set([input]));
    expect(rentFreeMints(unnamed, [usdc])).toEqual(new Set());
  });

  it("charges the new accounts of other mints; never an account the wallet had", () => {
    const had = state(usdc, input);
    const after = new Map([
      ["old", had],
      ["newFree", state(usdc, usdc)],
      ["newJunk", state(usdc, output)],
    ]);
    expect([...chargedNewAccounts(new Map([["old", had]]), after, new Set([usdc])).keys()]).toEqual([
      "newJunk",
    ]);
  });
  function state(_: string, mintOf: string): TokenAccountState {
    return {
      programId: TOKEN_PROGRAM,
      mint: mintOf,
      owner: wallet,
      amount: 0n,
      delegatedAmount: 0n,
      lamports: 1n,
    };
  }
});
