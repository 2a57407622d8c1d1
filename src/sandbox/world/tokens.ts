import { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from "@solana/spl-token";
import type { Token } from "../../core/schemas/tokens.js";
import { derivePubkey, hashString, intBetween, mulberry32, type Random } from "./rng.js";

export const NATIVE_SOL_MINT = "So11111111111111111111111111111111111111112";

/**
 * The catalogue tokens that live at their mainnet mint addresses, by catalogue key: a config written
 * against the sandbox (a DCA plan from USDC, a limit order into USDT) then runs unchanged against the
 * live service. Every other token's mint is derived from the seed.
 */
export const MAINNET_MINTS: Readonly<Record<string, string>> = {
  usdc: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
  usdt: "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB",
  sol: NATIVE_SOL_MINT,
};

interface TokenSpec {
  /** Stable key of the catalogue entry (two entries may share a symbol). */
  readonly key: string;
  readonly symbol: string;
  readonly name: string;
  readonly decimals: number;
  /** Price of one whole token in micro-USD. */
  readonly priceMicro: bigint;
  readonly isVerified: boolean;
  readonly isSus: boolean;
  /** 0-100; below 35 is labelled low. */
  readonly organicScore: number;
  readonly tags: readonly string[];
  readonly token2022?: boolean;
  readonly earnApy?: number;
  /** Mint and freeze authorities still live (a risk the audit reports). */
  readonly liveAuthorities?: boolean;
}

const SPECS: readonly TokenSpec[] = [
  {
    key: "usdc",
    symbol: "USDC",
    name: "USD Coin (sandbox)",
    decimals: 6,
    priceMicro: 1_000_000n,
    isVerified: true,
    isSus: false,
    organicScore: 98,
    tags: ["verified", "strict", "stable"],
    earnApy: 5.2,
  },
  {
    key: "sol",
    symbol: "SOL",
    name: "Wrapped SOL",
    decimals: 9,
    priceMicro: 150_000_000n,
    isVerified: true,
    isSus: false,
    organicScore: 99,
    tags: ["verified", "strict"],
    earnApy: 6.8,
  },
  {
    key: "usdt",
    symbol: "USDT",
    name: "Tether USD (sandbox)",
    decimals: 6,
    priceMicro: 1_000_000n,
    isVerified: true,
    isSus: false,
    organicScore: 95,
    tags: ["verified", "stable"],
  },
  {
    key: "keep",
    symbol: "KEEP",
    name: "Keeper Token",
    decimals: 6,
    priceMicro: 420_000n,
    isVerified: true,
    isSus: false,
    organicScore: 81,
    tags: ["verified"],
  },
  {
    key: "wave",
    symbol: "WAVE",
    name: "Wave Protocol",
    decimals: 8,
    priceMicro: 2_750_000n,
    isVerified: true,
    isSus: false,
    organicScore: 77,
    tags: ["verified", "defi"],
  },
  {
    key: "moon",
    symbol: "MOON",
    name: "Moon Network",
    decimals: 6,
    priceMicro: 85_000n,
    isVerified: true,
    isSus: false,
    organicScore: 72,
    tags: ["verified"],
  },
  {
    key: "moon-copy",
    symbol: "MOON",
    name: "MOON (copycat)",
    decimals: 6,
    priceMicro: 12n,
    isVerified: false,
    isSus: true,
    organicScore: 4,
    tags: ["unknown"],
    liveAuthorities: true,
  },
  {
    key: "cat",
    symbol: "CAT",
    name: "Cat Coin",
    decimals: 5,
    priceMicro: 1_900n,
    isVerified: true,
    isSus: false,
    organicScore: 66,
    tags: ["verified", "meme"],
  },
  {
    key: "cat-2022",
    symbol: "CAT",
    name: "Cat Token 2022",
    decimals: 9,
    priceMicro: 310n,
    isVerified: false,
    isSus: false,
    organicScore: 28,
    tags: ["token-2022"],
    token2022: true,
  },
  {
    key: "orbit",
    symbol: "ORBIT",
    name: "Orbit Finance",
    decimals: 6,
    priceMicro: 12_400_000n,
    isVerified: true,
    isSus: false,
    organicScore: 70,
    tags: ["verified", "defi"],
  },
  {
    key: "pixel",
    symbol: "PIXEL",
    name: "Pixel Realms",
    decimals: 6,
    priceMicro: 63_000n,
    isVerified: false,
    isSus: false,
    organicScore: 45,
    tags: ["gaming"],
  },
  {
    key: "rain",
    symbol: "RAIN",
    name: "Rain Oracle",
    decimals: 9,
    priceMicro: 930_000n,
    isVerified: true,
    isSus: false,
    organicScore: 61,
    tags: ["verified", "oracle"],
  },
  {
    key: "fern",
    symbol: "FERN",
    name: "Fern Staked SOL",
    decimals: 9,
    priceMicro: 171_000_000n,
    isVerified: true,
    isSus: false,
    organicScore: 88,
    tags: ["verified", "lst"],
    earnApy: 7.4,
  },
  {
    key: "dust",
    symbol: "DUST",
    name: "Dust Particles",
    decimals: 6,
    priceMicro: 7n,
    isVerified: false,
    isSus: true,
    organicScore: 2,
    tags: ["unknown"],
    liveAuthorities: true,
  },
  {
    key: "bolt",
    symbol: "BOLT",
    name: "Bolt Exchange",
    decimals: 6,
    priceMicro: 3_300_000n,
    isVerified: true,
    isSus: false,
    organicScore: 74,
    tags: ["verified", "defi"],
  },
  {
    key: "grain",
    symbol: "GRAIN",
    name: "Grain Market",
    decimals: 6,
    priceMicro: 15_000n,
    isVerified: false,
    isSus: false,
    organicScore: 33,
    tags: [],
  },
  {
    key: "hoot",
    symbol: "HOOT",
    name: "Hoot Owl",
    decimals: 5,
    priceMicro: 450n,
    isVerified: false,
    isSus: false,
    organicScore: 21,
    tags: ["meme"],
  },
  {
    key: "ion",
    symbol: "ION",
    name: "Ion Compute",
    decimals: 8,
    priceMicro: 8_100_000n,
    isVerified: true,
    isSus: false,
    organicScore: 69,
    tags: ["verified", "ai"],
  },
  {
    key: "jade",
    symbol: "JADE",
    name: "Jade Lending",
    decimals: 6,
    priceMicro: 540_000n,
    isVerified: true,
    isSus: false,
    organicScore: 58,
    tags: ["verified", "lending"],
  },
  {
    key: "kite",
    symbol: "KITE",
    name: "Kite Bridge",
    decimals: 6,
    priceMicro: 1_150_000n,
    isVerified: false,
    isSus: false,
    organicScore: 49,
    tags: ["bridge"],
  },
  {
    key: "lumen",
    symbol: "LUMEN",
    name: "Lumen Energy",
    decimals: 9,
    priceMicro: 27_000n,
    isVerified: false,
    isSus: false,
    organicScore: 12,
    tags: [],
  },
  {
    key: "mint",
    symbol: "MINTY",
    name: "Minty Fresh",
    decimals: 6,
    priceMicro: 900n,
    isVerified: false,
    isSus: true,
    organicScore: 9,
    tags: ["meme"],
    liveAuthorities: true,
  },
  {
    key: "nova",
    symbol: "NOVA",
    name: "Nova Launchpad",
    decimals: 6,
    priceMicro: 230_000n,
    isVerified: true,
    isSus: false,
    organicScore: 64,
    tags: ["verified", "launchpad"],
  },
  {
    key: "opal",
    symbol: "OPAL",
    name: "Opal Vaults",
    decimals: 6,
    priceMicro: 4_600_000n,
    isVerified: true,
    isSus: false,
    organicScore: 71,
    tags: ["verified", "defi"],
    earnApy: 3.1,
  },
  {
    key: "quill",
    symbol: "QUILL",
    name: "Quill Social",
    decimals: 6,
    priceMicro: 5_500n,
    isVerified: false,
    isSus: false,
    organicScore: 38,
    tags: ["social"],
  },
  {
    key: "reef",
    symbol: "REEF",
    name: "Reef Perps",
    decimals: 6,
    priceMicro: 780_000n,
    isVerified: true,
    isSus: false,
    organicScore: 57,
    tags: ["verified", "perps"],
  },
  {
    key: "sage",
    symbol: "SAGE",
    name: "Sage DAO",
    decimals: 6,
    priceMicro: 96_000n,
    isVerified: false,
    isSus: false,
    organicScore: 42,
    tags: ["dao"],
  },
  {
    key: "tide",
    symbol: "TIDE",
    name: "Tide Stable Yield",
    decimals: 6,
    priceMicro: 1_010_000n,
    isVerified: true,
    isSus: false,
    organicScore: 80,
    tags: ["verified", "stable"],
    earnApy: 9.5,
  },
  {
    key: "umbra",
    symbol: "UMBRA",
    name: "Umbra Privacy",
    decimals: 9,
    priceMicro: 160_000n,
    isVerified: false,
    isSus: false,
    organicScore: 26,
    tags: ["privacy"],
    token2022: true,
  },
  {
    key: "vex",
    symbol: "VEX",
    name: "Vex Rug",
    decimals: 6,
    priceMicro: 3n,
    isVerified: false,
    isSus: true,
    organicScore: 1,
    tags: ["unknown"],
    liveAuthorities: true,
  },
  {
    key: "wisp",
    symbol: "WISP",
    name: "Wisp Payments",
    decimals: 6,
    priceMicro: 310_000n,
    isVerified: true,
    isSus: false,
    organicScore: 67,
    tags: ["verified", "payments"],
  },
  {
    key: "yarn",
    symbol: "YARN",
    name: "Yarn Threads",
    decimals: 6,
    priceMicro: 18_000n,
    isVerified: false,
    isSus: false,
    organicScore: 15,
    tags: [],
  },
  {
    key: "zest",
    symbol: "ZEST",
    name: "Zest Rewards",
    decimals: 6,
    priceMicro: 72_000n,
    isVerified: false,
    isSus: false,
    organicScore: 52,
    tags: ["rewards"],
  },
];

/** What the local chain needs of a catalogue token to create its mint. */
export interface CatalogueMintSpec {
  readonly key: string;
  readonly symbol: string;
  readonly decimals: number;
  readonly tokenProgram: "token" | "token-2022";
}

/** Every token of the catalogue (all of them can be searched, swapped and ordered), in catalogue order. */
export function catalogueMintSpecs(): CatalogueMintSpec[] {
  return SPECS.map((spec) => ({
    key: spec.key,
    symbol: spec.symbol,
    decimals: spec.decimals,
    tokenProgram: spec.token2022 === true ? "token-2022" : "token",
  }));
}

/** A catalogue entry: the searchable Token plus the exact figures the world computes with. */
export interface CatalogueToken {
  readonly key: string;
  readonly mint: string;
  readonly decimals: number;
  readonly priceMicro: bigint;
  readonly token: Token;
}

function statsFor(random: Random, scale: number, organic: number, window: "short" | "long") {
  const priceChange = Number(((random() - 0.45) * (window === "short" ? 4 : 40)).toFixed(2));
  if (window === "long") return { priceChange };
  const buyVolume = Math.round(random() * scale);
  const sellVolume = Math.round(random() * scale);
  const numBuys = intBetween(random, 0, 5_000);
  const numSells = intBetween(random, 0, 5_000);
  return {
    priceChange,
    holderChange: Number(((random() - 0.4) * 3).toFixed(2)),
    liquidityChange: Number(((random() - 0.5) * 5).toFixed(2)),
    volumeChange: Number(((random() - 0.5) * 60).toFixed(2)),
    buyVolume,
    sellVolume,
    buyOrganicVolume: Math.round((buyVolume * organic) / 100),
    sellOrganicVolume: Math.round((sellVolume * organic) / 100),
    numBuys,
    numSells,
    numTraders: intBetween(random, 1, 2_000),
    numOrganicBuyers: Math.round((numBuys * organic) / 200),
    numNetBuyers: intBetween(random, -200, 400),
  };
}

const iso = (seconds: number): string => new Date(seconds * 1000).toISOString();

function organicLabel(score: number): "high" | "medium" | "low" {
  if (score >= 70) return "high";
  if (score >= 35) return "medium";
  return "low";
}

function longStats<T>(isSus: boolean, windows: { stats7d: T; stats30d: T }) {
  return isSus ? { stats7d: null, stats30d: null } : windows;
}

function buildToken(spec: TokenSpec, mint: string, seed: number, genesis: number): Token {
  const random = mulberry32(hashString(`token:${spec.key}#${seed}`));
  const usdPrice = Number(spec.priceMicro) / 1_000_000;
  const totalSupply = intBetween(random, 10, 10_000) * 1_000_000;
  const circSupply = Math.round(totalSupply * (0.4 + random() * 0.6));
  const createdAt = genesis - intBetween(random, 30, 1_500) * 86_400;
  const dev = derivePubkey(`token-dev:${spec.key}`, seed).toBase58();
  const authority = spec.liveAuthorities === true ? dev : null;
  const liquidity = Math.round(circSupply * usdPrice * (0.01 + random() * 0.1));
  const volumeScale = Math.max(100, liquidity / 50);
  return {
    id: mint,
    name: spec.name,
    symbol: spec.symbol,
    tokenProgram: (spec.token2022 === true ? TOKEN_2022_PROGRAM_ID : TOKEN_PROGRAM_ID).toBase58(),
    decimals: spec.decimals,
    createdAt: iso(createdAt),
    updatedAt: iso(genesis - intBetween(random, 60, 86_400)),
    icon: `https://sandbox.invalid/tokens/${spec.key}.png`,
    twitter: spec.isSus ? null : `https://x.invalid/${spec.key}`,
    telegram: random() < 0.5 ? `https://t.invalid/${spec.key}` : null,
    website: spec.isSus ? null : `https://${spec.key}.sandbox.invalid`,
    discord: random() < 0.4 ? `https://discord.invalid/${spec.key}` : null,
    instagram: null,
    tiktok: null,
    otherUrl: null,
    dev,
    // Present only while the authority is live (spec: absent when disabled).
    ...(authority === null ? {} : { mintAuthority: authority, freezeAuthority: authority }),
    issuer: null,
    launchpad: spec.tags.includes("meme") ? "sandbox-pad" : null,
    partnerConfig: null,
    graduatedPool: spec.tags.includes("meme") ? derivePubkey(`pool-grad:${spec.key}`, seed).toBase58() : null,
    graduatedAt: spec.tags.includes("meme") ? iso(createdAt + 86_400) : null,
    circSupply,
    totalSupply,
    holderCount: intBetween(random, 50, 2_000_000),
    fdv: Math.round(totalSupply * usdPrice),
    mcap: Math.round(circSupply * usdPrice),
    usdPrice,
    priceBlockId: 300_000_000 + intBetween(random, 0, 1_000_000),
    liquidity,
    fees: Math.round(liquidity * 0.003 * random()),
    // As the live service: apy only for assets of the lending Earn product.
    ...(spec.earnApy === undefined ? {} : { apy: { jupEarn: spec.earnApy } }),
    stats5m: statsFor(random, volumeScale / 288, spec.organicScore, "short"),
    stats1h: statsFor(random, volumeScale / 24, spec.organicScore, "short"),
    stats6h: statsFor(random, volumeScale / 4, spec.organicScore, "short"),
    stats24h: statsFor(random, volumeScale, spec.organicScore, "short"),
    // Drawn for every token (the draws after them stay the same), sent as null for a suspicious one:
    // the live service has no long windows for such tokens.
    ...longStats(spec.isSus, {
      stats7d: statsFor(random, volumeScale * 7, spec.organicScore, "long"),
      stats30d: statsFor(random, volumeScale * 30, spec.organicScore, "long"),
    }),
    firstPool: { id: derivePubkey(`pool:${spec.key}`, seed).toBase58(), createdAt: iso(createdAt + 600) },
    audit: {
      isSus: spec.isSus,
      mintAuthorityDisabled: authority === null,
      freezeAuthorityDisabled: authority === null,
      topHoldersPercentage: Number((spec.isSus ? 60 + random() * 35 : 5 + random() * 30).toFixed(2)),
      devBalancePercentage: Number((spec.isSus ? 20 + random() * 50 : random() * 3).toFixed(2)),
      devMints: spec.isSus ? intBetween(random, 5, 60) : intBetween(random, 0, 2),
    },
    organicScore: spec.organicScore,
    organicScoreLabel: organicLabel(spec.organicScore),
    isVerified: spec.isVerified,
    tags: [...spec.tags],
  };
}

export interface TokenCatalogueOptions {
  /**
   * Mints that exist on the local chain, by catalogue key ("usdc", ...); others get their mainnet
   * address (MAINNET_MINTS) or one derived from the seed.
   */
  readonly mints?: Readonly<Record<string, string>>;
}

export class TokenCatalogue {
  readonly tokens: readonly CatalogueToken[];
  private readonly byMint: Map<string, CatalogueToken>;

  constructor(seed: number, genesis: number, options: TokenCatalogueOptions = {}) {
    this.tokens = SPECS.map((spec) => {
      // Without a chain, an address of its own: not "mint:<key>", whose hash is the seed the chain's
      // mint keypair is made from (an address equal to a key's seed would print that seed).
      const mint =
        options.mints?.[spec.key] ??
        MAINNET_MINTS[spec.key] ??
        derivePubkey(`token:${spec.key}`, seed).toBase58();
      return {
        key: spec.key,
        mint,
        decimals: spec.decimals,
        priceMicro: spec.priceMicro,
        token: buildToken(spec, mint, seed, genesis),
      };
    });
    this.byMint = new Map(this.tokens.map((t) => [t.mint, t]));
  }

  byMintAddress(mint: string): CatalogueToken | undefined {
    return this.byMint.get(mint);
  }

  byKey(key: string): CatalogueToken | undefined {
    return this.tokens.find((t) => t.key === key);
  }

  /** USD value in micro-USD of a raw amount, exactly: raw × price / 10^decimals, rounded down. */
  /** Raw units of `to` worth `rawAmount` of `from` at today's prices, rounded down (0 if either is unknown). */
  rawWorth(from: string, rawAmount: bigint, to: string): bigint {
    const value = this.valueMicro(from, rawAmount);
    const target = this.byMint.get(to);
    if (value === undefined || target === undefined) return 0n;
    return (value * 10n ** BigInt(target.decimals)) / target.priceMicro;
  }

  valueMicro(mint: string, rawAmount: bigint): bigint | undefined {
    const entry = this.byMint.get(mint);
    if (entry === undefined) return undefined;
    return (rawAmount * entry.priceMicro) / 10n ** BigInt(entry.decimals);
  }

  /**
   * Search as the live service does: a mint address matches exactly; a symbol or name matches
   * case-insensitively, exact symbols first, then verified and more organic tokens; at most 20 per term.
   */
  search(query: string): Token[] {
    const found: CatalogueToken[] = [];
    const seen = new Set<string>();
    for (const raw of query.split(",")) {
      const term = raw.trim();
      if (term === "") continue;
      for (const entry of this.matchTerm(term)) {
        if (seen.has(entry.mint)) continue;
        seen.add(entry.mint);
        found.push(entry);
      }
    }
    return found.map((entry) => entry.token);
  }

  private matchTerm(term: string): CatalogueToken[] {
    const exactMint = this.byMint.get(term);
    if (exactMint !== undefined) return [exactMint];
    const lower = term.toLowerCase();
    const rank = (entry: CatalogueToken): number => {
      if (entry.token.symbol.toLowerCase() === lower) return 0;
      if (entry.token.symbol.toLowerCase().startsWith(lower)) return 1;
      return 2;
    };
    return this.tokens
      .filter(
        (e) => e.token.symbol.toLowerCase().includes(lower) || e.token.name.toLowerCase().includes(lower),
      )
      .sort(
        (a, b) =>
          rank(a) - rank(b) ||
          Number(b.token.isVerified === true) - Number(a.token.isVerified === true) ||
          (b.token.organicScore ?? 0) - (a.token.organicScore ?? 0),
      )
      .slice(0, 20);
  }
}
