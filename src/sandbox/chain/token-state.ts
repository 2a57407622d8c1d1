import {
  ACCOUNT_SIZE,
  AccountLayout,
  AccountState,
  MINT_SIZE,
  MintLayout,
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
} from "@solana/spl-token";
import { PublicKey } from "@solana/web3.js";

export const TOKEN_PROGRAM_IDS: readonly PublicKey[] = [TOKEN_PROGRAM_ID, TOKEN_2022_PROGRAM_ID];

/** The fields of an SPL token account the RPC answers need. */
export interface TokenAccountState {
  readonly mint: PublicKey;
  readonly owner: PublicKey;
  readonly amount: bigint;
}

export interface MintState {
  readonly decimals: number;
  readonly supply: bigint;
  readonly mintAuthority: PublicKey | null;
}

export function isTokenProgram(owner: PublicKey): boolean {
  return TOKEN_PROGRAM_IDS.some((id) => id.equals(owner));
}

/** Reads a token account's base layout (Token-2022 extensions follow it and are ignored). */
export function decodeTokenAccount(data: Uint8Array): TokenAccountState | undefined {
  if (data.length < ACCOUNT_SIZE) return undefined;
  const raw = AccountLayout.decode(data.subarray(0, ACCOUNT_SIZE));
  if (raw.state === AccountState.Uninitialized) return undefined;
  return { mint: raw.mint, owner: raw.owner, amount: raw.amount };
}

export function decodeMint(data: Uint8Array): MintState | undefined {
  if (data.length < MINT_SIZE) return undefined;
  const raw = MintLayout.decode(data.subarray(0, MINT_SIZE));
  if (!raw.isInitialized) return undefined;
  return {
    decimals: raw.decimals,
    supply: raw.supply,
    mintAuthority: raw.mintAuthorityOption === 0 ? null : raw.mintAuthority,
  };
}

/** A mint's account data; `authority: null` is a fixed-supply mint (the wrapped SOL mint has none). */
export function encodeMint(args: { decimals: number; supply: bigint; authority: PublicKey | null }): Buffer {
  const data = Buffer.alloc(MINT_SIZE);
  MintLayout.encode(
    {
      mintAuthorityOption: args.authority === null ? 0 : 1,
      mintAuthority: args.authority ?? PublicKey.default,
      supply: args.supply,
      decimals: args.decimals,
      isInitialized: true,
      freezeAuthorityOption: 0,
      freezeAuthority: PublicKey.default,
    },
    data,
  );
  return data;
}

/**
 * A token account's data. `nativeReserve` marks a wrapped SOL account (the SPL Token program's
 * `is_native`): its lamports must be the reserve plus `amount`, and transfers move lamports with it.
 */
export function encodeTokenAccount(args: {
  mint: PublicKey;
  owner: PublicKey;
  amount: bigint;
  nativeReserve?: bigint;
}): Buffer {
  const data = Buffer.alloc(ACCOUNT_SIZE);
  AccountLayout.encode(
    {
      mint: args.mint,
      owner: args.owner,
      amount: args.amount,
      delegateOption: 0,
      delegate: PublicKey.default,
      state: AccountState.Initialized,
      isNativeOption: args.nativeReserve === undefined ? 0 : 1,
      isNative: args.nativeReserve ?? 0n,
      delegatedAmount: 0n,
      closeAuthorityOption: 0,
      closeAuthority: PublicKey.default,
    },
    data,
  );
  return data;
}

/**
 * A token account's data with `delegate` approved for `amount` (everything else kept, the native
 * reserve of a wrapped SOL account included): what an Approve by its owner would write. The sandbox
 * writes it directly for accounts whose owner is a program-derived address with no program to sign.
 */
export function withDelegate(data: Uint8Array, delegate: PublicKey, amount: bigint): Buffer {
  if (data.length < ACCOUNT_SIZE) throw new RangeError("not a token account: too short");
  const raw = AccountLayout.decode(data.subarray(0, ACCOUNT_SIZE));
  if (raw.state === AccountState.Uninitialized) throw new RangeError("not an initialized token account");
  const out = Buffer.from(data);
  AccountLayout.encode({ ...raw, delegateOption: 1, delegate, delegatedAmount: amount }, out);
  return out;
}

/** A raw amount as a decimal string with `decimals` places, trailing zeros trimmed (RPC `uiAmountString`). */
export function uiAmountString(amount: bigint, decimals: number): string {
  if (decimals === 0) return amount.toString();
  const text = amount.toString().padStart(decimals + 1, "0");
  const whole = text.slice(0, -decimals);
  const fraction = text.slice(-decimals).replace(/0+$/, "");
  return fraction === "" ? whole : `${whole}.${fraction}`;
}
