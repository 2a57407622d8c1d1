import { PublicKey } from "@solana/web3.js";
import { PolicyRefusal } from "../core/errors.js";
import type { InstructionEffect } from "./instruction-effects.js";
import { isTokenProgram } from "./programs.js";
import type { PostAccount } from "./simulated-effects.js";
import { readTokenAccount } from "./token-account.js";

/**
 * Where tokens the wallet spends may go. The outflow rules bound how much leaves; these bound where it
 * lands: a token account that stays the wallet's, or one whose authority is an address no key signs
 * for (off the ed25519 curve: a program-derived address, such as an order's escrow or a pool's vault)
 * and, when that address is an account, one of an allow-listed program. Never another wallet's account.
 * Pure: the simulation's post-state and the authorities' accounts come in, a PolicyRefusal goes out.
 */

/** One transfer out of a token account of the wallet, as an instruction (top-level or inner) makes it. */
export interface TokenDebit {
  where: string;
  op: string;
  source: string;
  destination: string | undefined;
  mint: string;
  amount: bigint;
}

/** What is known of an account: the program that owns it, or null when there is no account there. */
export type AccountOwnerView = { owner: string } | null;

const TRANSFER_OPS = new Set(["transfer", "transferChecked"]);

/** The transfers out of the wallet's token accounts, in execution order. */
export function walletTokenDebits(
  effects: readonly InstructionEffect[],
  walletTokens: ReadonlyMap<string, { readonly mint: string }>,
): TokenDebit[] {
  const debits: TokenDebit[] = [];
  for (const effect of effects) {
    if (!isTokenProgram(effect.programId) || !TRANSFER_OPS.has(effect.op)) continue;
    const source = effect.roles.source;
    const account = source !== undefined ? walletTokens.get(source) : undefined;
    if (source === undefined || account === undefined) continue;
    debits.push({
      where: effect.where,
      op: effect.op,
      source,
      destination: effect.roles.destination,
      mint: account.mint,
      amount: effect.amount ?? 0n,
    });
  }
  return debits;
}

/** The authority (owner) of a token account after the simulation; undefined when it is none. */
export function authorityAfter(post: ReadonlyMap<string, PostAccount | null>, address: string) {
  const raw = post.get(address);
  if (!raw) return undefined;
  return readTokenAccount({ owner: raw.owner, lamports: raw.lamports, data: raw.data })?.owner;
}

/** Answers already worked out: each costs ~0.5 ms (a point decompression), asked 2-3 times a check. */
const onCurve = new Map<string, boolean>();
const MAX_ON_CURVE_ANSWERS = 4_096;

/** Whether a key is a point of the curve: an address some private key may sign for. */
export function isOnCurve(address: string): boolean {
  const known = onCurve.get(address);
  if (known !== undefined) return known;
  const answer = PublicKey.isOnCurve(new PublicKey(address).toBytes());
  // Bounded by dropping all: the fleet's escrows and vaults, worked out again on a miss, not a leak.
  if (onCurve.size >= MAX_ON_CURVE_ANSWERS) onCurve.clear();
  onCurve.set(address, answer);
  return answer;
}

/**
 * The off-curve authorities of the debits' destinations other than the wallet: the accounts whose
 * owner program the destination rule needs (read in one batch by the caller).
 */
export function offCurveAuthorities(
  debits: readonly TokenDebit[],
  post: ReadonlyMap<string, PostAccount | null>,
  wallet: string,
): string[] {
  const found = new Set<string>();
  for (const debit of debits) {
    const authority = debit.destination !== undefined ? authorityAfter(post, debit.destination) : undefined;
    if (authority !== undefined && authority !== wallet && !isOnCurve(authority)) found.add(authority);
  }
  return [...found];
}

export interface DestinationContext {
  wallet: string;
  /** Every token account of the wallet the transaction touches (before, created, after). */
  walletTokens: ReadonlyMap<string, { readonly mint: string }>;
  post: ReadonlyMap<string, PostAccount | null>;
  /** The off-curve authorities' accounts (offCurveAuthorities); absent or null: no account there. */
  authorities: ReadonlyMap<string, AccountOwnerView>;
  allowedPrograms: ReadonlySet<string>;
}

/** Refuses a debit whose tokens land anywhere but the wallet's own account or a program's. */
export function checkDebitDestinations(debits: readonly TokenDebit[], ctx: DestinationContext): void {
  for (const debit of debits) {
    const problem = destinationProblem(debit, ctx);
    if (problem === undefined) continue;
    throw new PolicyRefusal(
      "outflow_destination",
      `instruction ${debit.where}: ${debit.op} sends ${debit.amount} of mint ${debit.mint} from the wallet's ${debit.source} to ${debit.destination ?? "an unnamed account"}, ${problem}`,
    );
  }
}

function destinationProblem(debit: TokenDebit, ctx: DestinationContext): string | undefined {
  const { destination } = debit;
  if (destination === undefined) return "which is not named";
  if (!ctx.post.has(destination)) return "whose state after the simulation is unknown";
  if (ctx.post.get(destination) === null) {
    // The wallet's own account, closed within the transaction: closing pays the wallet (the effect
    // rules see to it), and every transfer out of it before is a debit checked here as well.
    return ctx.walletTokens.has(destination) ? undefined : "which the transaction closes";
  }
  const authority = authorityAfter(ctx.post, destination);
  if (authority === undefined) return "which is no token account after the simulation";
  if (authority === ctx.wallet) return undefined;
  if (isOnCurve(authority)) return `whose authority ${authority} is another wallet (a key on the curve)`;
  const account = ctx.authorities.get(authority) ?? null;
  if (account === null || ctx.allowedPrograms.has(account.owner)) return undefined;
  return `whose authority ${authority} is an account of ${account.owner}, a program not on the allow-list`;
}
