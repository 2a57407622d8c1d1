import { ACCOUNT_SIZE, AccountLayout, AccountState, AccountType } from "@solana/spl-token";
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

/** Reads a token account; undefined for anything else (mints, other programs, uninitialized). */
export function readTokenAccount(info: RawAccountInfo | null | undefined): TokenAccountState | undefined {
  if (!info) return undefined;
  const programId = info.owner.toString();
  if (!isTokenProgram(programId) || info.data.length < ACCOUNT_SIZE) return undefined;
  // Token-2022 accounts with extensions carry an account-type byte right after the base layout;
  // a mint is padded to the same length, so that byte is what tells them apart.
  if (info.data.length > ACCOUNT_SIZE && info.data[ACCOUNT_SIZE] !== AccountType.Account) return undefined;
  const raw = AccountLayout.decode(Buffer.from(info.data.subarray(0, ACCOUNT_SIZE)));
  if (raw.state === AccountState.Uninitialized) return undefined;
  const state: TokenAccountState = {
    programId,
    mint: raw.mint.toBase58(),
    owner: raw.owner.toBase58(),
    amount: raw.amount,
    delegatedAmount: raw.delegatedAmount,
    lamports: BigInt(info.lamports),
  };
  if (raw.delegateOption === 1) state.delegate = raw.delegate.toBase58();
  if (raw.closeAuthorityOption === 1) state.closeAuthority = raw.closeAuthority.toBase58();
  if (raw.isNativeOption === 1) state.nativeAmount = raw.amount;
  if (raw.state === AccountState.Frozen) state.frozen = true;
  return state;
}
