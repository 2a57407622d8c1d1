import { contractsTimes } from "./contract-units.js";
import type { MarketPhase, MarketRecord } from "./markets.js";
import { ONE_USD_MICRO } from "./markets.js";
import { hashString, intBetween, mulberry32, pick, type Random } from "./rng.js";

/** What a generated position is at genesis; the world moves it on from there. */
export type PositionSlot =
  | "open"
  | "open-failed-order"
  | "open-pending-order"
  | "closing"
  | "awaiting"
  | "claimable"
  | "claimed"
  | "losing"
  | "closed";

/** The portfolio of each of the first wallets: every position state a keeper must handle. */
export const RICH_TEMPLATE: readonly PositionSlot[] = [
  "open-failed-order",
  "open-pending-order",
  "closing",
  "awaiting",
  "claimable",
  "claimable",
  "claimed",
  "losing",
  "closed",
];
/** Wallets beyond the rich ones (scale runs) hold a few positions; the first three always exist. */
const SMALL_TEMPLATE: readonly PositionSlot[] = [
  "claimable",
  "open-pending-order",
  "losing",
  "open",
  "claimed",
  "closing",
  "awaiting",
];

export interface PendingOrderRecord {
  readonly kind: "pending" | "failed";
  readonly isBuy: boolean;
  readonly contracts: number;
  /** Limit price: the floor of a sell, the ceiling of a buy. */
  readonly limitPriceMicro: number;
  readonly createdAt: number;
}

/**
 * A position, compactly: amounts are integer micro-USD in safe-integer range (contracts ≤ 10^4, so
 * values stay below 2^53 by many orders of magnitude). Derived figures are computed when read.
 */
export interface PositionRecord {
  readonly index: number;
  readonly ownerIndex: number;
  readonly marketIndex: number;
  readonly isYes: boolean;
  /** Contracts held, in steps of 0.01 (fills are floored to a hundredth): see contract-units.ts. */
  readonly contracts: number;
  readonly avgPriceMicro: number;
  readonly feesMicro: number;
  readonly openedAt: number;
  readonly bump: number;
  readonly extraOrder: PendingOrderRecord | null;
  /** Public key, derived on first use (base58 encoding of thousands of keys is not free). */
  pubkey?: string;
  claimedAt?: number;
  claimedMicro?: number;
  claimSignature?: string;
  closedAt?: number;
  closedProceedsMicro?: number;
  closeSignature?: string;
}

export interface PositionLayout {
  readonly richWallets: number;
  readonly positionsPerWallet: number;
  /** Of the other wallets, about this percent hold nothing (a fleet's empty wallets); default 0. */
  readonly idleWalletPct?: number;
  /** The world's seed: which wallets hold nothing follows from it. */
  readonly seed?: number;
}

/** Whether wallet `walletIndex` holds nothing: never a rich one; the others by a draw of the seed. */
function isIdleWallet(walletIndex: number, layout: PositionLayout): boolean {
  const pct = layout.idleWalletPct ?? 0;
  if (walletIndex < layout.richWallets || pct <= 0) return false;
  return mulberry32(hashString(`idle:${walletIndex}#${layout.seed ?? 1}`))() * 100 < pct;
}

export function slotsForWallet(walletIndex: number, layout: PositionLayout): readonly PositionSlot[] {
  if (walletIndex < layout.richWallets) return RICH_TEMPLATE;
  if (isIdleWallet(walletIndex, layout)) return [];
  const slots: PositionSlot[] = [];
  for (let k = 0; k < layout.positionsPerWallet; k++)
    slots.push(SMALL_TEMPLATE[k % SMALL_TEMPLATE.length] ?? "open");
  return slots;
}

const PHASE_OF_SLOT: Record<PositionSlot, MarketPhase> = {
  open: "open",
  "open-failed-order": "open",
  "open-pending-order": "open",
  closing: "closing",
  awaiting: "awaiting",
  claimable: "resolved",
  claimed: "resolved",
  losing: "resolved",
  closed: "open",
};

const HOUR = 3_600;
/** What the first wallet's first position holds beyond whole contracts. */
export const FRACTION_OF_FIRST_POSITION = 0.5;
const DAY = 86_400;

function clampPrice(price: number): number {
  return Math.min(970_000, Math.max(30_000, price));
}

interface SlotContext {
  readonly random: Random;
  readonly market: MarketRecord;
  readonly slot: PositionSlot;
  readonly genesis: number;
  readonly isRich: boolean;
}

function sideFor({ slot, market, random }: SlotContext): boolean {
  if (slot === "claimable" || slot === "claimed") return market.plannedResult === "yes";
  if (slot === "losing") return market.plannedResult !== "yes";
  return random() < 0.6;
}

