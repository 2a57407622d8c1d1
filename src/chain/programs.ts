import { ASSOCIATED_TOKEN_PROGRAM_ID, TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from "@solana/spl-token";
import { ComputeBudgetProgram, SystemProgram } from "@solana/web3.js";

/** Program ids the policy knows by name. */
export const SYSTEM_PROGRAM = SystemProgram.programId.toBase58();
export const COMPUTE_BUDGET_PROGRAM = ComputeBudgetProgram.programId.toBase58();
export const TOKEN_PROGRAM = TOKEN_PROGRAM_ID.toBase58();
export const TOKEN_2022_PROGRAM = TOKEN_2022_PROGRAM_ID.toBase58();
export const ASSOCIATED_TOKEN_PROGRAM = ASSOCIATED_TOKEN_PROGRAM_ID.toBase58();
export const MEMO_PROGRAM = "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr";
export const MEMO_V1_PROGRAM = "Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo";
export const NATIVE_MINT = "So11111111111111111111111111111111111111112";

/** Programs every transaction may call; the service's own programs are added by configuration. */
export const DEFAULT_ALLOWED_PROGRAMS: readonly string[] = [
  SYSTEM_PROGRAM,
  COMPUTE_BUDGET_PROGRAM,
  TOKEN_PROGRAM,
  TOKEN_2022_PROGRAM,
  ASSOCIATED_TOKEN_PROGRAM,
  MEMO_PROGRAM,
  MEMO_V1_PROGRAM,
];

export function isTokenProgram(programId: string): boolean {
  return programId === TOKEN_PROGRAM || programId === TOKEN_2022_PROGRAM;
}
