import type {
  Event,
  EventMetadata,
  Market,
  MarketMetadata,
  Order,
  Position,
} from "../../core/schemas/prediction.js";
import { contractFields, contractsTimes, microContractsOf, wholeContracts } from "./contract-units.js";
import type { EventRecord } from "./events.js";
import { closeTimeOf, type MarketRecord, ONE_USD_MICRO } from "./markets.js";
import type { PositionRecord } from "./positions.js";
import { derivePubkey, hashString, hexTag } from "./rng.js";
import type { World } from "./world.js";

/** Responses as the service sends them: USD amounts as integer strings of micro-USD. */
const usd = (micro: number | bigint): string => String(micro);
const percent = (part: number, whole: number): number =>
  whole === 0 ? 0 : Math.round((part / whole) * 10_000) / 100;

/** Unix seconds as the live service writes a resolved market's resolveAt: ISO 8601. */
const isoOf = (seconds: number): string => new Date(seconds * 1000).toISOString();

/**
 * A market as the live service sends it: fields flat on the market; once resolved, `resolveAt` an
 * ISO string and no quotes (every price null); a cancelled market quotes nothing either.
 */
export function marketView(world: World, market: MarketRecord): Market {
  const state = world.marketState(market);
  const event = world.eventOf(market);
  const pricing = world.pricing(market);
  const isQuoted = state.status === "open";
  return {
    marketId: market.marketId,
    status: state.status,
    result: state.result,
    openTime: market.openTime,
    closeTime: closeTimeOf(market),
    resolveAt: state.result !== null && state.resolveAt !== null ? isoOf(state.resolveAt) : state.resolveAt,
    marketResultPubkey: market.resultPubkey,
    imageUrl: `https://sandbox.invalid/markets/${market.marketId}.png`,
    title: market.title,
    eventId: event.eventId,
    marketPubkey: market.pubkey,
    isTeamMarket: event.category === "sports" || event.category === "esports",
    rulesPrimary: rulesPrimary(market),
    rulesSecondary: "Resolves from the provider's official result; cancelled markets refund at cost.",
    pricing: isQuoted
      ? { ...pricing }
      : {
          buyYesPriceUsd: null,
          buyNoPriceUsd: null,
          sellYesPriceUsd: null,
          sellNoPriceUsd: null,
          volume: pricing.volume,
        },
    ...forecastFields(market, state),
  };
}

/** Forecast markets' own fields (api-live): where the market is in its life, and its outcome token. */
function forecastFields(market: MarketRecord, state: { status: string; result: string | null }) {
  if (market.forecast === undefined) return {};
  let lifecycleStatus = "resolving";
  if (state.status === "open") lifecycleStatus = "open";
  else if (state.result !== null || state.status === "cancelled") lifecycleStatus = "settled";
  return {
    lifecycleStatus,
    tradable: state.status === "open",
    outcomeMint: market.forecast.outcomeMint,
    outcomeSide: market.forecast.outcomeSide,
    marketPda: market.forecast.marketPda,
  };
}

function rulesPrimary(market: MarketRecord): string {
  return `Resolves yes if "${market.title}" holds at ${new Date(market.closeTime * 1000).toISOString()}.`;
}

/** Listed while any market is open or awaiting its result; live once it has begun and is listed. */
export function eventFlags(world: World, event: EventRecord): { isActive: boolean; isLive: boolean } {
  const isActive = event.marketIndexes.some((i) => {
    const market = world.markets[i];
    return (
      market !== undefined &&
      world.marketState(market).result === null &&
      world.marketState(market).status !== "cancelled"
    );
  });
  const isLive = isActive && event.beginAt !== null && event.beginAt <= world.now();
  return { isActive, isLive };
}

export function eventVolumeMicro(world: World, event: EventRecord): number {
  let total = 0;
  for (const i of event.marketIndexes) {
    const market = world.markets[i];
    if (market !== undefined) total += world.pricing(market).volume;
  }
  return total;
}

const DAY_SECONDS = 86_400;

