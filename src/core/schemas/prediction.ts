import { z } from "zod";
import { KNOWN_EVENT_CATEGORIES, KNOWN_EVENT_PROVIDERS } from "../event-details.js";
import {
  contractCount,
  contractsMicro,
  exactContracts,
  microUsd,
  paginationSchema,
  pubkey,
  queryBool,
  queryInt,
  rangeParams,
} from "./common.js";

// One list each, in core, so strategies (which import only core) see the same values. Both are the
// names known today, not closed sets: the service adds providers and categories (api-live), so a
// provider or category is sent and read as any non-empty string.
export const PROVIDERS = KNOWN_EVENT_PROVIDERS;
export const CATEGORIES = KNOWN_EVENT_CATEGORIES;
/** The provider the events list and search use when none is given (api-live). */
export const DEFAULT_PROVIDER = "polymarket";

const nonEmptyId = z.string().min(1, "must be at least 1 character");
const providerName = z.string().min(1, "expected a provider name such as polymarket, kalshi or bisonfi");
const categoryName = z.string().min(1, "expected a category name such as crypto or sports");
/** Null where the live service has no figure (a closed market, no sell price). */
const microUsdOrNull = microUsd.nullable();

// Only the ids are sure to be there (api-live): every other metadata field may be missing, and a
// decision that needs one (status, closeTime) does nothing when it is.
export const marketMetadataSchema = z.looseObject({
  marketId: z.string(),
  title: z.string().optional(),
  status: z.string().optional(),
  result: z.string().nullable().optional(),
  closeTime: z.number().optional(),
  openTime: z.number().optional(),
  isTeamMarket: z.boolean().optional(),
  rulesPrimary: z.string().optional(),
  rulesSecondary: z.string().optional(),
  eventId: z.string().optional(),
});

export const eventMetadataSchema = z.looseObject({
  eventId: z.string(),
  title: z.string().optional(),
  subtitle: z.string().optional(),
  slug: z.string().optional(),
  series: z.string().optional(),
  closeTime: z.string().optional(),
  imageUrl: z.string().optional(),
  isLive: z.boolean().optional(),
});

/** Micro-USD prices; each may be null (no quote on that side, a resolved market). */
export const marketPricingSchema = z.looseObject({
  buyYesPriceUsd: z.number().nullable(),
  buyNoPriceUsd: z.number().nullable(),
  sellYesPriceUsd: z.number().nullable(),
  sellNoPriceUsd: z.number().nullable(),
  volume: z.number().nullable().optional(),
});

/** A number (Unix seconds) or null before resolution; an ISO 8601 string once resolved (api-live). */
export const resolveAtSchema = z.union([z.number(), z.iso.datetime({ offset: true }), z.null()]);

/** Market fields are flat on the market (api-live), not nested in a `metadata` object. */
export const marketSchema = z.looseObject({
  marketId: z.string(),
  status: z.enum(["open", "closed", "cancelled"]),
  result: z.enum(["yes", "no"]).nullable(),
  openTime: z.number(),
  closeTime: z.number(),
  resolveAt: resolveAtSchema,
  marketResultPubkey: z.string().nullable().optional(),
  imageUrl: z.url().nullable().optional(),
  title: z.string().optional(),
  subtitle: z.string().optional(),
  eventId: z.string().optional(),
  marketPubkey: z.string().optional(),
  isTeamMarket: z.boolean().optional(),
  rulesPrimary: z.string().optional(),
  rulesSecondary: z.string().optional(),
  pricing: marketPricingSchema.optional(),
  // Forecast (bisonfi) markets only (api-live).
  lifecycleStatus: z.string().optional(),
  tradable: z.boolean().optional(),
  outcomeMint: pubkey.optional(),
  outcomeSide: z.string().optional(),
  marketPda: pubkey.optional(),
});

/**
 * A live event's score. Its fields are the provider's (a match's score, a period, a clock) and are
 * not listed by the reference: read as an open object, null when the event has none.
 */
export const liveScoreSchema = z.looseObject({}).nullable();

