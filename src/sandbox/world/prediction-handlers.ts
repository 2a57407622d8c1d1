import { PublicKey } from "@solana/web3.js";
import type { z } from "zod";
import * as s from "../../core/schemas/index.js";
import type { WorldChainPort } from "./chain-port.js";
import { contractFields, contractsTimes } from "./contract-units.js";
import { badRequest, notFound } from "./errors.js";
import type { EventRecord } from "./events.js";
import { executionFieldsFor } from "./execution.js";
import { queryHistory } from "./history.js";
import { leaderboard } from "./leaderboard.js";
import type { MarketRecord } from "./markets.js";
import { paginate } from "./paging.js";
import type { PendingActions } from "./pending-actions.js";
import type { PositionRecord } from "./positions.js";
import { derivePubkey, hexTag } from "./rng.js";
import {
  eventFlags,
  eventView,
  eventVolume24hMicro,
  eventVolumeMicro,
  marketIdHash,
  marketView,
  ordersOfPosition,
  positionFigures,
  positionView,
} from "./views.js";
import type { World } from "./world.js";

type Out<S extends z.ZodType> = z.output<S>;

const DAY = 86_400;
/** Fees of a sale, in basis points of the gross proceeds. */
const PROTOCOL_FEE_BPS = 50;
const VENUE_FEE_BPS = 100;
const DEFAULT_CLOSE_SLIPPAGE_BPS = 100;
const DEFAULT_SEARCH_LIMIT = 10;

export function requireEvent(world: World, eventId: string): EventRecord {
  const event = world.findEvent(eventId);
  if (event === undefined) throw notFound("event", eventId, "eventId");
  return event;
}

export function requireMarket(world: World, marketId: string): MarketRecord {
  const market = world.findMarket(marketId);
  if (market === undefined) throw notFound("market", marketId, "marketId");
  return market;
}

function matchesFilter(
  world: World,
  event: EventRecord,
  filter: "new" | "live" | "trending" | "upcoming",
): boolean {
  const { isActive, isLive } = eventFlags(world, event);
  if (filter === "new") return event.createdAt >= world.now() - DAY && event.createdAt <= world.now();
  if (filter === "live") return isLive;
  if (filter === "upcoming") return isActive && event.beginAt !== null && event.beginAt > world.now();
  return isActive && event.isTrending;
}

function sortEvents(
  world: World,
  events: EventRecord[],
  sortBy: "volume" | "volume24hr" | "beginAt",
  direction: "asc" | "desc" | undefined,
) {
  const sign = (direction ?? (sortBy === "beginAt" ? "asc" : "desc")) === "asc" ? 1 : -1;
  if (sortBy === "volume" || sortBy === "volume24hr") {
    const volumeOf = sortBy === "volume" ? eventVolumeMicro : eventVolume24hMicro;
    const volume = new Map(events.map((e) => [e.index, volumeOf(world, e)]));
    return events.sort(
      (a, b) => sign * ((volume.get(a.index) ?? 0) - (volume.get(b.index) ?? 0)) || a.index - b.index,
    );
  }
  // Events without a start come last whichever the direction.
  return events.sort((a, b) => {
    if (a.beginAt === null || b.beginAt === null)
      return Number(a.beginAt === null) - Number(b.beginAt === null) || a.index - b.index;
    return sign * (a.beginAt - b.beginAt) || a.index - b.index;
  });
}

function listedPositions(world: World, params: Out<typeof s.listPositionsParams>): PositionRecord[] {
  let positions: readonly PositionRecord[] = world.allPositions();
  if (params.ownerPubkey !== undefined) {
    const owner = world.walletIndexOf(params.ownerPubkey);
    positions = owner === undefined ? [] : world.positionsOfWallet(owner);
  }
  return positions.filter((p) => {
    if (p.closedAt !== undefined) return false;
    const market = world.marketOf(p);
    if (params.marketId !== undefined && market.marketId !== params.marketId) return false;
    if (params.marketPubkey !== undefined && market.pubkey !== params.marketPubkey) return false;
    if (params.isYes !== undefined && p.isYes !== params.isYes) return false;
    return true;
  });
}

function ownedPosition(world: World, positionPubkey: string, ownerPubkey: string): PositionRecord {
  const position = world.findPosition(positionPubkey);
  if (position === undefined) throw notFound("position", positionPubkey, "positionPubkey");
  if (world.ownerOf(position) !== ownerPubkey)
    throw badRequest("ownerPubkey", "owner_mismatch", "is not the owner of this position");
  return position;
}

