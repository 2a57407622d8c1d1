import { describe, expect, it } from "vitest";
import type { Intent } from "../../../src/core/intent.js";
import { walletValueMicroUsd } from "../../../src/core/position-value.js";
import type { Position } from "../../../src/core/schemas/prediction.js";
import type { LedgerRow } from "../../../src/keeper/state/ledger.js";
import { dailyActivity, dayStart, sumTotals, walletTotals } from "../../../src/status/fleet-totals.js";
import { positionLine } from "../../../src/status/position-lines.js";
import { position, WALLET } from "../../helpers/fixtures.js";

// 2027-01-15 12:00:00 UTC.
const NOW = 1_800_014_400;
const TODAY = dayStart(NOW);
const OTHER = "8YttLkHDoNj9wyDur5pM1ejNaAvT9X4eqaYcHQqtj2G5";

function row(
  kind: "claim" | "close",
  status: LedgerRow["status"],
  at: number,
  amount: string,
  extra: Partial<Intent> = {},
): LedgerRow {
  const intent = {
    kind,
    key: `${kind}-${at}`,
    wallet: WALLET,
    strategy: "s",
    positionPubkey: WALLET,
    ...extra,
  } as Intent;
  return {
    key: intent.key,
    kind,
    wallet: WALLET,
    strategy: "s",
    status,
    intent,
    tries: 1,
    builds: 1,
    amountMicroUsd: amount,
    createdAt: at,
    updatedAt: at,
    confirmedAt: at,
  };
}

const open = (overrides: Partial<Position> = {}) =>
  position({ contracts: "171", contractsMicro: "171500000", ...overrides });
const closed = (overrides: Partial<Position>, market: Partial<Position["marketMetadata"]>) =>
  position({
    ...overrides,
    marketMetadata: { ...position().marketMetadata, status: "closed", ...market },
    valueUsd: null,
    markPriceUsd: null,
    sellPriceUsd: null,
  });

describe("a position's line", () => {
  it("values an open position at the bid before fees when no strategy estimates the fee", () => {
    // 171.5 contracts at a bid of $0.69: $118.335, against a cost of $6.
    const line = positionLine(open(), []);
    expect(line).toMatchObject({
      contracts: "171.5",
      state: "open",
      realizableMicroUsd: 118_335_000n,
      isNetOfFees: false,
    });
    expect(line.realizablePnlMicroUsd).toBe(112_335_000n);
    expect(line.realizablePnlPct).toBe(1872.25);
  });

  it("takes the first strategy's realizable figure and nearest rule", () => {
    const line = positionLine(open(), [
      { nearestDetail: "held back", isAlert: true },
      { realizableMicroUsd: "5910000", nearestRule: "take-profit in +4.2 %" },
    ]);
    expect(line).toMatchObject({
      realizableMicroUsd: 5_910_000n,
      isNetOfFees: true,
      realizablePnlMicroUsd: -90_000n,
      realizablePnlPct: -1.5,
      nearestDetail: "held back",
      isAlert: true,
    });
    // The first outlook that names a rule: its text and figures together.
    expect(line.nearestRule).toBeUndefined();
  });

  it.each<[string, Position, string, bigint | null, bigint | null]>([
    [
      "a winner to claim: its payout",
      position({ claimable: true, valueUsd: null }),
      "claimable",
      10_000_000n,
      4_000_000n,
    ],
    [
      "a winner still settling",
      closed({ claimableAt: 1_800_000_000 }, { result: "yes" }),
      "won, settling",
      10_000_000n,
      4_000_000n,
    ],
    ["a loser: nothing", closed({ claimableAt: null }, { result: "no" }), "lost", 0n, -6_000_000n],
    [
      "closed, no result yet",
      closed({ claimableAt: null }, { result: null }),
      "closed, awaiting result",
      null,
      null,
    ],
    ["open with no bid", open({ sellPriceUsd: null }), "open", null, null],
  ])("%s", (_label, p, state, realizable, pnl) => {
    const line = positionLine(p, []);
    expect([line.state, line.realizableMicroUsd, line.realizablePnlMicroUsd]).toEqual([
      state,
      realizable,
      pnl,
    ]);
  });

  it("a wallet's value: open at the mark, winners at their payout, losers and unknowns at 0, claimed ones out", () => {
    expect(
      walletValueMicroUsd([
        open(),
        position({ claimable: true, valueUsd: null }),
        closed({ claimableAt: null }, { result: "no" }),
        closed({ claimableAt: null }, { result: null }),
        position({ claimed: true }),
      ]),
    ).toBe(7_000_000n + 10_000_000n);
  });
});

describe("totals", () => {
  const lines = [
    positionLine(open(), [{ realizableMicroUsd: "5910000" }]),
    positionLine(open({ sellPriceUsd: null }), []),
    positionLine(position({ claimable: true, valueUsd: null }), []),
  ];
  const rows = [
    row("claim", "confirmed", NOW - 60, "2500000"),
    row("claim", "confirmed", TODAY - 3_600, "1000000"),
    row("claim", "confirmed", NOW - 8 * 86_400, "9000000"),
    row("claim", "failed", NOW - 60, "7000000"),
    {
      ...row("close", "confirmed", NOW - 2 * 86_400, "5910000", {
        costBasisMicroUsd: "6600000",
      } as Partial<Intent>),
      feeMicroUsd: "90000",
    },
    { ...row("claim", "confirmed", NOW - 60, "3000000"), wallet: OTHER },
  ];

  it("adds a wallet's positions and what its ledger says landed", () => {
    expect(walletTotals(WALLET, lines, rows, NOW)).toEqual({
      positions: 3,
      valueMicroUsd: 7_000_000n + 7_000_000n + 10_000_000n,
      realizableMicroUsd: 5_910_000n + 10_000_000n,
      noBid: 1,
      claimedTodayMicroUsd: 2_500_000n,
      claimed7dMicroUsd: 3_500_000n,
      exits7d: 1,
      exitsPnl7dMicroUsd: -690_000n,
      feesPaidMicroUsd: 300_000n,
      exitFees7dMicroUsd: 90_000n,
      awaitingClaim: 1,
      awaitingClaimMicroUsd: 10_000_000n,
    });
  });

  it("adds the wallets' totals for the fleet", () => {
    const one = walletTotals(WALLET, lines, rows, NOW);
    const other = walletTotals(OTHER, [], rows, NOW);
    expect(sumTotals([one, other])).toMatchObject({
      positions: 3,
      claimedTodayMicroUsd: 5_500_000n,
      claimed7dMicroUsd: 6_500_000n,
    });
  });

  it("counts claims and exits a UTC day, empty days too, the oldest first", () => {
    const days = dailyActivity(rows, NOW, 3);
    expect(days.map((d) => d.day)).toEqual([TODAY - 2 * 86_400, TODAY - 86_400, TODAY]);
    expect(days.map((d) => [d.claims, d.claimedMicroUsd, d.exits, d.exitedMicroUsd])).toEqual([
      [0, 0n, 1, 5_910_000n],
      [1, 1_000_000n, 0, 0n],
      [2, 5_500_000n, 0, 0n],
    ]);
  });
});