export const eventSchema = z.looseObject({
  eventId: z.string(),
  isActive: z.boolean(),
  isLive: z.boolean(),
  category: categoryName,
  subcategory: z.string(),
  volumeUsd: microUsd,
  // Sent by the live service on every event (api-live); optional so an older answer still reads.
  volume24hr: microUsd.optional(),
  liveScore: liveScoreSchema.optional(),
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
  ...exactContracts,
  totalCostUsd: microUsd,
  sizeUsd: microUsd,
  // Null once the market is closed (valuation and pnl) or when no sell price is quoted (api-live).
  valueUsd: microUsdOrNull,
  avgPriceUsd: microUsd,
  markPriceUsd: microUsdOrNull,
  sellPriceUsd: microUsdOrNull,
  pnlUsd: microUsdOrNull,
  pnlUsdAfterFees: microUsdOrNull,
  feesPaidUsd: microUsd,
  claimedUsd: microUsd,
  payoutUsd: microUsd,
  pnlUsdPercent: z.number().nullable(),
  pnlUsdAfterFeesPercent: z.number().nullable(),
  realizedPnlUsd: z.number(),
  openedAt: z.number(),
  updatedAt: z.number(),
  claimableAt: z.number().nullable(),
  settlementDate: z.number().nullable(),
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
  ...exactContracts,
  maxFillPriceUsd: microUsd,
  // Only the side the order is on is set (api-live).
  maxBuyPriceUsd: microUsdOrNull,
  minSellPriceUsd: microUsdOrNull,
  filledContracts: contractCount,
  filledContractsMicro: contractsMicro.optional(),
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
  ...exactContracts,
  // The other counts exact too (the sandbox's names; optional, an answer may lack them).
  filledContractsMicro: contractsMicro.optional(),
  contractsSettledMicro: contractsMicro.optional(),
  maxFillPriceUsd: microUsd,
  avgFillPriceUsd: microUsd,
  maxBuyPriceUsd: microUsdOrNull,
  minSellPriceUsd: microUsdOrNull,
  depositAmountUsd: microUsd,
  totalCostUsd: microUsd,
  feeUsd: microUsdOrNull,
  grossProceedsUsd: microUsd,
  netProceedsUsd: microUsd,
  transferAmountToken: z.string().nullable(),
  realizedPnl: microUsdOrNull,
  realizedPnlBeforeFees: microUsdOrNull,
  payoutAmountUsd: microUsd,
  marketMetadata: marketMetadataSchema,
  eventMetadata: eventMetadataSchema,
});

/**
 * The reference says integer, the service's own client a string: both are read, and a decimal
 * string must hold a safe integer (a block height Keeper compares with the chain's).
 */
export const blockHeightSchema = z.union([
  z.number().int().min(0),
  z.string().regex(/^\d{1,15}$/, "expected a block height: an integer or a decimal string"),
]);
export const txMetaSchema = z.looseObject({ blockhash: z.string(), lastValidBlockHeight: blockHeightSchema });

/** A block height as a number, whichever way the service wrote it. */
export const blockHeightOf = (value: z.infer<typeof blockHeightSchema>): number => Number(value);

