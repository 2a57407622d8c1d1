import { describe, expect, it } from "vitest";
import { autoClaim } from "../../strategies/auto-claim.js";
import { position, snapshot, WALLET } from "../helpers/fixtures.js";

const now = new Date(1_700_000_200_000);
const config = autoClaim.configSchema.parse({});
const winner = position({ claimable: true, payoutUsd: "10000000" });
const claimed = position({ claimable: true, claimed: true });
const loser = position({ claimable: false, valueUsd: "0" });
const open = position();
const small = position({ claimable: true, payoutUsd: "400000" });

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
        reason: "position is claimable",
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
