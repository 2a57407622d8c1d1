import { z } from "zod";
import { type Intent, intentKeys } from "../src/core/intent.js";
import { defineStrategy } from "../src/core/strategy.js";

const configSchema = z.strictObject({
  /** Skip payouts below this many dollars (a claim costs a network fee). */
  minPayoutUsd: z.number().min(0, "expected dollars >= 0").default(0),
});

export type AutoClaimConfig = z.infer<typeof configSchema>;

/**
 * Claims every winning position once: claimable, not yet claimed, no claim of it already in flight.
 * The intent key (`claim-<position>`) makes a second claim of the same position impossible even
 * when two polls see it claimable before the first claim lands.
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
      if (!position.claimable || position.claimed) continue;
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
        reason: "position is claimable",
      });
    }
    return { intents, state };
  },
});
