import { z } from "zod";
import { EVENT_CATEGORIES, EVENT_PROVIDERS } from "../../core/event-details.js";
import {
  contractCount,
  microUsd,
  paginationSchema,
  pubkey,
  queryBool,
  queryInt,
  rangeParams,
} from "./common.js";

// One list each, in core, so strategies (which import only core) validate the same values.
export const PROVIDERS = EVENT_PROVIDERS;
export const CATEGORIES = EVENT_CATEGORIES;

const nonEmptyId = z.string().min(1, "must be at least 1 character");

export const marketMetadataSchema = z.looseObject({
  marketId: z.string(),
  title: z.string(),
  status: z.string(),
  result: z.string().nullable(),
  closeTime: z.number(),
  openTime: z.number(),
  isTeamMarket: z.boolean(),
  rulesPrimary: z.string(),
  rulesSecondary: z.string(),
  eventId: z.string(),
});

export const eventMetadataSchema = z.looseObject({
  eventId: z.string(),
  title: z.string(),
  subtitle: z.string(),
  slug: z.string(),
  series: z.string(),
  closeTime: z.string(),
  imageUrl: z.string(),
  isLive: z.boolean(),
});

export const marketPricingSchema = z.looseObject({
  buyYesPriceUsd: z.number(),
  buyNoPriceUsd: z.number(),
  sellYesPriceUsd: z.number(),
  sellNoPriceUsd: z.number(),
  volume: z.number(),
});

export const marketSchema = z.looseObject({
  marketId: z.string(),
  status: z.enum(["open", "closed", "cancelled"]),
  result: z.enum(["yes", "no"]).nullable(),
  openTime: z.number(),
  closeTime: z.number(),
  resolveAt: z.number().nullable(),
  marketResultPubkey: z.string().nullable().optional(),
  imageUrl: z.url().nullable().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  pricing: marketPricingSchema,
});

export const eventSchema = z.looseObject({
  eventId: z.string(),
  isActive: z.boolean(),
  isLive: z.boolean(),
  category: z.enum(CATEGORIES),
  subcategory: z.string(),
  volumeUsd: microUsd,
  closeCondition: z.string(),
  beginAt: z.string().nullable(),
  rulesPdf: z.string(),
  tags: z.array(z.string()).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  markets: z.array(marketSchema).optional(),
});

export const positionSchema = z.looseObject({
  pubkey: pubkey,
  owner: pubkey,
  ownerPubkey: pubkey,
  market: pubkey,
  marketId: z.string(),
  marketIdHash: z.string(),
  eventId: z.string(),
  isYes: z.boolean(),
  claimed: z.boolean(),
  claimable: z.boolean(),
  contracts: contractCount,
  totalCostUsd: microUsd,
  sizeUsd: microUsd,
  valueUsd: microUsd,
  avgPriceUsd: microUsd,
  markPriceUsd: microUsd,
  sellPriceUsd: microUsd,
  pnlUsd: microUsd,
  pnlUsdAfterFees: microUsd,
  feesPaidUsd: microUsd,
  claimedUsd: microUsd,
  payoutUsd: microUsd,
  pnlUsdPercent: z.number(),
  pnlUsdAfterFeesPercent: z.number(),
  realizedPnlUsd: z.number(),
  openedAt: z.number(),
  updatedAt: z.number(),
  claimableAt: z.number(),
  settlementDate: z.number(),
  openOrders: z.number().int(),
  bump: z.number().int(),
  eventMetadata: eventMetadataSchema,
  marketMetadata: marketMetadataSchema,
});

export const orderSchema = z.looseObject({
  pubkey: pubkey,
  owner: pubkey,
  ownerPubkey: pubkey,
  market: pubkey,
  marketId: z.string(),
  marketIdHash: z.string(),
  eventId: z.string(),
  position: pubkey,
  orderId: z.string(),
  externalOrderId: z.string(),
  status: z.string(),
  isYes: z.boolean(),
  isBuy: z.boolean(),
  settled: z.boolean(),
  createdAt: z.number(),
  updatedAt: z.number(),
  filledAt: z.number(),
  contracts: contractCount,
  maxFillPriceUsd: microUsd,
  maxBuyPriceUsd: microUsd,
  minSellPriceUsd: microUsd,
  filledContracts: contractCount,
  avgFillPriceUsd: microUsd,
  sizeUsd: microUsd,
  bump: z.number().int(),
  eventMetadata: eventMetadataSchema,
  marketMetadata: marketMetadataSchema,
});

