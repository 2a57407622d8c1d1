import { describe, expect, it } from "vitest";
import { autoClaim } from "../../../strategies/auto-claim.js";
import { marketMetadata, position, snapshot, WALLET } from "../../helpers/fixtures.js";

const now = new Date(1_700_000_200_000);
const config = autoClaim.configSchema.parse({});
const winner = position({ claimable: true, payoutUsd: "10000000" });
const claimed = position({ claimable: true, claimed: true });
const loser = position({ claimable: false, valueUsd: "0" });
const open = position();
const small = position({ claimable: true, payoutUsd: "400000" });
// As the live service sends them once the market closed: no valuation, no pnl, no dates.
const closedNulls = {
  valueUsd: null,
  markPriceUsd: null,
  sellPriceUsd: null,
  pnlUsd: null,
  pnlUsdAfterFees: null,
  pnlUsdPercent: null,
  pnlUsdAfterFeesPercent: null,
  claimableAt: null,
  settlementDate: null,
} as const;
const resolved = (result: "yes" | "no") => marketMetadata({ status: "closed", result });
const nullWinner = position({ ...closedNulls, claimable: true, payoutUsd: "10000000" });
/** The result says it won, the service does not say claimable yet (its own client reads the result). */
const wonByResult = position({ ...closedNulls, claimable: false, marketMetadata: resolved("yes") });
const wonOnNo = position({ ...closedNulls, isYes: false, claimable: false, marketMetadata: resolved("no") });
const lostByResult = position({ ...closedNulls, claimable: false, marketMetadata: resolved("no") });
const claimedByResult = position({ ...closedNulls, claimed: true, marketMetadata: resolved("yes") });
/** Under one contract: contracts floored to 0, the payout is what counts. */
const underOneContract = position({ ...closedNulls, claimable: true, contracts: "0", payoutUsd: "600000" });

describe("auto-claim", () => {
  it.each([
    ["a claimable, unclaimed position", [winner], {}, [winner.pubkey]],
    ["an already claimed position", [claimed], {}, []],
    ["a losing position", [loser], {}, []],
    ["an open position", [open], {}, []],
    [
      "several at once, winners only",
      [winner, claimed, loser, open, small],
      {},
      [winner.pubkey, small.pubkey],
    ],
    ["a payout under the minimum", [small], { minPayoutUsd: 0.5 }, []],
    ["a payout at the minimum", [small], { minPayoutUsd: 0.4 }, [small.pubkey]],
    ["a claimable position of a closed market, its figures null", [nullWinner], {}, [nullWinner.pubkey]],
    [
      "not claimable yet, but the market resolved on the side held (yes)",
      [wonByResult],
      {},
      [wonByResult.pubkey],
    ],
    ["not claimable yet, but the market resolved on the side held (no)", [wonOnNo], {}, [wonOnNo.pubkey]],
    ["the market resolved against the side held", [lostByResult], {}, []],
    ["claimed, whatever the result", [claimedByResult], {}, []],
    [
      "under one contract: the payout decides, not contracts",
      [underOneContract],
      { minPayoutUsd: 0.5 },
      [underOneContract.pubkey],
    ],
  ])("%s", (_label, positions, overrides, expected) => {
    const result = autoClaim.evaluate({
      snapshot: snapshot({ positions }),
      state: {},
      config: autoClaim.configSchema.parse(overrides),
      now,
    });
    expect(result.intents).toEqual(
      expected.map((pubkey) => ({
        kind: "claim",
        key: `claim-${pubkey}`,
        wallet: WALLET,
        strategy: "auto-claim",
        positionPubkey: pubkey,
        expectedPayoutMicroUsd: positions.find((p) => p.pubkey === pubkey)?.payoutUsd,
        reason: positions.find((p) => p.pubkey === pubkey)?.claimable
          ? "position is claimable"
          : "market resolved on the side held",
      })),
    );
  });

  it("asks nothing for a claim already in flight", () => {
    const result = autoClaim.evaluate({
      snapshot: snapshot({
        positions: [winner],
        inFlight: [
          { key: `claim-${winner.pubkey}`, kind: "claim", strategy: "auto-claim", status: "sending" },
        ],
      }),
      state: {},
      config,
      now,
    });
    expect(result.intents).toEqual([]);
  });

  it("rejects a negative minimum in its config", () => {
    const parsed = autoClaim.configSchema.safeParse({ minPayoutUsd: -1 });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.path).toEqual(["minPayoutUsd"]);
  });
});