/** What an event's markets traded in the last 24 hours of the world's clock (micro-USD). */
export function eventVolume24hMicro(world: World, event: EventRecord): number {
  const now = world.now();
  let total = 0;
  for (const i of event.marketIndexes) {
    const market = world.markets[i];
    if (market === undefined) continue;
    const from = Math.max(market.openTime, now - DAY_SECONDS);
    const until = Math.min(now, market.closeTime);
    total += Math.max(0, Math.floor((until - from) / 60)) * market.volumePerMinuteMicro;
  }
  return total;
}

/**
 * The score of a live match (sports and esports events that have begun), made up from the event's
 * id and the minutes played; every other event has none. The fields are the sandbox's own: the
 * reference leaves a score's shape to the provider.
 */
export function liveScoreOf(world: World, event: EventRecord): Record<string, unknown> | null {
  const isMatch = event.category === "sports" || event.category === "esports";
  if (!isMatch || event.beginAt === null || !eventFlags(world, event).isLive) return null;
  const minutes = Math.floor((world.now() - event.beginAt) / 60);
  const pace = 20 + (hashString(event.eventId) % 40);
  const home = Math.floor(minutes / pace);
  const away = Math.floor((minutes + (hashString(`${event.eventId}:away`) % pace)) / (pace + 7));
  return { homeScore: home, awayScore: away, minutesPlayed: minutes, updatedAt: world.now() };
}

export function eventView(world: World, event: EventRecord, includeMarkets: boolean): Event {
  const { isActive, isLive } = eventFlags(world, event);
  const markets = event.marketIndexes.flatMap((i) =>
    world.markets[i] === undefined ? [] : [world.markets[i]],
  );
  const lastClose = Math.max(...markets.map((m) => m.closeTime));
  return {
    eventId: event.eventId,
    isActive,
    isLive,
    category: event.category,
    subcategory: event.subcategory,
    volumeUsd: usd(eventVolumeMicro(world, event)),
    volume24hr: usd(eventVolume24hMicro(world, event)),
    liveScore: liveScoreOf(world, event),
    closeCondition: `Closes when its last market closes (${new Date(lastClose * 1000).toISOString()}).`,
    beginAt: event.beginAt === null ? null : String(event.beginAt),
    rulesPdf: `https://sandbox.invalid/rules/${event.eventId}.pdf`,
    tags: [...event.tags],
    metadata: {
      title: event.title,
      subtitle: event.subtitle,
      slug: event.slug,
      series: event.series,
      // No provider: the live service's EventMetadata does not carry one.
      createdAt: event.createdAt,
      imageUrl: `https://sandbox.invalid/events/${event.eventId}.png`,
    },
    ...(includeMarkets ? { markets: markets.map((m) => marketView(world, m)) } : {}),
  };
}

export function marketMetadata(world: World, market: MarketRecord): MarketMetadata {
  const state = world.marketState(market);
  const event = world.eventOf(market);
  return {
    marketId: market.marketId,
    title: market.title,
    status: state.status,
    result: state.result,
    closeTime: closeTimeOf(market),
    openTime: market.openTime,
    isTeamMarket: event.category === "sports" || event.category === "esports",
    rulesPrimary: rulesPrimary(market),
    rulesSecondary: "Resolves from the provider's official result; cancelled markets refund at cost.",
    eventId: event.eventId,
  };
}

export function eventMetadata(world: World, event: EventRecord): EventMetadata {
  const closeTime = Math.max(...event.marketIndexes.map((i) => world.markets[i]?.closeTime ?? 0));
  return {
    eventId: event.eventId,
    title: event.title,
    subtitle: event.subtitle,
    slug: event.slug,
    series: event.series,
    closeTime: String(closeTime),
    imageUrl: `https://sandbox.invalid/events/${event.eventId}.png`,
    isLive: eventFlags(world, event).isLive,
  };
}

export const marketIdHash = (marketId: string): string => hexTag(`market-id:${marketId}`, 64);

/** Figures of a position at the world's now. */
export interface PositionFigures {
  readonly sizeMicro: number;
  readonly totalCostMicro: number;
  readonly markMicro: number;
  readonly sellMicro: number;
  readonly valueMicro: number;
  readonly pnlMicro: number;
  readonly payoutMicro: number;
  readonly realizedMicro: number;
  readonly isPendingOrderOpen: boolean;
}

