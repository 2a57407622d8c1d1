/** How many blocks a blockhash stays valid on mainnet after the block that produced it. */
export const BLOCKHASH_VALIDITY_BLOCKS = 150;

export interface IssuedBlockhash {
  readonly blockhash: string;
  readonly lastValidBlockHeight: number;
}

/**
 * The blockhashes this chain has produced, each with its `lastValidBlockHeight`. LiteSVM itself only
 * accepts its latest blockhash, so the chain turns that check off and asks this window instead.
 */
export class BlockhashWindow {
  private readonly issued = new Map<string, number>();
  private latestIssued: IssuedBlockhash | undefined;

  record(blockhash: string, blockHeight: number): IssuedBlockhash {
    const entry = { blockhash, lastValidBlockHeight: blockHeight + BLOCKHASH_VALIDITY_BLOCKS };
    this.issued.set(blockhash, entry.lastValidBlockHeight);
    this.latestIssued = entry;
    return entry;
  }

  latest(): IssuedBlockhash {
    if (this.latestIssued === undefined) throw new Error("no blockhash issued yet");
    return this.latestIssued;
  }

  lastValidBlockHeightOf(blockhash: string): number | undefined {
    return this.issued.get(blockhash);
  }

  /** Whether a transaction with this blockhash may still execute at `blockHeight`. */
  isValid(blockhash: string, blockHeight: number): boolean {
    const lastValid = this.issued.get(blockhash);
    return lastValid !== undefined && blockHeight <= lastValid;
  }

  /** Forgets blockhashes expired long ago, so a long run does not grow without bound. */
  prune(blockHeight: number): void {
    for (const [hash, lastValid] of this.issued) {
      if (lastValid < blockHeight - BLOCKHASH_VALIDITY_BLOCKS) this.issued.delete(hash);
      else break; // insertion order is height order
    }
  }
}
