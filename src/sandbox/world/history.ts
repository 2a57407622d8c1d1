import type { HistoryRecord } from "../../core/schemas/prediction.js";
import { contractFields, contractsTimes, microContractsOf, wholeContracts } from "./contract-units.js";
import { ONE_USD_MICRO } from "./markets.js";
import type { PositionRecord } from "./positions.js";
import { derivePubkey, deriveSignature, hexTag } from "./rng.js";
import { eventMetadata, marketMetadata, orderPubkey, positionFigures } from "./views.js";
import { HISTORY_IDS_PER_POSITION, type LiveHistoryEntry, type World } from "./world.js";

type EventType = HistoryRecord["eventType"];

interface Amounts {
  readonly orderIndex?: number;
  readonly isBuy?: boolean;
  readonly contracts?: number;
  readonly filledContracts?: number;
  readonly priceMicro?: number;
  readonly grossMicro?: number;
  readonly feeMicro?: number;
  readonly payoutMicro?: number;
  readonly realizedMicro?: number;
}

const s = (n: number | undefined): string => String(n ?? 0);

/** Each count floored in its legacy field and exact beside it (1,000,000 micro-contracts a contract). */
function historyCounts(eventType: EventType, a: Amounts) {
  const settled = eventType === "payout_claimed" || eventType === "position_lost" ? (a.contracts ?? 0) : 0;
  return {
    ...contractFields(a.contracts ?? 0),
    filledContracts: wholeContracts(a.filledContracts ?? 0),
    filledContractsMicro: microContractsOf(a.filledContracts ?? 0).toString(),
    contractsSettled: wholeContracts(settled),
    contractsSettledMicro: microContractsOf(settled).toString(),
  };
}

function record(
  world: World,
  p: PositionRecord,
  id: number,
  eventType: EventType,
  timestamp: number,
  a: Amounts,
  landed?: { signature: string; slot: number },
): HistoryRecord {
  const market = world.marketOf(p);
  const event = world.eventOf(market);
  const owner = world.ownerOf(p);
  const price = a.priceMicro ?? 0;
  const gross = a.grossMicro ?? 0;
  const fee = a.feeMicro ?? 0;
  const orderIndex = a.orderIndex ?? 0;
  return {
    id,
    eventType,
    timestamp,
    isBuy: a.isBuy ?? false,
    isYes: p.isYes,
    signature: landed?.signature ?? deriveSignature(`history:${id}`, world.seed),
    slot: String(landed?.slot ?? 300_000_000 + (timestamp % 50_000_000)),
    orderPubkey: orderPubkey(world, p, orderIndex),
    positionPubkey: world.positionPubkey(p),
    marketId: market.marketId,
    ownerPubkey: owner,
    keeperPubkey: derivePubkey("venue-keeper", world.seed).toBase58(),
    externalOrderId: `ext-${hexTag(`ext:${p.index}:${orderIndex}#${world.seed}`, 12)}`,
    orderId: hexTag(`order-id:${p.index}:${orderIndex}#${world.seed}`, 24),
    eventId: event.eventId,
    ...historyCounts(eventType, a),
    maxFillPriceUsd: s(a.isBuy === true ? price : 0),
    avgFillPriceUsd: s(a.filledContracts ? price : 0),
    // As the live service: only the side of the order is set; no fee, transfer or pnl where the
    // record has none (a claim has no fee, a buy no realized pnl).
    maxBuyPriceUsd: a.isBuy === true ? s(price) : null,
    minSellPriceUsd: a.isBuy === false ? s(price) : null,
    depositAmountUsd: s(a.isBuy === true ? gross : 0),
    totalCostUsd: s(a.isBuy === true ? gross + fee : 0),
    feeUsd: fee === 0 ? null : s(fee),
    grossProceedsUsd: s(a.isBuy === false ? gross : 0),
    netProceedsUsd: s(a.isBuy === false ? gross - fee : 0),
    transferAmountToken:
      a.payoutMicro !== undefined ? s(a.payoutMicro) : a.isBuy === false ? s(gross - fee) : null,
    realizedPnl: a.realizedMicro === undefined ? null : s(a.realizedMicro),
    realizedPnlBeforeFees: a.realizedMicro === undefined ? null : s(a.realizedMicro + fee),
    payoutAmountUsd: s(a.payoutMicro),
    marketMetadata: marketMetadata(world, market),
    eventMetadata: eventMetadata(world, event),
  };
}

/**
 * The history of one position, from its records and the world at now: ids are `index × 8 + k`, so any
 * record can be found by id without storing it. A loss appears once its market has resolved.
 */
