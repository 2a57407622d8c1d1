import type { AccountInfo } from "@solana/web3.js";
import { PolicyRefusal } from "../core/errors.js";
import type { OutflowAllowance } from "../core/intent.js";
import { NATIVE_MINT } from "./programs.js";
import { readTokenAccount, type TokenAccountState } from "./token-account.js";

/**
 * The policy's second line, after the simulation: the wallet's accounts before against what the
 * simulation shows after. The effect rules refuse the instructions that would cause most of these
 * first; these checks stand on the outcome alone, whatever instruction (or CPI) caused it. Pure: the
 * states come in, the figures or a PolicyRefusal come out.
 */

/** An account after the simulation, as the node returns it (data decoded from base64). */
export interface PostAccount {
  owner: string;
  lamports: number;
  data: Buffer;
}

/**
 * The wallet's token accounts after the simulation whose lamports stay the wallet's: every one it
 * owned before, and the ones this transaction creates for it unless frozen (a frozen account cannot
 * be closed, its rent is gone). An existing account handed over to the wallet does not count (it may
 * hold what can never be moved out, so it could not be closed).
 */
export function keptTokenAccounts(
  post: ReadonlyMap<string, PostAccount | null>,
  before: ReadonlyMap<string, TokenAccountState>,
  newAccounts: ReadonlySet<string>,
  wallet: string,
): Map<string, TokenAccountState> {
  const kept = new Map<string, TokenAccountState>();
  for (const [address, raw] of post) {
    const after = raw
      ? readTokenAccount({ owner: raw.owner, lamports: raw.lamports, data: raw.data })
      : undefined;
    if (after?.owner !== wallet) continue;
    if (before.has(address) || (newAccounts.has(address) && !after.frozen)) kept.set(address, after);
  }
  return kept;
}

/**
 * What the wallet loses, by comparing its accounts before and after the simulation. Lamports count
 * the wallet and every token account it owns (wrapped SOL is lamports too, so SOL and wrapped SOL are
 * one budget; rent that moves into the wallet's own token accounts is not lost, except into the new
 * ones in `rentCharged`, of mints the intent neither receives nor spends). Tokens count the
 * accounts it owned before; one closed counts as zero. A token account of the wallet that gets a new
 * owner, a stranger as delegate or a close authority is refused outright.
 */
export function compareStates(
  walletBefore: AccountInfo<Buffer> | null | undefined,
  walletAfter: PostAccount | null | undefined,
  before: ReadonlyMap<string, TokenAccountState>,
  after: ReadonlyMap<string, TokenAccountState>,
  post: ReadonlyMap<string, PostAccount | null>,
  wallet: string,
  rentCharged: ReadonlySet<string> = new Set(),
): { lamportsOut: bigint; tokensOut: Map<string, bigint> } {
  let lamportsOut = BigInt(walletBefore?.lamports ?? 0) - BigInt(walletAfter?.lamports ?? 0);
  const tokensOut = new Map<string, bigint>();
  for (const [address, was] of before) {
    const raw = post.get(address);
    const now = raw
      ? readTokenAccount({ owner: raw.owner, lamports: raw.lamports, data: raw.data })
      : undefined;
    if (now && now.owner !== wallet) {
      throw new PolicyRefusal(
        "token_authority_change",
        `simulation: the owner of ${address} changes to ${now.owner}`,
      );
    }
    lamportsOut += was.lamports;
    const amountAfter = now?.mint === was.mint ? now.amount : 0n;
    tokensOut.set(was.mint, (tokensOut.get(was.mint) ?? 0n) + was.amount - amountAfter);
  }
  for (const [address, now] of after) {
    const was = before.get(address);
    if (now.delegate !== undefined && now.delegate !== was?.delegate && now.delegate !== wallet) {
      throw new PolicyRefusal("token_approve", `simulation: ${address} gets the delegate ${now.delegate}`);
    }
    if (
      was
        ? now.closeAuthority !== was.closeAuthority
        : now.closeAuthority !== undefined && now.closeAuthority !== wallet
    ) {
      throw new PolicyRefusal(
        "token_authority_change",
        `simulation: the close authority of ${address} changes`,
      );
    }
    // A new account whose rent is spent (rentCharged): its lamports count as gone.
    if (!rentCharged.has(address)) lamportsOut -= now.lamports;
  }
  return { lamportsOut, tokensOut };
}

/**
 * Refuses what the wallet loses beyond the allowance: lamports (SOL and wrapped SOL) beyond the fees
 * and the allowed lamports, tokens of a mint beyond its allowed amount (none for a mint not listed).
 */
export function checkOutflow(
  outflow: { lamportsOut: bigint; tokensOut: ReadonlyMap<string, bigint> },
  feeLamports: bigint,
  allowance: OutflowAllowance,
): void {
  const { lamportsOut, tokensOut } = outflow;
  if (lamportsOut > feeLamports + allowance.maxLamports) {
    throw new PolicyRefusal(
      "outflow_sol",
      `simulation: the wallet loses ${lamportsOut} lamports (SOL and wrapped SOL), allowed ${feeLamports} fees + ${allowance.maxLamports}`,
    );
  }
  for (const [mint, out] of tokensOut) {
    if (mint === NATIVE_MINT) continue; // lamports, counted with SOL above
    const limit = allowance.tokens.get(mint) ?? 0n;
    if (out > limit) {
      throw new PolicyRefusal(
        "outflow_token",
        `simulation: the wallet loses ${out} of mint ${mint}, allowed ${limit}`,
      );
    }
  }
}

/**
 * The wallet's net gain per mint: what its kept token accounts hold after the simulation (new ones
 * included) less what the accounts it owned held before.
 */
export function tokensGained(
  before: ReadonlyMap<string, TokenAccountState>,
  after: ReadonlyMap<string, TokenAccountState>,
): Map<string, bigint> {
  const gained = new Map<string, bigint>();
  for (const now of after.values()) gained.set(now.mint, (gained.get(now.mint) ?? 0n) + now.amount);
  for (const was of before.values()) gained.set(was.mint, (gained.get(was.mint) ?? 0n) - was.amount);
  return gained;
}