/** Refuses positions that cannot be sold: closed, claimed, or in a market no longer trading. */
function assertClosable(world: World, position: PositionRecord): void {
  if (position.closedAt !== undefined)
    throw badRequest("positionPubkey", "position_closed", "position is already closed");
  if (position.claimedAt !== undefined)
    throw badRequest("positionPubkey", "position_claimed", "position is already claimed");
  const state = world.marketState(world.marketOf(position));
  if (state.status !== "open") {
    const hint = world.isClaimable(position) ? "; claim it instead" : "";
    throw badRequest(
      "positionPubkey",
      "market_not_open",
      `market is ${state.status}, position cannot be sold${hint}`,
    );
  }
}

function isClosable(world: World, position: PositionRecord): boolean {
  try {
    assertClosable(world, position);
    return true;
  } catch {
    return false;
  }
}

async function buildClaimPreview(
  world: World,
  chain: WorldChainPort,
  position: PositionRecord,
  ownerPubkey: string,
): Promise<s.ClaimPreview> {
  const market = world.marketOf(position);
  const positionPubkey = world.positionPubkey(position);
  const payoutMicro = positionFigures(world, position).payoutMicro;
  const built = await chain.buildClaim({
    owner: new PublicKey(ownerPubkey),
    positionPubkey: new PublicKey(positionPubkey),
    payoutRaw: BigInt(payoutMicro),
  });
  return {
    transaction: built.transaction,
    txMeta: { ...built.txMeta },
    position: {
      positionPubkey,
      marketPubkey: market.pubkey,
      userPubkey: ownerPubkey,
      ownerPubkey,
      ...contractFields(position.contracts),
      payoutAmountUsd: String(payoutMicro),
      isYes: position.isYes,
    },
  };
}

export interface ClosePlan {
  readonly grossMicro: number;
  readonly protocolFeeMicro: number;
  readonly venueFeeMicro: number;
  readonly netMicro: number;
  readonly minSellPriceMicro: number;
}

export function closePlan(world: World, position: PositionRecord, slippageBps: number): ClosePlan {
  const { sellMicro } = positionFigures(world, position);
  const grossMicro = contractsTimes(position.contracts, sellMicro);
  const protocolFeeMicro = Math.floor((grossMicro * PROTOCOL_FEE_BPS) / 10_000);
  const venueFeeMicro = Math.floor((grossMicro * VENUE_FEE_BPS) / 10_000);
  return {
    grossMicro,
    protocolFeeMicro,
    venueFeeMicro,
    netMicro: grossMicro - protocolFeeMicro - venueFeeMicro,
    minSellPriceMicro: Math.floor((sellMicro * (10_000 - slippageBps)) / 10_000),
  };
}

async function buildClosePreview(
  world: World,
  chain: WorldChainPort,
  pending: PendingActions,
  position: PositionRecord,
  slippageBps: number,
): Promise<s.ClosePreview> {
  const plan = closePlan(world, position, slippageBps);
  const positionPubkey = world.positionPubkey(position);
  const owner = world.ownerOf(position);
  const market = world.marketOf(position);
  const built = await chain.buildClose({
    owner: new PublicKey(owner),
    positionPubkey: new PublicKey(positionPubkey),
    proceedsRaw: BigInt(plan.netMicro),
    // A Forecast sell is an atomic swap: the service's key signs it at execute, nowhere else.
    serviceSigns: market.forecast !== undefined,
  });
  pending.closes.set(positionPubkey, {
    proceedsMicro: plan.netMicro,
    feeMicro: plan.protocolFeeMicro + plan.venueFeeMicro,
  });
  const nonce = pending.nextId("close");
  const externalOrderId = `close-${hexTag(`${positionPubkey}:${nonce}`, 16)}`;
  const orderPubkey = derivePubkey(`close-order:${positionPubkey}:${nonce}`, world.seed).toBase58();
  return {
    transaction: built.transaction,
    txMeta: { ...built.txMeta },
    externalOrderId,
    order: {
      orderPubkey,
      orderAtaPubkey: derivePubkey(`close-order-ata:${orderPubkey}`, world.seed).toBase58(),
      userPubkey: owner,
      marketId: market.marketId,
      marketIdHash: marketIdHash(market.marketId),
      positionPubkey,
      ...contractFields(position.contracts),
      newContracts: "0",
      newContractsMicro: "0",
      // A sell sets no buy limit (api-live).
      maxBuyPriceUsd: null,
      minSellPriceUsd: String(plan.minSellPriceMicro),
      externalOrderId,
      orderCostUsd: String(plan.grossMicro),
      newAvgPriceUsd: "0",
      newSizeUsd: "0",
      newPayoutUsd: "0",
      estimatedProtocolFeeUsd: String(plan.protocolFeeMicro),
      estimatedVenueFeeUsd: String(plan.venueFeeMicro),
      estimatedTotalFeeUsd: String(plan.protocolFeeMicro + plan.venueFeeMicro),
      isBuy: false,
      isYes: position.isYes,
    },
    ...executionFieldsFor(chain, pending, market, owner, built.transaction),
  };
}

