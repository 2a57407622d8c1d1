import { ACCOUNT_SIZE, AccountState, AccountType } from "@solana/spl-token";
import { addressOfBytes } from "./address-text.js";
import { isTokenProgram } from "./programs.js";

/** The parts of an SPL Token / Token-2022 token account the policy compares before and after. */
export interface TokenAccountState {
  programId: string;
  mint: string;
  owner: string;
  amount: bigint;
  delegate?: string;
  delegatedAmount: bigint;
  closeAuthority?: string;
  /** Lamports held as wrapped SOL (native accounts), which are counted as tokens, not as rent. */
  nativeAmount?: bigint;
  /** Frozen by the mint's freeze authority: nothing moves and it cannot be closed until thawed. */
  frozen?: boolean;
  lamports: bigint;
}

/** An account as the RPC gives it: owner program, lamports and data bytes. */
export interface RawAccountInfo {
  owner: { toString(): string };
  lamports: number | bigint;
  data: Uint8Array;
}

/**
 * Where the fields of a token account's base layout lie (SPL Token, and Token-2022 before its
 * extensions): mint, owner, amount, delegate (a u32 option tag, then the key), state, isNative (tag,
 * then the rent-exempt reserve), delegatedAmount, closeAuthority (tag, then the key). 165 bytes.
 */
const AT = {
  mint: 0,
  owner: 32,
  amount: 64,
  delegateOption: 72,
  delegate: 76,
  state: 108,
  isNativeOption: 109,
  delegatedAmount: 121,
  closeAuthorityOption: 129,
  closeAuthority: 133,
} as const;

/**
 * Reads a token account; undefined for anything else (mints, other programs, uninitialized). The
 * fields are read in place: spl-token's layout decoder builds a key object and a BN per field, and
 * the check reads every account of a transaction two to four times.
 */
export function readTokenAccount(info: RawAccountInfo | null | undefined): TokenAccountState | undefined {
  if (!info) return undefined;
  const programId = info.owner.toString();
  const data = info.data;
  if (!isTokenProgram(programId) || data.length < ACCOUNT_SIZE) return undefined;
  // Token-2022 accounts with extensions carry an account-type byte right after the base layout;
  // a mint is padded to the same length, so that byte is what tells them apart.
  if (data.length > ACCOUNT_SIZE && data[ACCOUNT_SIZE] !== AccountType.Account) return undefined;
  const view = new DataView(data.buffer, data.byteOffset, ACCOUNT_SIZE);
  const stateByte = view.getUint8(AT.state);
  if (stateByte === AccountState.Uninitialized) return undefined;
  const key = (at: number) => addressOfBytes(data.subarray(at, at + 32));
  const amount = view.getBigUint64(AT.amount, true);
  const state: TokenAccountState = {
    programId,
    mint: key(AT.mint),
    owner: key(AT.owner),
    amount,
    delegatedAmount: view.getBigUint64(AT.delegatedAmount, true),
    lamports: BigInt(info.lamports),
  };
  if (view.getUint32(AT.delegateOption, true) === 1) state.delegate = key(AT.delegate);
  if (view.getUint32(AT.closeAuthorityOption, true) === 1) state.closeAuthority = key(AT.closeAuthority);
  if (view.getUint32(AT.isNativeOption, true) === 1) state.nativeAmount = amount;
  if (stateByte === AccountState.Frozen) state.frozen = true;
  return state;
}
