import { z } from "zod";
import { type Intent, intentKeys } from "../src/core/intent.js";
import type { Snapshot } from "../src/core/snapshot.js";
import { defineStrategy } from "../src/core/strategy.js";

const configSchema = z.strictObject({
  /** Skip payouts below this many dollars (a claim costs a network fee). */
  minPayoutUsd: z.number().min(0, "expected dollars >= 0").default(0),
});

export type AutoClaimConfig = z.infer<typeof configSchema>;

type Position = Snapshot["positions"][number];

/**
 * A winning position not yet claimed: the service says `claimable`, or its market's result is the
 * side held (the service's own client reads only that). Either is a candidate: a claim asked for
 * before the market is settled is answered "not yet" (market_not_settled) and asked again later.
 */
export function isClaimCandidate(position: Position): boolean {
  if (position.claimed) return false;
  if (position.claimable) return true;
  const result = position.marketMetadata.result;
  return result != null && result === (position.isYes ? "yes" : "no");
}

/**
 * Claims every winning position once: a claim candidate, no claim of it already in flight. The
 * intent key (`claim-<position>`) makes a second claim of the same position impossible even when
 * two polls see it claimable before the first claim lands. The payout is `payoutUsd`, never the
 * floored `contracts`.
 */
export const autoClaim = defineStrategy<AutoClaimConfig>({
  name: "auto-claim",
  contractVersion: 1,
  description: "Claim the payout of every winning position",
  configSchema,
  evaluate({ snapshot, state, config }) {
    const minPayout = BigInt(Math.round(config.minPayoutUsd * 1_000_000));
    const inFlight = new Set(snapshot.inFlight.map((i) => i.key));
    const intents: Intent[] = [];
    for (const position of snapshot.positions) {
      if (!isClaimCandidate(position)) continue;
      const key = intentKeys.claim(position.pubkey);
      if (inFlight.has(key)) continue;
      if (BigInt(position.payoutUsd) < minPayout) continue;
      intents.push({
        kind: "claim",
        key,
        wallet: snapshot.wallet,
        strategy: "auto-claim",
        positionPubkey: position.pubkey,
        expectedPayoutMicroUsd: position.payoutUsd,
        reason: position.claimable ? "position is claimable" : "market resolved on the side held",
      });
    }
    return { intents, state };
  },
});
