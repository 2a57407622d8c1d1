/** A blockhash is accepted for this many blocks after the block that issued it. */
export const BLOCKHASH_LIFETIME_BLOCKS = 150;

/**
 * The last block height at which a transaction can still land, as far as Keeper believes it: the
 * service's `lastValidBlockHeight`, but never beyond `blockHeight` + 151. Any blockhash Keeper holds
 * was issued at or before the height its node reports now, so it cannot live past that plus 150;
 * the one block more allows for the service's node being a block ahead of ours. A far-off value from
 * the service would otherwise keep a dropped transaction waiting (and a signing slot taken) for as
 * long as it says.
 */
export function capLastValidBlockHeight(lastValidBlockHeight: number, blockHeight: number): number {
  return Math.min(lastValidBlockHeight, blockHeight + BLOCKHASH_LIFETIME_BLOCKS + 1);
}
