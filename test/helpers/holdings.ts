import type { Holding } from "../../src/keeper/state/holdings.js";

/** A yes holding of $1 at a mark of $0.50, not claimable, with a take-profit: fields tests change. */
export function testHolding(
  fields: Pick<Holding, "wallet" | "marketId" | "eventId" | "position"> & Partial<Holding>,
): Holding {
  return {
    side: "yes",
    sizeUsd: "1000000",
    costUsd: "1010000",
    claimable: false,
    resolvedSeen: false,
    markUsd: "500000",
    exit: { above: "900000" },
    sweptAt: 1_700_000_000,
    ...fields,
  };
}
