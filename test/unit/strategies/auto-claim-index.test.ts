import { describe, expect, it } from "vitest";
import type { Market } from "../../../src/core/schemas/prediction.js";
import type { IndexedWinner } from "../../../src/core/strategy-hooks.js";
import { autoClaim, claimFromIndex } from "../../../strategies/auto-claim.js";
import { RESOLVED_MARKET, WALLET } from "../../helpers/fixtures.js";

const config = autoClaim.configSchema.parse({});
const POSITION = "Pos1111111111111111111111111111111111111111";
const entry: IndexedWinner = {
  wallet: WALLET,
  position: POSITION,
  marketId: "mkt-1",
  eventId: "evt-1",
  side: "yes",
  contractsMicro: "2500000",
  costUsd: "1500000",
};
const resolved = RESOLVED_MARKET;

describe("auto-claim's claimFromIndex: the poll's rule on an index entry", () => {
  it("claims the exact count at $1 a contract under the claim's own key", () => {
    expect(claimFromIndex({ config, entry, market: resolved, claimCostMicroUsd: "2000" })).toEqual({
      intent: {
        kind: "claim",
        key: `claim-${POSITION}`,
        wallet: WALLET,
        strategy: "auto-claim",
        positionPubkey: POSITION,
        expectedPayoutMicroUsd: "2500000",
        reason: "market resolved yes, the side held (from the holdings index)",
      },
    });
  });

  it("leaves a payout not worth the fee to the service, under the -left key", () => {
    // $2.50 is not worth more than 500 x $0.01.
    const answer = claimFromIndex({ config, entry, market: resolved, claimCostMicroUsd: "10000" });
    expect(answer?.intent).toMatchObject({ key: `claim-${POSITION}-left`, leaveToService: true });
    // Without an estimate, the default cost ($0.01) decides alike.
    expect(claimFromIndex({ config, entry, market: resolved })?.intent).toMatchObject({
      leaveToService: true,
    });
  });

  it("asks nothing below minPayoutUsd", () => {
    const answer = claimFromIndex({
      config: { ...config, minPayoutUsd: 3 },
      entry,
      market: resolved,
      claimCostMicroUsd: "1",
    });
    expect(answer).toEqual({ reason: "payout below minPayoutUsd" });
  });

  it("never claims a Forecast market's winner (known by its market's own fields)", () => {
    for (const market of [
      { ...resolved, outcomeMint: POSITION },
      { ...resolved, lifecycleStatus: "settled" },
      { ...resolved, provider: "BisonFi" },
    ] as Market[])
      expect(claimFromIndex({ config, entry, market, claimCostMicroUsd: "1" })?.intent).toBeUndefined();
  });

  it("leaves an entry without the exact count to a poll (undefined), and a loser unclaimed", () => {
    const { contractsMicro: _, ...withoutCount } = entry;
    expect(claimFromIndex({ config, entry: withoutCount, market: resolved })).toBeUndefined();
    expect(
      claimFromIndex({ config, entry: { ...entry, side: "no" }, market: resolved })?.intent,
    ).toBeUndefined();
  });

  it("is the strategy's hook", () => {
    expect(autoClaim.claimFromIndex).toBe(claimFromIndex);
  });
});