export function positionFigures(world: World, p: PositionRecord): PositionFigures {
  const market = world.marketOf(p);
  const state = world.marketState(market);
  const pricing = world.pricing(market);
  const yesMid = Math.round((pricing.buyYesPriceUsd + pricing.sellYesPriceUsd) / 2);
  const sizeMicro = contractsTimes(p.contracts, p.avgPriceMicro);
  const totalCostMicro = sizeMicro + p.feesMicro;
  // A cancelled market refunds at cost, so its contracts are worth what was paid.
  let markMicro = p.isYes ? yesMid : ONE_USD_MICRO - yesMid;
  if (state.status === "cancelled") markMicro = p.avgPriceMicro;
  const sellMicro =
    state.status === "open" ? (p.isYes ? pricing.sellYesPriceUsd : pricing.sellNoPriceUsd) : markMicro;
  const isGone = p.claimedAt !== undefined || p.closedAt !== undefined;
  const valueMicro = isGone ? 0 : contractsTimes(p.contracts, markMicro);
  const realisedAmount = p.claimedMicro ?? p.closedProceedsMicro;
  const pnlMicro = (realisedAmount ?? valueMicro) - sizeMicro;
  const isLoser = state.result !== null && !world.isWinning(p);
  let realizedMicro = 0;
  if (realisedAmount !== undefined) realizedMicro = realisedAmount - totalCostMicro;
  else if (isLoser) realizedMicro = -totalCostMicro;
  // A landed close waiting for its fill (World.holdSells) is an open order of the position too.
  const hasPendingOrder = p.extraOrder?.kind === "pending" || world.hasHeldSell(p);
  const isPendingOrderOpen = hasPendingOrder && !isGone && state.status === "open";
  return {
    sizeMicro,
    totalCostMicro,
    markMicro,
    sellMicro,
    valueMicro,
    pnlMicro,
    payoutMicro: contractsTimes(p.contracts, ONE_USD_MICRO),
    realizedMicro,
    isPendingOrderOpen,
  };
}

/**
 * A position as the live service sends it: once its market is closed (resolved or cancelled) there
 * is no valuation, so value, mark, sell price and every pnl figure are null; claimableAt is set only
 * for a winner and settlementDate only once the market resolved.
 */
export function positionView(world: World, p: PositionRecord): Position {
  const market = world.marketOf(p);
  const event = world.eventOf(market);
  const state = world.marketState(market);
  const f = positionFigures(world, p);
  const owner = world.ownerOf(p);
  const isWinner = world.isWinning(p);
  const updatedAt = Math.max(p.openedAt, p.claimedAt ?? 0, p.closedAt ?? 0, state.resolveAt ?? 0);
  const isValued = state.status === "open";
  const valued = <T>(value: T): T | null => (isValued ? value : null);
  return {
    pubkey: world.positionPubkey(p),
    owner,
    ownerPubkey: owner,
    market: market.pubkey,
    marketId: market.marketId,
    marketIdHash: marketIdHash(market.marketId),
    eventId: event.eventId,
    isYes: p.isYes,
    claimed: p.claimedAt !== undefined,
    claimable: world.isClaimable(p),
    ...contractFields(p.contracts),
    totalCostUsd: usd(f.totalCostMicro),
    sizeUsd: usd(f.sizeMicro),
    valueUsd: valued(usd(f.valueMicro)),
    avgPriceUsd: usd(p.avgPriceMicro),
    markPriceUsd: valued(usd(f.markMicro)),
    sellPriceUsd: valued(usd(f.sellMicro)),
    pnlUsd: valued(usd(f.pnlMicro)),
    pnlUsdAfterFees: valued(usd(f.pnlMicro - p.feesMicro)),
    feesPaidUsd: usd(p.feesMicro),
    claimedUsd: usd(p.claimedMicro ?? 0),
    payoutUsd: usd(f.payoutMicro),
    pnlUsdPercent: valued(percent(f.pnlMicro, f.sizeMicro)),
    pnlUsdAfterFeesPercent: valued(percent(f.pnlMicro - p.feesMicro, f.totalCostMicro)),
    realizedPnlUsd: f.realizedMicro,
    openedAt: p.openedAt,
    updatedAt,
    claimableAt: isWinner ? (market.resolution?.settlesAt ?? state.resolveAt) : null,
    settlementDate: state.result === null ? null : state.resolveAt,
    openOrders: f.isPendingOrderOpen ? 1 : 0,
    bump: p.bump,
    eventMetadata: eventMetadata(world, event),
    marketMetadata: marketMetadata(world, market),
  };
}

