import { hash32 } from "./rng.js";

export const ONE_USD_MICRO = 1_000_000;
/** The walk reflects inside these bounds, so every open price stays strictly inside (0, $1). */
export const PRICE_FLOOR_MICRO = 20_000;
export const PRICE_CEILING_MICRO = 980_000;
/** Largest move of the yes price in one minute. */
export const MAX_STEP_MICRO = 12_000;
/** Half the spread between buy and sell prices. */
export const HALF_SPREAD_MICRO = 5_000;

/** Where a market stands at genesis; what it becomes later follows from its times. */
export type MarketPhase = "open" | "closing" | "awaiting" | "resolved" | "cancelled";
export type MarketResult = "yes" | "no";
export type MarketStatus = "open" | "closed" | "cancelled";

export interface MarketRecord {
  readonly index: number;
  readonly marketId: string;
  readonly pubkey: string;
  readonly resultPubkey: string;
  readonly eventIndex: number;
  readonly title: string;
  readonly phase: MarketPhase;
  readonly openTime: number;
  readonly closeTime: number;
  /** When the market resolves unless a test resolves it first. */
  readonly resolveTime: number;
  readonly isCancelled: boolean;
  /** Fixed outcome for markets resolved before genesis; later ones resolve by their price at close. */
  readonly plannedResult: MarketResult | null;
  readonly startPriceMicro: number;
  readonly noiseSeed: number;
  readonly baseVolumeMicro: number;
  readonly volumePerMinuteMicro: number;
  /**
   * Set by `resolveMarket`: the outcome, when it was decided, and when it settles (claims are
   * possible from then on; before, a claim answers market_not_settled, as on the live service).
   */
  resolution?: { readonly result: MarketResult; readonly resolveAt: number; readonly settlesAt: number };
  /**
   * Set by `resolveMarket(..., { needsClaim: false })`: the market pays its winners without a claim
   * (a claim build is answered 400 no_claim_required); the service's automatic claim pays them.
   */
  needsNoClaim?: boolean;
  /** Set by `cancelMarket`: when the market was cancelled (no result; nothing to claim). */
  cancelledAt?: number;
  /**
   * Set by `closeMarket`: closed ahead of its schedule, unresolved, and shown closing at this time
   * (whatever the world's clock says, so a benchmark can show the keeper a close that just passed).
   */
  closedEarlyAt?: number;
  /**
   * Set by `setPrice` with a spread: half the gap between buy and sell prices, around the mid (the
   * mark). A wide one is a thin book: the bid (what a sale fills at) sits far below the mark.
   */
  halfSpreadMicro?: number;
  /** Set by `setPrice`: the walk restarts from this price at this minute (or holds it). */
  anchor?: { readonly minute: number; readonly priceMicro: number; readonly hold: boolean };
  /** Forecast (bisonfi) markets: one side of an up-or-down question, traded as an atomic swap. */
  readonly forecast?: {
    readonly outcomeSide: "up" | "down";
    /** A Token-2022 mint on the live service; a derived address here. */
    readonly outcomeMint: string;
    readonly marketPda: string;
  };
  /** Last computed point of the walk, so moving forward in time costs only the new minutes. */
  walkCache?: { minute: number; priceMicro: number };
}

export interface MarketState {
  readonly status: MarketStatus;
  readonly result: MarketResult | null;
  readonly resolveAt: number | null;
}

export interface MarketPricing {
  readonly buyYesPriceUsd: number;
  readonly buyNoPriceUsd: number;
  readonly sellYesPriceUsd: number;
  readonly sellNoPriceUsd: number;
  readonly volume: number;
}

/** Minutes since genesis; the walk takes one step per minute. */
export const minuteOf = (seconds: number, genesisSeconds: number): number =>
  Math.floor((seconds - genesisSeconds) / 60);

function reflect(price: number): number {
  if (price < PRICE_FLOOR_MICRO) return 2 * PRICE_FLOOR_MICRO - price;
  if (price > PRICE_CEILING_MICRO) return 2 * PRICE_CEILING_MICRO - price;
  return price;
}

