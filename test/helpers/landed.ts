import type { RunningSandbox } from "../../src/sandbox/index.js";

/** Each sandbox claim carries this memo, naming its position: `keeper-sandbox:claim:<position>`. */
const CLAIM_MEMO = /^keeper-sandbox:claim:(\w+)$/;

/**
 * Claim payouts that land on the sandbox's local chain from now on, by position, counted from the memo
 * each claim carries. Failed transactions do not count: they paid nothing. The map fills as blocks land.
 */
export function countLandedClaims(sandbox: RunningSandbox): Map<string, number> {
  if (!sandbox.chain) throw new Error("the sandbox runs no chain");
  const landedClaims = new Map<string, number>();
  sandbox.chain.chain.onLanded((landed) => {
    if (landed.err !== null) return;
    for (const memo of landed.memos) {
      const position = CLAIM_MEMO.exec(memo)?.[1];
      if (position) landedClaims.set(position, (landedClaims.get(position) ?? 0) + 1);
    }
  });
  return landedClaims;
}
