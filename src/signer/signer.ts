import type { PublicKey } from "@solana/web3.js";

/**
 * What the signer role needs from whatever holds the keys: which wallets it can sign for, and a
 * signature over a transaction's message bytes. The key material stays behind this interface.
 *
 * `Wallets` (keys.ts, keys loaded into this process) is the first implementation, and signs at once. A
 * remote holder (a KMS, a signing service) implements the same two methods and answers `sign` with a
 * promise; the one call site (signAndSend in sign-transaction.ts) awaits either.
 */
export interface Signer {
  has(wallet: PublicKey | string): boolean;
  /** The 64-byte Ed25519 signature of `message` by `wallet`'s key; throws when the wallet is not held. */
  sign(wallet: PublicKey | string, message: Uint8Array): Uint8Array | Promise<Uint8Array>;
}