export const HISTORY_EVENT_TYPES = [
  "order_created",
  "order_filled",
  "order_failed",
  "order_closed",
  "payout_claimed",
  "position_updated",
  "position_lost",
] as const;

export const historyRecordSchema = z.looseObject({
  id: z.number().int(),
  eventType: z.string(),
  timestamp: z.number(),
  isBuy: z.boolean(),
  isYes: z.boolean(),
  signature: z.string(),
  slot: z.string(),
  orderPubkey: z.string(),
  positionPubkey: z.string(),
  marketId: z.string(),
  ownerPubkey: z.string(),
  keeperPubkey: z.string(),
  externalOrderId: z.string(),
  orderId: z.string(),
  eventId: z.string(),
  contracts: contractCount,
  filledContracts: contractCount,
  contractsSettled: contractCount,
  maxFillPriceUsd: microUsd,
  avgFillPriceUsd: microUsd,
  maxBuyPriceUsd: microUsd,
  minSellPriceUsd: microUsd,
  depositAmountUsd: microUsd,
  totalCostUsd: microUsd,
  feeUsd: microUsd,
  grossProceedsUsd: microUsd,
  netProceedsUsd: microUsd,
  transferAmountToken: z.string(),
  realizedPnl: microUsd,
  realizedPnlBeforeFees: microUsd,
  payoutAmountUsd: microUsd,
  marketMetadata: marketMetadataSchema,
  eventMetadata: eventMetadataSchema,
});

export const txMetaSchema = z.looseObject({ blockhash: z.string(), lastValidBlockHeight: z.number().int() });

export const orderPreviewSchema = z.looseObject({
  orderPubkey: z.string(),
  orderAtaPubkey: z.string(),
  userPubkey: z.string(),
  marketId: z.string(),
  marketIdHash: z.string(),
  positionPubkey: z.string(),
  contracts: contractCount,
  newContracts: contractCount,
  maxBuyPriceUsd: microUsd,
  minSellPriceUsd: microUsd,
  externalOrderId: z.string(),
  orderCostUsd: microUsd,
  newAvgPriceUsd: microUsd,
  newSizeUsd: microUsd,
  newPayoutUsd: microUsd,
  estimatedProtocolFeeUsd: microUsd,
  estimatedVenueFeeUsd: microUsd,
  estimatedTotalFeeUsd: microUsd,
  isBuy: z.boolean(),
  isYes: z.boolean(),
});

export const closePreviewSchema = z.looseObject({
  transaction: z.string().min(1),
  txMeta: txMetaSchema,
  externalOrderId: z.string(),
  order: orderPreviewSchema,
});

export const claimPreviewSchema = z.looseObject({
  transaction: z.string().min(1),
  txMeta: txMetaSchema,
  position: z.looseObject({
    positionPubkey: z.string(),
    marketPubkey: z.string(),
    userPubkey: z.string(),
    ownerPubkey: z.string(),
    contracts: contractCount,
    payoutAmountUsd: microUsd,
    isYes: z.boolean(),
  }),
});

export const LEADERBOARD_PERIODS = ["all_time", "weekly", "monthly"] as const;
export const LEADERBOARD_METRICS = ["pnl", "volume", "win_rate"] as const;

export const leaderboardEntrySchema = z.looseObject({
  ownerPubkey: z.string(),
  realizedPnlUsd: microUsd,
  totalVolumeUsd: microUsd,
  predictionsCount: z.number(),
  correctPredictions: z.number(),
  wrongPredictions: z.number(),
  winRatePct: z.string(),
  period: z.string(),
  periodStart: z.string(),
  periodEnd: z.string(),
});

const summaryPeriod = z.looseObject({ totalVolumeUsd: microUsd, predictionsCount: z.number() });
export const leaderboardResponseSchema = z.looseObject({
  data: z.array(leaderboardEntrySchema),
  summary: z.looseObject({ all_time: summaryPeriod, weekly: summaryPeriod, monthly: summaryPeriod }),
});

export const page = <T extends z.ZodType>(item: T) =>
  z.looseObject({ data: z.array(item), pagination: paginationSchema });