function step(market: MarketRecord, minute: number): number {
  return (hash32(market.noiseSeed, minute) % (2 * MAX_STEP_MICRO + 1)) - MAX_STEP_MICRO;
}

/**
 * The yes price at a minute: a bounded random walk whose every step is a pure function of (seed,
 * market, minute), so any instant can be recomputed and two worlds of one seed agree to the micro-dollar.
 */
export function walkPriceAt(market: MarketRecord, minute: number): number {
  const anchor = market.anchor;
  const originMinute = anchor?.minute ?? 0;
  const originPrice = anchor?.priceMicro ?? market.startPriceMicro;
  if (minute <= originMinute || anchor?.hold === true) return originPrice;
  let from = { minute: originMinute, priceMicro: originPrice };
  const cache = market.walkCache;
  if (cache !== undefined && cache.minute <= minute && cache.minute >= originMinute) from = cache;
  let price = from.priceMicro;
  for (let m = from.minute + 1; m <= minute; m++) price = reflect(price + step(market, m));
  market.walkCache = { minute, priceMicro: price };
  return price;
}

/** When the market closes, or closed: its schedule's time, or the one `closeMarket` gave it. */
export function closeTimeOf(market: MarketRecord): number {
  return market.closedEarlyAt ?? market.closeTime;
}

/** Status, result and resolution time at an instant. */
export function marketStateAt(market: MarketRecord, now: number, genesisSeconds: number): MarketState {
  if (market.resolution !== undefined)
    return { status: "closed", result: market.resolution.result, resolveAt: market.resolution.resolveAt };
  if (market.cancelledAt !== undefined) return { status: "cancelled", result: null, resolveAt: null };
  if (market.closedEarlyAt === undefined && now < market.closeTime)
    return { status: "open", result: null, resolveAt: null };
  if (market.isCancelled) return { status: "cancelled", result: null, resolveAt: null };
  if (now < market.resolveTime) return { status: "closed", result: null, resolveAt: null };
  return { status: "closed", result: scheduledResult(market, genesisSeconds), resolveAt: market.resolveTime };
}

/** Markets resolving after genesis settle on their last price: yes if it closed at or above $0.50. */
export function scheduledResult(market: MarketRecord, genesisSeconds: number): MarketResult {
  if (market.plannedResult !== null) return market.plannedResult;
  const closePrice = walkPriceAt(market, minuteOf(market.closeTime, genesisSeconds));
  return closePrice >= ONE_USD_MICRO / 2 ? "yes" : "no";
}

/** The yes mid price at an instant: walking while open, frozen at close, $1 or $0 once resolved. */
export function yesMidAt(
  market: MarketRecord,
  state: MarketState,
  now: number,
  genesisSeconds: number,
): number {
  if (state.result === "yes") return ONE_USD_MICRO;
  if (state.result === "no") return 0;
  const until = state.status === "open" ? now : Math.min(now, closeTimeOf(market));
  return walkPriceAt(market, minuteOf(until, genesisSeconds));
}

export function pricingAt(
  market: MarketRecord,
  state: MarketState,
  now: number,
  genesisSeconds: number,
): MarketPricing {
  const yes = yesMidAt(market, state, now, genesisSeconds);
  const no = ONE_USD_MICRO - yes;
  const spread = state.result === null ? (market.halfSpreadMicro ?? HALF_SPREAD_MICRO) : 0;
  const tradedUntil = Math.min(now, market.closeTime);
  const minutesTraded = Math.max(0, Math.floor((tradedUntil - market.openTime) / 60));
  return {
    buyYesPriceUsd: yes + spread,
    buyNoPriceUsd: no + spread,
    // A wide spread on a price that walked near an edge: no bid below nothing.
    sellYesPriceUsd: Math.max(0, yes - spread),
    sellNoPriceUsd: Math.max(0, no - spread),
    volume: market.baseVolumeMicro + minutesTraded * market.volumePerMinuteMicro,
  };
}
