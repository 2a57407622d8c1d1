import type { Market, Position } from "../../src/core/schemas/prediction.js";
import type { InFlightIntent, Snapshot } from "../../src/core/snapshot.js";

export const WALLET = "7YttLkHDoNj9wyDur5pM1ejNaAvT9X4eqaYcHQqtj2G5";
export const OTHER_WALLET = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin";

let counter = 0;
/** A base58-shaped, unique, 44-character position key. */
export function fakePubkey(tag: string): string {
  counter += 1;
  const body = `${tag}${counter}`.replace(/[^1-9A-HJ-NP-Za-km-z]/g, "x");
  return `${body}${"1".repeat(44)}`.slice(0, 44);
}

export function position(overrides: Partial<Position> = {}): Position {
  return {
    pubkey: fakePubkey("Pos"),
    owner: WALLET,
    ownerPubkey: WALLET,
    market: fakePubkey("Mkt"),
    marketId: "mkt-1",
    marketIdHash: "h",
    eventId: "evt-1",
    isYes: true,
    claimed: false,
    claimable: false,
    contracts: "10",
    totalCostUsd: "6000000",
    sizeUsd: "6000000",
    valueUsd: "7000000",
    avgPriceUsd: "600000",
    markPriceUsd: "700000",
    sellPriceUsd: "690000",
    pnlUsd: "1000000",
    pnlUsdAfterFees: "900000",
    feesPaidUsd: "100000",
    claimedUsd: "0",
    payoutUsd: "10000000",
    pnlUsdPercent: 16.6,
    pnlUsdAfterFeesPercent: 15,
    realizedPnlUsd: 0,
    openedAt: 1_700_000_000,
    updatedAt: 1_700_000_100,
    claimableAt: 0,
    settlementDate: 0,
    openOrders: 0,
    bump: 255,
    eventMetadata: {
      eventId: "evt-1",
      title: "Event",
      subtitle: "",
      slug: "event",
      series: "",
      closeTime: "1700100000",
      imageUrl: "https://example.invalid/e.png",
      isLive: false,
    },
    marketMetadata: {
      marketId: "mkt-1",
      title: "Market",
      status: "open",
      result: null,
      closeTime: 1_700_100_000,
      openTime: 1_699_000_000,
      isTeamMarket: false,
      rulesPrimary: "",
      rulesSecondary: "",
      eventId: "evt-1",
    },
    ...overrides,
  };
}

export function snapshot(overrides: Partial<Snapshot> = {}): Snapshot {
  return {
    wallet: WALLET,
    takenAt: 1_700_000_200,
    positions: [],
    openOrders: [],
    inFlight: [],
    balances: {},
    ...overrides,
  };
}

/** A position's market metadata with some fields changed (the rest as in `position()`). */
export function marketMetadata(
  overrides: Partial<Position["marketMetadata"]> = {},
): Position["marketMetadata"] {
  return { ...position().marketMetadata, ...overrides };
}

/** A position's event metadata with some fields changed (the rest as in `position()`). */
export function eventMetadata(overrides: Partial<Position["eventMetadata"]> = {}): Position["eventMetadata"] {
  return { ...position().eventMetadata, ...overrides };
}

/** An intent the ledger holds as in flight. */
export function inFlight(
  key: string,
  kind: InFlightIntent["kind"],
  extra: Partial<InFlightIntent> = {},
): InFlightIntent {
  return { key, kind, strategy: "test", status: "sending", ...extra };
}

/** A market that closed and resolved "yes" (mkt-1): its yes holders have a claim. */
export const RESOLVED_MARKET: Market = {
  marketId: "mkt-1",
  status: "closed",
  result: "yes",
  openTime: 1_699_000_000,
  closeTime: 1_700_000_000,
  resolveAt: "2023-11-14T22:13:20Z",
};