export const orderPreviewSchema = z.looseObject({
  orderPubkey: z.string(),
  orderAtaPubkey: z.string(),
  userPubkey: z.string(),
  marketId: z.string(),
  marketIdHash: z.string(),
  positionPubkey: z.string(),
  contracts: contractCount,
  ...exactContracts,
  newContracts: contractCount,
  newContractsMicro: contractsMicro.optional(),
  // A sell sets no buy limit and a buy no sell limit (api-live).
  maxBuyPriceUsd: microUsdOrNull,
  minSellPriceUsd: microUsdOrNull,
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

/** Where a signed build goes when it must go through the service: a relative path and an opaque context. */
export const executionSchema = z.looseObject({
  endpoint: z.string().min(1),
  context: z.looseObject({ type: z.string().min(1) }),
});

/**
 * What builds that open or sell carry besides the transaction (api-live): Forecast builds name
 * `execution` (their only way to the chain), `executionModel: atomic_swap`, `settlement: auto` and the
 * keys that must sign, the service's among them. Optional and nullable: older answers lack them.
 */
export const buildExecutionFields = {
  execution: executionSchema.nullable().optional(),
  executionModel: z.string().nullable().optional(),
  settlement: z.string().nullable().optional(),
  requiredSigners: z.array(pubkey).optional(),
  jupiterSwapRequestId: z.string().nullable().optional(),
};

export const closePreviewSchema = z.looseObject({
  transaction: z.string().min(1),
  txMeta: txMetaSchema,
  externalOrderId: z.string(),
  order: orderPreviewSchema,
  ...buildExecutionFields,
});

/** POST /orders: the same preview as a close, for a buy. */
export const createOrderResponseSchema = closePreviewSchema;

/** POST /execute: the service's report of a signed build it submitted (api-live). */
export const predictionExecuteResponseSchema = z.looseObject({
  status: z.enum(["Success", "Failed"]),
  signature: z.string().nullable(),
  error: z.string().nullable(),
  requestId: z.string().optional(),
});

/** POST /orders/execute, the form the service's own client uses: the signature only. */
export const orderExecuteResponseSchema = z.looseObject({ signature: z.string().min(1) });

export const claimPreviewSchema = z.looseObject({
  transaction: z.string().min(1),
  txMeta: txMetaSchema,
  position: z.looseObject({
    positionPubkey: z.string(),
    marketPubkey: z.string(),
    userPubkey: z.string(),
    ownerPubkey: z.string(),
    contracts: contractCount,
    ...exactContracts,
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
  // Null for all_time (api-live).
  periodStart: z.string().nullable(),
  periodEnd: z.string().nullable(),
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
/**
 * Close all answers a close for each position it sells and a claim for each winning position (a
 * winner is claimed, not sold): the two are told apart by `order` (a close) and `position` (a claim).
 */
export const closeAllItemSchema = z.union([closePreviewSchema, claimPreviewSchema]);
export const closeAllResponseSchema = z.looseObject({ data: z.array(closeAllItemSchema) });

// ---- parameters per endpoint (the spec's rules, shared by client and sandbox) ----
export const listEventsParams = z.strictObject({
  provider: providerName.optional(),
  includeMarkets: queryBool.nullable().optional(),
  includeAllMarkets: queryBool.nullable().optional(),
  ...rangeParams,
  category: categoryName.optional(),
  subcategory: z.string().optional(),
  sortBy: z.enum(["volume", "volume24hr", "beginAt"]).optional(),
  sortDirection: z.enum(["asc", "desc"]).optional(),
  filter: z.enum(["new", "live", "trending", "upcoming"]).optional(),
});
export const eventIdParam = z.strictObject({ eventId: nonEmptyId });
export const getEventParams = z.strictObject({
  eventId: nonEmptyId,
  includeMarkets: queryBool.nullable().optional(),
});
export const searchEventsParams = z.strictObject({
  query: z.string().min(1, "must be 1 to 200 characters").max(200, "must be 1 to 200 characters"),
  limit: queryInt.pipe(z.number().min(1, "must be 1 to 20").max(20, "must be 1 to 20")).optional(),
  provider: providerName.optional(),
  // Not in the reference, but the service's own CLI sends it and the service answers it (api-live).
  includeMarkets: queryBool.nullable().optional(),
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
/** No market filter on the live service (api-live): a caller filters the answer itself. */
export const listOrdersParams = z.strictObject({
  ...rangeParams,
  ownerPubkey: pubkey.optional(),
});
export const listHistoryParams = z.strictObject({
  ...rangeParams,
  ownerPubkey: pubkey.optional(),
  id: queryInt.pipe(z.number().min(1, "must be >= 1")).optional(),
  positionPubkey: pubkey.optional(),
});
const slippageBps = z.number().int().min(0, "must be 0 to 10000").max(10_000, "must be 0 to 10000");
/** DELETE /positions: the live service requires the slippage of the sells. */
export const closeAllBody = z.strictObject({ ownerPubkey: pubkey, minSellPriceSlippageBps: slippageBps });
/** DELETE /positions/{positionPubkey}: the owner only (api-live). */
export const closePositionBody = z.strictObject({ ownerPubkey: pubkey });
export const positionPathParams = z.strictObject({ positionPubkey: pubkey });
export const claimBody = z.strictObject({ ownerPubkey: pubkey });
/** A count of contracts in one of its three forms; an order body takes at most one (api-live). */
const orderCounts = { contracts: contractCount.optional(), ...exactContracts };
const integerMicroUsd = z.string().regex(/^\d+$/, "expected an integer string of micro-USD");
/** POST /orders: open (or add to) a position. `depositAmount` is micro-USD of `depositMint`. */
export const createOrderBody = z
  .strictObject({
    ownerPubkey: pubkey,
    marketId: nonEmptyId,
    isYes: z.boolean(),
    isBuy: z.boolean(),
    depositAmount: integerMicroUsd,
    depositMint: pubkey.optional(),
    ...orderCounts,
    maxBuyPriceUsd: integerMicroUsd.optional(),
    minSellPriceUsd: integerMicroUsd.optional(),
  })
  .refine(
    (body) =>
      [body.contracts, body.contractsMicro, body.contractsDecimal].filter((c) => c !== undefined).length <= 1,
    { message: "give at most one of contracts, contractsMicro, contractsDecimal", path: ["contracts"] },
  );
/** POST /execute: the signed build and, when the build named one, its `execution.context` unchanged. */
export const predictionExecuteBody = z.strictObject({
  signedTransaction: z.string().min(1, "is required"),
  context: z.looseObject({ type: z.string().min(1) }).optional(),
  requestId: z.string().min(1).optional(),
});
export const orderExecuteBody = z.strictObject({ signedTransaction: z.string().min(1, "is required") });
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
export type CloseAllItem = z.infer<typeof closeAllItemSchema>;
export type ClaimPreview = z.infer<typeof claimPreviewSchema>;
export type BuildExecution = z.infer<typeof executionSchema>;
export type CreateOrderBody = z.input<typeof createOrderBody>;
export type PredictionExecuteBody = z.input<typeof predictionExecuteBody>;
export type PredictionExecuteResponse = z.infer<typeof predictionExecuteResponseSchema>;
export type LeaderboardEntry = z.infer<typeof leaderboardEntrySchema>;
export type LeaderboardResponse = z.infer<typeof leaderboardResponseSchema>;
export type ListEventsParams = z.input<typeof listEventsParams>;
export type SearchEventsParams = z.input<typeof searchEventsParams>;
export type ListPositionsParams = z.input<typeof listPositionsParams>;
export type ListOrdersParams = z.input<typeof listOrdersParams>;
export type ListHistoryParams = z.input<typeof listHistoryParams>;
export type LeaderboardParams = z.input<typeof leaderboardParams>;
export type CloseAllBody = z.input<typeof closeAllBody>;
export type ClosePositionBody = z.input<typeof closePositionBody>;
