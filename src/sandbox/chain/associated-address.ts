import { getAssociatedTokenAddressSync, TOKEN_PROGRAM_ID } from "@solana/spl-token";
import type { PublicKey } from "@solana/web3.js";

/**
 * Associated token addresses, remembered: a derivation searches bumps with a SHA-256 and an
 * off-curve check in JavaScript each (about a millisecond here), and the sandbox derives the same
 * owners' accounts for every claim, close and order it builds. Bounded by dropping all when full.
 */
const known = new Map<string, PublicKey>();
const MAX_KNOWN = 200_000;

/** The associated token account of `owner` for `mint` under `programId` (owners off the curve allowed). */
export function associatedAddress(
  mint: PublicKey,
  owner: PublicKey,
  programId: PublicKey = TOKEN_PROGRAM_ID,
): PublicKey {
  const id = `${mint.toBase58()} ${owner.toBase58()} ${programId.toBase58()}`;
  let address = known.get(id);
  if (address === undefined) {
    address = getAssociatedTokenAddressSync(mint, owner, true, programId);
    if (known.size >= MAX_KNOWN) known.clear();
    known.set(id, address);
  }
  return address;
}
