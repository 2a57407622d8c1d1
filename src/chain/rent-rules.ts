import type { Intent } from "../core/intent.js";
import type { TokenAccountState } from "./token-account.js";

/**
 * Rent the wallet puts into its own new token accounts stays the wallet's (it comes back when the
 * account is closed), but only an account the intent needs is worth it: one for a mint the intent
 * receives or spends. A claim that also opens accounts of nine other mints has the wallet pay ~0.018
 * SOL for nothing it asked for; that rent counts as spent, against the intent's allowance.
 */

/**
 * The mints whose new wallet accounts are free: a claim's or close's payout mints, an order's or
 * swap's input and output, a cancel's input when the intent names it.
 */
export function rentFreeMints(intent: Intent, payoutMints: readonly string[]): Set<string> {
  switch (intent.kind) {
    case "claim":
    case "close":
    case "closeAll":
      return new Set(payoutMints);
    case "swap":
    case "createTrigger":
    case "createRecurring":
      return new Set([intent.inputMint, intent.outputMint]);
    case "cancelTrigger":
    case "cancelRecurring":
      return new Set(intent.inputMint !== undefined ? [intent.inputMint] : []);
  }
}

/**
 * The wallet's token accounts the transaction creates and leaves open (in `after`, not in `before`)
 * whose mint is not rent-free: their rent is spent.
 */
export function chargedNewAccounts(
  before: ReadonlyMap<string, unknown>,
  after: ReadonlyMap<string, TokenAccountState>,
  freeMints: ReadonlySet<string>,
): Map<string, TokenAccountState> {
  const charged = new Map<string, TokenAccountState>();
  for (const [address, account] of after) {
    if (!before.has(address) && !freeMints.has(account.mint)) charged.set(address, account);
  }
  return charged;
}

/** Bytes the runtime counts for every account on top of its data, in rent. */
const ACCOUNT_STORAGE_OVERHEAD = 128n;
/** 3,480 lamports a byte-year for the two years that make an account rent-exempt: mainnet's rent. */
const RENT_EXEMPT_LAMPORTS_PER_BYTE = 6_960n;

/**
 * The lamports that make an account of `dataLength` bytes rent-exempt (2,039,280 for a 165-byte token
 * account), as the Rent sysvar's defaults give them. Written out rather than read from the node: a
 * lower rent on the cluster only makes what it bounds a little looser.
 */
export function rentExemptMinimum(dataLength: number): bigint {
  return (ACCOUNT_STORAGE_OVERHEAD + BigInt(dataLength)) * RENT_EXEMPT_LAMPORTS_PER_BYTE;
}
