import { z } from "zod";

const numOrNull = z.number().nullable();
const strOrNull = z.string().nullable();

export const tokenStatsSchema = z.looseObject({
  priceChange: z.number().optional(),
  holderChange: z.number().optional(),
  liquidityChange: z.number().optional(),
  volumeChange: z.number().optional(),
  buyVolume: z.number().optional(),
  sellVolume: z.number().optional(),
  buyOrganicVolume: z.number().optional(),
  sellOrganicVolume: z.number().optional(),
  numBuys: z.number().optional(),
  numSells: z.number().optional(),
  numTraders: z.number().optional(),
  numOrganicBuyers: z.number().optional(),
  numNetBuyers: z.number().optional(),
});

export const tokenAuditSchema = z.looseObject({
  isSus: z.boolean().optional(),
  mintAuthorityDisabled: z.boolean().optional(),
  freezeAuthorityDisabled: z.boolean().optional(),
  topHoldersPercentage: z.number().optional(),
  devBalancePercentage: z.number().optional(),
  devMints: z.number().optional(),
});

export const tokenSchema = z.looseObject({
  id: z.string().min(1),
  name: z.string(),
  symbol: z.string(),
  tokenProgram: z.string(),
  decimals: z.number().int().min(0),
  createdAt: z.string().optional(),
  updatedAt: z.string().optional(),
  icon: strOrNull.optional(),
  twitter: strOrNull.optional(),
  telegram: strOrNull.optional(),
  website: strOrNull.optional(),
  discord: strOrNull.optional(),
  instagram: strOrNull.optional(),
  tiktok: strOrNull.optional(),
  otherUrl: strOrNull.optional(),
  dev: strOrNull.optional(),
  mintAuthority: strOrNull.optional(),
  freezeAuthority: strOrNull.optional(),
  issuer: strOrNull.optional(),
  launchpad: strOrNull.optional(),
  partnerConfig: strOrNull.optional(),
  graduatedPool: strOrNull.optional(),
  graduatedAt: strOrNull.optional(),
  circSupply: numOrNull.optional(),
  totalSupply: numOrNull.optional(),
  holderCount: numOrNull.optional(),
  fdv: numOrNull.optional(),
  mcap: numOrNull.optional(),
  usdPrice: numOrNull.optional(),
  priceBlockId: numOrNull.optional(),
  liquidity: numOrNull.optional(),
  fees: numOrNull.optional(),
  apy: z.looseObject({ venueEarn: z.number() }).optional(),
  stats5m: tokenStatsSchema.optional(),
  stats1h: tokenStatsSchema.optional(),
  stats6h: tokenStatsSchema.optional(),
  stats24h: tokenStatsSchema.optional(),
  stats7d: tokenStatsSchema.optional(),
  stats30d: tokenStatsSchema.optional(),
  firstPool: z.looseObject({ id: z.string(), createdAt: z.string() }).optional(),
  audit: tokenAuditSchema.optional(),
  organicScore: z.number().min(0).max(100).optional(),
  organicScoreLabel: z.enum(["high", "medium", "low"]).optional(),
  isVerified: z.boolean().nullable().optional(),
  tags: z.array(z.string()).nullable().optional(),
});

export const tokenSearchResponseSchema = z.array(tokenSchema);

export const MAX_SEARCH_TERMS = 100;
export const tokenSearchParams = z.strictObject({
  query: z
    .string()
    .trim()
    .min(1, "is required")
    .refine(
      (q) => q.split(",").length <= MAX_SEARCH_TERMS,
      `at most ${MAX_SEARCH_TERMS} comma-separated terms`,
    ),
});

export type Token = z.infer<typeof tokenSchema>;
export type TokenSearchParams = z.input<typeof tokenSearchParams>;
