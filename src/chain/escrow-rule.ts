import { PolicyRefusal } from "../core/errors.js";
import type { Intent } from "../core/intent.js";
import { isOnCurve } from "./outflow-destinations.js";
import type { PostAccount } from "./simulated-effects.js";
import { readTokenAccount, type TokenAccountState } from "./token-account.js";

/**
 * An order's deposit must reach its escrow: the intent's amount of its input mint must arrive in
 * token accounts held by an address no key signs for (off the curve, not the wallet), and in those of
 * the order itself when the build named it. The destination rule keeps the input from other wallets;
 * this one keeps it from going back to the wallet or to some other program's account instead of the
 * order that is to hold it. Pure: the states come in, a PolicyRefusal goes out.
 */
export interface EscrowContext {
  intent: Intent;
  wallet: string;
  /** The order account the build named (the ledger row's `order`), when it did. */
  order?: string;
  /** Token accounts the transaction names, as they were before it (absent: none there). */
  before: ReadonlyMap<string, TokenAccountState>;
  post: ReadonlyMap<string, PostAccount | null>;
}

/** What the order must deposit: its input mint and amount; undefined for every other kind. */
export function orderDeposit(intent: Intent): { mint: string; amount: bigint } | undefined {
  if (intent.kind === "createTrigger") return { mint: intent.inputMint, amount: BigInt(intent.makingAmount) };
  if (intent.kind === "createRecurring") return { mint: intent.inputMint, amount: BigInt(intent.inAmount) };
  return undefined;
}

/** The raw units of `mint` the escrow accounts gain in the simulation, summed over those that gain. */
export function escrowArrivals(ctx: EscrowContext, mint: string): bigint {
  let arrived = 0n;
  for (const [address, raw] of ctx.post) {
    if (!raw) continue;
    const after = readTokenAccount({ owner: raw.owner, lamports: raw.lamports, data: raw.data });
    if (after?.mint !== mint || !isEscrowAuthority(after.owner, ctx)) continue;
    const was = ctx.before.get(address);
    const gained = after.amount - (was?.mint === mint ? was.amount : 0n);
    if (gained > 0n) arrived += gained;
  }
  return arrived;
}

function isEscrowAuthority(authority: string, ctx: EscrowContext): boolean {
  if (ctx.order !== undefined) return authority === ctx.order;
  return authority !== ctx.wallet && !isOnCurve(authority);
}

/** Refuses an order whose simulation puts less than its amount into its escrow. */
export function checkEscrow(ctx: EscrowContext): void {
  const deposit = orderDeposit(ctx.intent);
  if (deposit === undefined) return;
  const arrived = escrowArrivals(ctx, deposit.mint);
  if (arrived >= deposit.amount) return;
  const where =
    ctx.order !== undefined
      ? `the order ${ctx.order}'s token accounts`
      : "token accounts of an off-curve authority (an escrow)";
  throw new PolicyRefusal(
    "escrow_short",
    `simulation: ${arrived} of mint ${deposit.mint} arrives in ${where}, the order deposits ${deposit.amount}`,
  );
}