export function historyOfPosition(world: World, p: PositionRecord): HistoryRecord[] {
  const base = p.index * HISTORY_IDS_PER_POSITION;
  const sizeMicro = contractsTimes(p.contracts, p.avgPriceMicro);
  const out: HistoryRecord[] = [];
  const buy = {
    orderIndex: 0,
    isBuy: true,
    contracts: p.contracts,
    priceMicro: p.avgPriceMicro,
    grossMicro: sizeMicro,
    feeMicro: p.feesMicro,
  };
  out.push(record(world, p, base + 1, "order_created", p.openedAt - 5, buy));
  out.push(record(world, p, base + 2, "order_filled", p.openedAt, { ...buy, filledContracts: p.contracts }));
  out.push(
    record(world, p, base + 3, "position_updated", p.openedAt + 1, {
      contracts: p.contracts,
      priceMicro: p.avgPriceMicro,
    }),
  );
  const extra = p.extraOrder;
  if (extra !== null) {
    const order = {
      orderIndex: 1,
      isBuy: extra.isBuy,
      contracts: extra.contracts,
      priceMicro: extra.limitPriceMicro,
    };
    out.push(record(world, p, base + 4, "order_created", extra.createdAt, order));
    if (extra.kind === "failed")
      out.push(record(world, p, base + 5, "order_failed", extra.createdAt + 30, order));
  }
  const totalCost = sizeMicro + p.feesMicro;
  // Claims and closes made before genesis are part of the generated past; later ones are live records.
  const isGeneratedClaim = p.claimedAt !== undefined && p.claimSignature === undefined;
  if (isGeneratedClaim && p.claimedAt !== undefined) {
    const payout = contractsTimes(p.contracts, ONE_USD_MICRO);
    out.push(
      record(world, p, base + 6, "payout_claimed", p.claimedAt, {
        contracts: p.contracts,
        payoutMicro: payout,
        realizedMicro: payout - totalCost,
      }),
    );
  }
  const isGeneratedClose = p.closedAt !== undefined && p.closeSignature === undefined;
  if (isGeneratedClose && p.closedAt !== undefined) {
    const proceeds = p.closedProceedsMicro ?? 0;
    const fee = Math.floor(proceeds / 100);
    out.push(
      record(world, p, base + 6, "order_closed", p.closedAt, {
        isBuy: false,
        contracts: p.contracts,
        filledContracts: p.contracts,
        grossMicro: proceeds + fee,
        feeMicro: fee,
        realizedMicro: proceeds - totalCost,
      }),
    );
  }
  const state = world.marketState(world.marketOf(p));
  if (state.result !== null && state.resolveAt !== null && !world.isWinning(p) && p.closedAt === undefined)
    out.push(
      record(world, p, base + 7, "position_lost", state.resolveAt, {
        contracts: p.contracts,
        realizedMicro: positionFigures(world, p).realizedMicro,
      }),
    );
  return out;
}

export function liveRecord(world: World, entry: LiveHistoryEntry): HistoryRecord {
  const p = world.positionAt(entry.positionIndex);
  if (p === undefined) throw new Error(`history ${entry.id} names no position`);
  const totalCost = contractsTimes(p.contracts, p.avgPriceMicro) + p.feesMicro;
  const landed = { signature: entry.signature, slot: entry.slot };
  if (entry.eventType === "order_filled")
    return record(
      world,
      p,
      entry.id,
      entry.eventType,
      entry.timestamp,
      {
        isBuy: true,
        contracts: p.contracts,
        filledContracts: p.contracts,
        priceMicro: p.avgPriceMicro,
        grossMicro: entry.amountMicro,
        feeMicro: entry.feeMicro,
      },
      landed,
    );
  if (entry.eventType === "payout_claimed")
    return record(
      world,
      p,
      entry.id,
      entry.eventType,
      entry.timestamp,
      {
        contracts: p.contracts,
        payoutMicro: entry.amountMicro,
        realizedMicro: entry.amountMicro - totalCost,
      },
      landed,
    );
  return record(
    world,
    p,
    entry.id,
    entry.eventType,
    entry.timestamp,
    {
      isBuy: false,
      contracts: p.contracts,
      filledContracts: p.contracts,
      grossMicro: entry.amountMicro + entry.feeMicro,
      feeMicro: entry.feeMicro,
      realizedMicro: entry.amountMicro - totalCost,
    },
    landed,
  );
}

/** Newest first; ties by id, newest id first. */
export function sortHistory(records: HistoryRecord[]): HistoryRecord[] {
  return records.sort((a, b) => b.timestamp - a.timestamp || b.id - a.id);
}

export interface HistoryQuery {
  readonly ownerPubkey?: string | undefined;
  readonly id?: number | undefined;
  readonly positionPubkey?: string | undefined;
}

export function queryHistory(world: World, q: HistoryQuery): HistoryRecord[] {
  let candidates: readonly PositionRecord[] = world.allPositions();
  if (q.ownerPubkey !== undefined) {
    const owner = world.walletIndexOf(q.ownerPubkey);
    candidates = owner === undefined ? [] : world.positionsOfWallet(owner);
  }
  if (q.positionPubkey !== undefined) {
    const p = world.findPosition(q.positionPubkey);
    candidates = candidates.filter((x) => x === p);
  }
  const generatedIds = world.positions.length * HISTORY_IDS_PER_POSITION;
  if (q.id !== undefined && q.id <= generatedIds) {
    const index = Math.floor((q.id - 1) / HISTORY_IDS_PER_POSITION);
    candidates = candidates.filter((p) => p.index === index);
  }
  const wanted = new Set(candidates.map((p) => p.index));
  const records: HistoryRecord[] = [];
  // Positions opened since genesis have only their live records (their ids follow the generated ones).
  if (q.id === undefined || q.id <= generatedIds)
    for (const p of candidates)
      if (p.index < world.positions.length) records.push(...historyOfPosition(world, p));
  for (const entry of world.liveHistory)
    if (wanted.has(entry.positionIndex) && (q.id === undefined || entry.id === q.id))
      records.push(liveRecord(world, entry));
  return sortHistory(q.id === undefined ? records : records.filter((r) => r.id === q.id));
}
