import type { RunningSandbox } from "../../src/sandbox/index.js";

/**
 * Claim payouts that land on the sandbox's local chain from now on, by position, counted from the memo
 * each claim carries (`keeper-sandbox:claim:<position>`). Failed transactions do not count: they paid
 * nothing. The map fills as blocks land.
 */
export function countLandedClaims(sandbox: RunningSandbox): Map<string, number> {
  return countLanded(sandbox, "claim");
}

/** Sells (closes) that land on the sandbox's local chain from now on, by position, as countLandedClaims. */
export function countLandedCloses(sandbox: RunningSandbox): Map<string, number> {
  return countLanded(sandbox, "close");
}

function countLanded(sandbox: RunningSandbox, kind: "claim" | "close"): Map<string, number> {
  if (!sandbox.chain) throw new Error("the sandbox runs no chain");
  const memo = new RegExp(`^keeper-sandbox:${kind}:(\\w+)$`);
  const landedCount = new Map<string, number>();
  sandbox.chain.chain.onLanded((landed) => {
    if (landed.err !== null) return;
    for (const line of landed.memos) {
      const position = memo.exec(line)?.[1];
      if (position) landedCount.set(position, (landedCount.get(position) ?? 0) + 1);
    }
  });
  return landedCount;
}