/** Orders of a position: the filled buy that opened it, then its extra order (pending or failed). */
export function ordersOfPosition(world: World, p: PositionRecord): Order[] {
  const market = world.marketOf(p);
  const event = world.eventOf(market);
  const owner = world.ownerOf(p);
  const positionKey = world.positionPubkey(p);
  const base = {
    owner,
    ownerPubkey: owner,
    market: market.pubkey,
    marketId: market.marketId,
    marketIdHash: marketIdHash(market.marketId),
    eventId: event.eventId,
    position: positionKey,
    isYes: p.isYes,
    bump: p.bump,
    eventMetadata: eventMetadata(world, event),
    marketMetadata: marketMetadata(world, market),
  };
  const orders: Order[] = [
    {
      ...base,
      pubkey: orderPubkey(world, p, 0),
      orderId: orderId(world, p, 0),
      externalOrderId: `ext-${hexTag(`ext:${p.index}:0#${world.seed}`, 12)}`,
      status: "filled",
      isBuy: true,
      settled: true,
      createdAt: p.openedAt - 5,
      updatedAt: p.openedAt,
      filledAt: p.openedAt,
      ...contractFields(p.contracts),
      maxFillPriceUsd: usd(p.avgPriceMicro + 10_000),
      maxBuyPriceUsd: usd(p.avgPriceMicro + 10_000),
      // Only the side the order is on is set (api-live).
      minSellPriceUsd: null,
      filledContracts: wholeContracts(p.contracts),
      filledContractsMicro: microContractsOf(p.contracts).toString(),
      avgFillPriceUsd: usd(p.avgPriceMicro),
      sizeUsd: usd(contractsTimes(p.contracts, p.avgPriceMicro)),
    },
  ];
  const extra = p.extraOrder;
  if (extra !== null) {
    const isOpen = extra.kind === "pending" && positionFigures(world, p).isPendingOrderOpen;
    const endedAt = extra.kind === "failed" ? extra.createdAt + 30 : Math.min(world.now(), market.closeTime);
    orders.push({
      ...base,
      pubkey: orderPubkey(world, p, 1),
      orderId: orderId(world, p, 1),
      externalOrderId: `ext-${hexTag(`ext:${p.index}:1#${world.seed}`, 12)}`,
      // A pending order dies with its market or its position.
      status: isOpen ? "pending" : "failed",
      isBuy: extra.isBuy,
      settled: !isOpen,
      createdAt: extra.createdAt,
      updatedAt: isOpen ? extra.createdAt : endedAt,
      filledAt: 0,
      ...contractFields(extra.contracts),
      maxFillPriceUsd: usd(extra.limitPriceMicro),
      maxBuyPriceUsd: extra.isBuy ? usd(extra.limitPriceMicro) : null,
      minSellPriceUsd: extra.isBuy ? null : usd(extra.limitPriceMicro),
      filledContracts: "0",
      filledContractsMicro: "0",
      avgFillPriceUsd: "0",
      sizeUsd: usd(contractsTimes(extra.contracts, extra.limitPriceMicro)),
    });
  }
  return orders;
}

export const orderPubkey = (world: World, p: PositionRecord, k: number): string =>
  derivePubkey(`order:${p.index}:${k}`, world.seed).toBase58();
const orderId = (world: World, p: PositionRecord, k: number): string =>
  hexTag(`order-id:${p.index}:${k}#${world.seed}`, 24);