export function predictionHandlers(world: World, chain: WorldChainPort, pending: PendingActions) {
  return {
    ...marketReads(world),
    ...accountReads(world),
    ...positionActions(world, chain, pending),
  };
}

/** Events, markets and leaderboards: what anyone may read. */
function marketReads(world: World) {
  return {
    listEvents({ params }: { params: Out<typeof s.listEventsParams> }) {
      // Any provider name is taken; one the sandbox has no events of lists none.
      const provider = params.provider ?? s.DEFAULT_PROVIDER;
      let events = world.events.filter((e) => e.provider === provider);
      if (params.category !== undefined && params.category !== "all")
        events = events.filter((e) => e.category === params.category);
      if (params.subcategory !== undefined)
        events = events.filter((e) => e.subcategory === params.subcategory);
      const filter = params.filter;
      if (filter !== undefined) events = events.filter((e) => matchesFilter(world, e, filter));
      if (params.sortBy !== undefined)
        events = sortEvents(world, [...events], params.sortBy, params.sortDirection);
      const page = paginate(events, params);
      // The sandbox's events carry every market whenever markets are included: `includeAllMarkets`
      // asks for them all, so it includes them too.
      const includeMarkets = params.includeMarkets === true || params.includeAllMarkets === true;
      return { data: page.data.map((e) => eventView(world, e, includeMarkets)), pagination: page.pagination };
    },

    searchEvents({ params }: { params: Out<typeof s.searchEventsParams> }) {
      const provider = params.provider ?? s.DEFAULT_PROVIDER;
      const term = params.query.toLowerCase();
      const found = world.events.filter(
        (e) =>
          e.provider === provider &&
          (e.title.toLowerCase().includes(term) || e.eventId.toLowerCase().includes(term)),
      );
      return {
        data: found
          .slice(0, params.limit ?? DEFAULT_SEARCH_LIMIT)
          .map((e) => eventView(world, e, params.includeMarkets === true)),
      };
    },

    getEvent({ params }: { params: Out<typeof s.getEventParams> }) {
      return eventView(world, requireEvent(world, params.eventId), params.includeMarkets === true);
    },

    listEventMarkets({ params }: { params: Out<typeof s.listEventMarketsParams> }) {
      const event = requireEvent(world, params.eventId);
      const markets = event.marketIndexes.flatMap((i) =>
        world.markets[i] === undefined ? [] : [world.markets[i]],
      );
      const page = paginate(markets, params);
      return { data: page.data.map((m) => marketView(world, m)), pagination: page.pagination };
    },

    getEventMarket({ params }: { params: Out<typeof s.getEventMarketParams> }) {
      const event = requireEvent(world, params.eventId);
      const market = requireMarket(world, params.marketId);
      if (market.eventIndex !== event.index)
        throw notFound("market", `${params.marketId} in event ${params.eventId}`, "marketId");
      return marketView(world, market);
    },

    getMarket({ params }: { params: Out<typeof s.getMarketParams> }) {
      return marketView(world, requireMarket(world, params.marketId));
    },

    leaderboards({ params }: { params: Out<typeof s.leaderboardParams> }) {
      return leaderboard(world, params.period ?? "all_time", params.metric ?? "pnl", params.limit ?? 100);
    },
  };
}