// ---- responses per endpoint ----
export const eventsPageSchema = page(eventSchema);
export const eventSearchResponseSchema = z.looseObject({ data: z.array(eventSchema) });
export const marketsPageSchema = page(marketSchema);
export const positionsPageSchema = page(positionSchema);
export const ordersPageSchema = page(orderSchema);
export const historyPageSchema = page(historyRecordSchema);
export const closeAllResponseSchema = z.looseObject({ data: z.array(closePreviewSchema) });

// ---- parameters per endpoint (the spec's rules, shared by client and sandbox) ----
export const listEventsParams = z.strictObject({
  provider: z.enum(PROVIDERS).optional(),
  includeMarkets: queryBool.nullable().optional(),
  ...rangeParams,
  category: z.enum(CATEGORIES).optional(),
  subcategory: z.string().optional(),
  sortBy: z.enum(["volume", "beginAt"]).optional(),
  sortDirection: z.enum(["asc", "desc"]).optional(),
  filter: z.enum(["new", "live", "trending"]).optional(),
});
export const eventIdParam = z.strictObject({ eventId: nonEmptyId });
export const getEventParams = z.strictObject({
  eventId: nonEmptyId,
  includeMarkets: queryBool.nullable().optional(),
});
export const searchEventsParams = z.strictObject({
  query: z.string().min(1, "must be 1 to 200 characters").max(200, "must be 1 to 200 characters"),
  limit: queryInt.pipe(z.number().min(1, "must be 1 to 20").max(20, "must be 1 to 20")).optional(),
  provider: z.enum(PROVIDERS).optional(),
});
export const listEventMarketsParams = z.strictObject({ eventId: nonEmptyId, ...rangeParams });
export const getEventMarketParams = z.strictObject({ eventId: nonEmptyId, marketId: nonEmptyId });
export const getMarketParams = z.strictObject({ marketId: nonEmptyId });
export const listPositionsParams = z.strictObject({
  ...rangeParams,
  ownerPubkey: pubkey.optional(),
  marketId: z.string().min(1).optional(),
  marketPubkey: pubkey.optional(),
  isYes: queryBool.optional(),
});
export const listOrdersParams = z.strictObject({
  ...rangeParams,
  ownerPubkey: pubkey.optional(),
  marketId: z.string().min(1).optional(),
});
export const listHistoryParams = z.strictObject({
  ...rangeParams,
  ownerPubkey: pubkey.optional(),
  id: queryInt.pipe(z.number().min(1, "must be >= 1")).optional(),
  positionPubkey: pubkey.optional(),
});
export const closePositionsBody = z.strictObject({
  ownerPubkey: pubkey,
  minSellPriceSlippageBps: z
    .number()
    .int()
    .min(0, "must be 0 to 10000")
    .max(10_000, "must be 0 to 10000")
    .optional(),
});
export const positionPathParams = z.strictObject({ positionPubkey: pubkey });
export const claimBody = z.strictObject({ ownerPubkey: pubkey });
export const leaderboardParams = z.strictObject({
  period: z.enum(LEADERBOARD_PERIODS).optional(),
  limit: queryInt.pipe(z.number().min(1, "must be 1 to 100").max(100, "must be 1 to 100")).optional(),
  metric: z.enum(LEADERBOARD_METRICS).optional(),
});

export type Event = z.infer<typeof eventSchema>;
export type Market = z.infer<typeof marketSchema>;
export type MarketMetadata = z.infer<typeof marketMetadataSchema>;
export type EventMetadata = z.infer<typeof eventMetadataSchema>;
export type Position = z.infer<typeof positionSchema>;
export type Order = z.infer<typeof orderSchema>;
export type HistoryRecord = z.infer<typeof historyRecordSchema>;
export type ClosePreview = z.infer<typeof closePreviewSchema>;
export type ClaimPreview = z.infer<typeof claimPreviewSchema>;
export type LeaderboardEntry = z.infer<typeof leaderboardEntrySchema>;
export type LeaderboardResponse = z.infer<typeof leaderboardResponseSchema>;
export type ListEventsParams = z.input<typeof listEventsParams>;
export type SearchEventsParams = z.input<typeof searchEventsParams>;
export type ListPositionsParams = z.input<typeof listPositionsParams>;
export type ListOrdersParams = z.input<typeof listOrdersParams>;
export type ListHistoryParams = z.input<typeof listHistoryParams>;
export type LeaderboardParams = z.input<typeof leaderboardParams>;
export type ClosePositionsBody = z.input<typeof closePositionsBody>;
