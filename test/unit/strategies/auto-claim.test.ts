import { describe, expect, it } from "vitest";
import type { Position } from "../../../src/core/schemas/prediction.js";
import type { Snapshot } from "../../../src/core/snapshot.js";
import {
  autoClaim,
  DEFAULT_CLAIM_COST_MICRO_USD,
  isClaimCandidate,
  isForecastPosition,
} from "../../../strategies/auto-claim.js";
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
      // Candidacy and the minimum alone: the fee rule (below) is off.
      config: autoClaim.configSchema.parse({ minPayoutToCostRatio: 0, ...overrides }),
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

describe("auto-claim: claims worth their fee, the rest left to the service's free claim", () => {
  const HOUR = 3_600;
  const takenAt = 1_700_000_200;
  const evaluate = (
    positions: Position[],
    options: { cost?: string; state?: Record<string, unknown>; config?: Record<string, unknown> } = {},
  ) =>
    autoClaim.evaluate({
      snapshot: snapshot({
        positions,
        takenAt,
        ...(options.cost !== undefined ? { claimCostMicroUsd: options.cost } : {}),
      }),
      state: options.state ?? {},
      config: autoClaim.configSchema.parse(options.config ?? {}),
      now,
    });
  const paying = (payoutUsd: string, extra: Partial<Position> = {}) =>
    position({ claimable: true, payoutUsd, claimableAt: takenAt - HOUR, ...extra });

  it.each([
    // payout, cost, ratio, claimed at once?
    ["$1.00 at a $0.10 cost and 10x: exactly 10x is not more", "1000000", "100000", 10, false],
    ["$1.000001 at a $0.10 cost and 10x", "1000001", "100000", 10, true],
    ["$0.40 at a $0.05 cost and 10x", "400000", "50000", 10, false],
    ["$250 at a $0.05 cost and 10x", "250000000", "50000", 10, true],
    ["$0.40 at a $0.002 cost and 100x", "400000", "2000", 100, true],
    ["$0.40 at a $0.002 cost and 1000x", "400000", "2000", 1000, false],
    ["ratio 0 claims every payout at once", "1", "1000000", 0, true],
    ["a fractional ratio is exact: $0.25 at $0.10 and 2.5x", "250000", "100000", 2.5, false],
    ["a fractional ratio is exact: $0.250001 at $0.10 and 2.5x", "250001", "100000", 2.5, true],
  ])("%s", (_label, payoutUsd, cost, ratio, isClaimed) => {
    const held = paying(payoutUsd);
    const { intents } = evaluate([held], { cost, config: { minPayoutToCostRatio: ratio } });
    expect(intents).toHaveLength(1);
    expect(intents[0]).toMatchObject(
      isClaimed
        ? { kind: "claim", key: `claim-${held.pubkey}`, expectedPayoutMicroUsd: payoutUsd }
        : {
            kind: "claim",
            key: `claim-${held.pubkey}-left`,
            leaveToService: true,
            expectedPayoutMicroUsd: payoutUsd,
          },
    );
    expect(intents[0] && "leaveToService" in intents[0]).toBe(!isClaimed);
  });

  it("without an estimate in the snapshot, a claim is taken to cost $0.01 (the documented default)", () => {
    expect(DEFAULT_CLAIM_COST_MICRO_USD).toBe(10_000n);
    const tenfold = { config: { minPayoutToCostRatio: 10 } };
    const atDefault = evaluate([paying("100000"), paying("100001")], tenfold).intents;
    expect(atDefault.map((i) => i.kind === "claim" && i.leaveToService === true)).toEqual([true, false]);
  });

  it("says why it leaves a payout, and records it once: later polls ask nothing more", () => {
    const held = paying("400000");
    const first = evaluate([held], { cost: "50000" });
    expect(first.intents[0]?.reason).toBe(
      "left to the service's free claim: payout $0.40 is not worth more than 500x the claim's cost ($0.05)",
    );
    expect(first.state).toEqual({ left: [held.pubkey] });
    const second = evaluate([held], { cost: "50000", state: first.state });
    expect(second.intents).toEqual([]);
    expect(second.state).toEqual({ left: [held.pubkey] });
    // Claimed by the service: nothing left to do, and the position leaves the state.
    const third = evaluate([{ ...held, claimed: true }], { cost: "50000", state: second.state });
    expect(third).toEqual({ intents: [], state: { left: [] } });
  });

  it("weighs the exact payout (contractsMicro x $1), not the floored contracts", () => {
    const fractional = paying("0", { contracts: "0", contractsMicro: "2500000" } as Partial<Position>);
    // $2.50 at $0.002 and the default 500x ($1.00): claimed; the floored count would say $0.
    const { intents } = evaluate([fractional], { cost: "2000" });
    expect(intents).toEqual([
      expect.objectContaining({ key: `claim-${fractional.pubkey}`, expectedPayoutMicroUsd: "2500000" }),
    ]);
  });

  it("by default leaves the issue's $0.40 to the free claim at a $0.002 claim, and claims $1.01", () => {
    const left = evaluate([paying("400000"), paying("1010000")], { cost: "2000" }).intents;
    expect(left.map((i) => i.kind === "claim" && i.leaveToService === true)).toEqual([true, false]);
  });

  it("needs the claim cost in its snapshots", () => {
    expect(autoClaim.needs?.(config)).toEqual({ claimCost: true });
  });

  it("refuses a ratio below 0, naming the field", () => {
    const parsed = autoClaim.configSchema.safeParse({ minPayoutToCostRatio: -1 });
    expect(parsed.error?.issues[0]?.path).toEqual(["minPayoutToCostRatio"]);
    expect(parsed.error?.issues[0]?.message).toBe("expected a ratio >= 0");
  });
});

describe("auto-claim: Forecast (bisonfi) positions settle by themselves and are never claimed", () => {
  /** As api-live shows a Forecast winner: claimable false, its market resolved on the side held. */
  const forecastMarket = {
    ...marketMetadata({ status: "closed", result: "yes" }),
    provider: "bisonfi",
    lifecycleStatus: "settled",
    outcomeMint: "Fore1111111111111111111111111111111111111111",
    outcomeSide: "up",
  };
  it.each([
    [
      "provider on the position",
      position({
        claimable: false,
        provider: "bisonfi",
        marketMetadata: marketMetadata({ status: "closed", result: "yes" }),
      } as Partial<Position>),
    ],
    [
      "Forecast fields on its market",
      position({ claimable: false, marketMetadata: forecastMarket as Position["marketMetadata"] }),
    ],
    ["even one that says claimable", position({ claimable: true, provider: "BisonFi" } as Partial<Position>)],
  ])("%s", (_label, held) => {
    expect(isClaimCandidate(held)).toBe(true);
    expect(isForecastPosition(held)).toBe(true);
    const result = autoClaim.evaluate({ snapshot: snapshot({ positions: [held] }), state: {}, config, now });
    expect(result.intents).toEqual([]);
  });

  it("knows a Forecast position by its event's provider in the snapshot", () => {
    const held = position({ claimable: true });
    const events = { [held.eventId]: { category: "crypto", subcategory: "", tags: [], provider: "bisonfi" } };
    expect(isForecastPosition(held, { events } as Pick<Snapshot, "events">)).toBe(true);
    expect(isForecastPosition(held)).toBe(false);
  });
});