/** A wallet's positions, orders and history. */
function accountReads(world: World) {
  return {
    listPositions({ params }: { params: Out<typeof s.listPositionsParams> }) {
      const page = paginate(listedPositions(world, params), params);
      return { data: page.data.map((p) => positionView(world, p)), pagination: page.pagination };
    },

    /** One position; a sold one is gone (its account is closed), as an unknown one: 404. */
    getPosition({ params }: { params: Out<typeof s.positionPathParams> }) {
      const position = world.findPosition(params.positionPubkey);
      if (position === undefined || position.closedAt !== undefined)
        throw notFound("position", params.positionPubkey, "positionPubkey");
      return positionView(world, position);
    },

    listOrders({ params }: { params: Out<typeof s.listOrdersParams> }) {
      let positions: readonly PositionRecord[] = world.positions;
      if (params.ownerPubkey !== undefined) {
        const owner = world.walletIndexOf(params.ownerPubkey);
        positions = owner === undefined ? [] : world.positionsOfWallet(owner);
      }
      // Orders are cheap to describe but not free: count first, describe only the page.
      const slots = positions.flatMap((p) =>
        p.extraOrder === null ? [[p, 0] as const] : [[p, 0] as const, [p, 1] as const],
      );
      const page = paginate(slots, params);
      return {
        data: page.data.map(([p, k]) => ordersOfPosition(world, p)[k]).filter((o) => o !== undefined),
        pagination: page.pagination,
      };
    },

    listHistory({ params }: { params: Out<typeof s.listHistoryParams> }) {
      return paginate(queryHistory(world, params), params);
    },
  };
}

/** Close and claim builds: unsigned transactions for the wallet to sign. */
function positionActions(world: World, chain: WorldChainPort, pending: PendingActions) {
  return {
    /**
     * As the live service: a sell of each position of an open market and a claim of each winning
     * position not yet claimed (a winner is claimed, not sold). The slippage is required.
     */
    async closeAllPositions({ body }: { body: Out<typeof s.closeAllBody> }) {
      const owner = world.walletIndexOf(body.ownerPubkey);
      if (owner === undefined) return { data: [] };
      const data: s.CloseAllItem[] = [];
      for (const p of world.positionsOfWallet(owner)) {
        if (world.isClaimable(p)) data.push(await buildClaimPreview(world, chain, p, body.ownerPubkey));
        else if (isClosable(world, p))
          data.push(await buildClosePreview(world, chain, pending, p, body.minSellPriceSlippageBps));
      }
      return { data };
    },

    async closePosition({
      params,
      body,
    }: {
      params: Out<typeof s.positionPathParams>;
      body: Out<typeof s.closePositionBody>;
    }) {
      const position = ownedPosition(world, params.positionPubkey, body.ownerPubkey);
      assertClosable(world, position);
      // The close-one body carries no slippage on the live service: the service's own applies.
      return buildClosePreview(world, chain, pending, position, DEFAULT_CLOSE_SLIPPAGE_BPS);
    },

    async claimPosition({
      params,
      body,
    }: {
      params: Out<typeof s.positionPathParams>;
      body: Out<typeof s.claimBody>;
    }) {
      const position = ownedPosition(world, params.positionPubkey, body.ownerPubkey);
      // Forecast settles by itself (api-live): asking for a claim is answered that none is required.
      if (world.marketOf(position).forecast !== undefined)
        throw badRequest(
          "positionPubkey",
          "no_claim_required",
          "no claim is required: Forecast positions settle automatically",
        );
      if (position.claimedAt !== undefined)
        throw badRequest("positionPubkey", "already_claimed", "position is already claimed");
      const market = world.marketOf(position);
      // As the live service: a market that pays its winners by itself needs no claim of anyone.
      if (market.needsNoClaim === true && world.isWinning(position))
        throw badRequest(
          "positionPubkey",
          "no_claim_required",
          "no claim is required: this market pays its winners without one",
        );
      if (!world.isClaimable(position)) {
        const state = world.marketState(world.marketOf(position));
        // As the live service: too early is "not settled" (ask again later), not a refusal.
        if (
          state.result === null ||
          (world.isWinning(position) && !world.isSettled(world.marketOf(position)))
        )
          throw badRequest("positionPubkey", "market_not_settled", "market is not settled yet");
        throw badRequest(
          "positionPubkey",
          "not_claimable",
          "position is not claimable: its market resolved against it",
        );
      }
      return buildClaimPreview(world, chain, position, body.ownerPubkey);
    },
  };
}
