import { z } from "zod";

const numOrNull = z.number().nullable();
const strOrNull = z.string().nullable();

// Every stats window, and every member of one, may be null or missing (api-live).
const statOrNull = numOrNull.optional();
export const tokenStatsSchema = z.looseObject({
  priceChange: statOrNull,
  holderChange: statOrNull,
  liquidityChange: statOrNull,
  volumeChange: statOrNull,
  buyVolume: statOrNull,
  sellVolume: statOrNull,
  buyOrganicVolume: statOrNull,
  sellOrganicVolume: statOrNull,
  numBuys: statOrNull,
  numSells: statOrNull,
  numTraders: statOrNull,
  numOrganicBuyers: statOrNull,
  numNetBuyers: statOrNull,
});

export const tokenAuditSchema = z.looseObject({
  isSus: z.boolean().nullable().optional(),
  mintAuthorityDisabled: z.boolean().nullable().optional(),
  freezeAuthorityDisabled: z.boolean().nullable().optional(),
  topHoldersPercentage: numOrNull.optional(),
  devBalancePercentage: numOrNull.optional(),
  devMints: numOrNull.optional(),
});

const statsWindow = tokenStatsSchema.nullable().optional();

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
  /** Present only for assets of the lending Earn product (api-live). */
  apy: z.looseObject({ jupEarn: z.number() }).nullable().optional(),
  stats5m: statsWindow,
  stats1h: statsWindow,
  stats6h: statsWindow,
  stats24h: statsWindow,
  stats7d: statsWindow,
  stats30d: statsWindow,
  firstPool: z.looseObject({ id: z.string(), createdAt: z.string() }).nullable().optional(),
  audit: tokenAuditSchema.nullable().optional(),
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