function openedAtFor({ slot, market, genesis, random }: SlotContext): number {
  if (PHASE_OF_SLOT[slot] === "resolved") return intBetween(random, market.openTime, market.closeTime - HOUR);
  // Recent enough for the weekly leaderboard, never before the market opened.
  return Math.max(market.openTime + HOUR, genesis - intBetween(random, 2 * HOUR, 6 * DAY));
}

function extraOrderFor(
  ctx: SlotContext,
  contracts: number,
  avgPriceMicro: number,
): PendingOrderRecord | null {
  const { slot, genesis, random } = ctx;
  if (slot === "open-pending-order")
    return {
      kind: "pending",
      isBuy: false,
      contracts: Math.max(1, Math.floor(contracts / 2)),
      limitPriceMicro: clampPrice(avgPriceMicro + 150_000),
      createdAt: genesis - intBetween(random, 5, 120) * 60,
    };
  if (slot === "open-failed-order")
    return {
      kind: "failed",
      isBuy: true,
      contracts: intBetween(random, 1, 20),
      limitPriceMicro: clampPrice(avgPriceMicro - 200_000),
      createdAt: genesis - intBetween(random, 3, 48) * HOUR,
    };
  return null;
}

/** Markets grouped by genesis phase, for placing positions. */
export function marketsByPhase(
  markets: readonly MarketRecord[],
): Record<MarketPhase, readonly MarketRecord[]> {
  const byPhase: Record<MarketPhase, MarketRecord[]> = {
    open: [],
    closing: [],
    awaiting: [],
    resolved: [],
    cancelled: [],
  };
  // Forecast markets hold no generated positions: opening one goes through POST /orders and execute.
  for (const market of markets) if (market.forecast === undefined) byPhase[market.phase].push(market);
  return byPhase;
}

/**
 * The positions of one wallet: a function of (seed, wallet index) alone, so a scale run of 10,000
 * wallets is generated in one pass without crypto (public keys are derived when read).
 */
export function generateWalletPositions(
  seed: number,
  walletIndex: number,
  firstIndex: number,
  layout: PositionLayout,
  byPhase: Record<MarketPhase, readonly MarketRecord[]>,
  genesis: number,
): PositionRecord[] {
  const random = mulberry32(hashString(`positions:${walletIndex}#${seed}`));
  const isRich = walletIndex < layout.richWallets;
  return slotsForWallet(walletIndex, layout).map((slot, k) => {
    const market = pick(random, byPhase[PHASE_OF_SLOT[slot]]);
    const ctx: SlotContext = { random, market, slot, genesis, isRich };
    const isYes = sideFor(ctx);
    const yesStart = market.startPriceMicro;
    const sideStart = isYes ? yesStart : ONE_USD_MICRO - yesStart;
    const avgPriceMicro =
      PHASE_OF_SLOT[slot] === "resolved"
        ? intBetween(random, 150_000, 850_000)
        : clampPrice(sideStart + intBetween(random, -150_000, 150_000));
    const whole = isRich ? intBetween(random, 10, 250) : intBetween(random, 1, 100);
    // The first wallet's first position holds half a contract more: the live service keeps fractions
    // (its legacy `contracts` floors them), and a client must meet one from genesis on.
    const contracts = walletIndex === 0 && k === 0 ? whole + FRACTION_OF_FIRST_POSITION : whole;
    const sizeMicro = contractsTimes(contracts, avgPriceMicro);
    const openedAt = openedAtFor(ctx);
    const record: PositionRecord = {
      index: firstIndex + k,
      ownerIndex: walletIndex,
      marketIndex: market.index,
      isYes,
      contracts,
      avgPriceMicro,
      feesMicro: Math.max(10_000, Math.floor(sizeMicro / 100)),
      openedAt,
      bump: 250 + (k % 6),
      extraOrder: extraOrderFor(ctx, contracts, avgPriceMicro),
    };
    if (slot === "claimed") {
      // Claimed after resolution but before genesis: a claim is part of the generated past.
      record.claimedAt = Math.min(market.resolveTime + intBetween(random, 1, 48) * HOUR, genesis - 60);
      record.claimedMicro = contractsTimes(contracts, ONE_USD_MICRO);
    }
    if (slot === "closed") {
      record.closedAt = openedAt + intBetween(random, 1, 30) * 60;
      // Sold at a price near cost, less 1 % in fees.
      record.closedProceedsMicro = Math.floor(
        (contractsTimes(contracts, clampPrice(avgPriceMicro + intBetween(random, -50_000, 50_000))) * 99) /
          100,
      );
    }
    return record;
  });
}
