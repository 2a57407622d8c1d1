import { PublicKey } from "@solana/web3.js";
import type { RunningLocalChain } from "../chain/index.js";
import { SandboxError } from "../world/errors.js";
import type { World } from "../world/world.js";
import { type DriveResult, MAX_FUND_WHOLE } from "./drive-rules.js";

/** What an operator may do to a running sandbox, beyond what its clients can: paper trading's levers. */
export interface SandboxDriver {
  /** `needsClaim: false`: the market pays its winners without a claim (a claim is answered no_claim_required). */
  resolve(
    marketId: string,
    result: DriveResult,
    options?: { needsClaim?: boolean },
  ): { marketId: string; status: string; result: string | null };
  setPrice(
    marketId: string,
    yesPrice: string,
    halfSpread?: string,
  ): {
    marketId: string;
    buyYesPriceUsd: number;
    sellYesPriceUsd: number;
    buyNoPriceUsd: number;
    sellNoPriceUsd: number;
  };
  /** Moves the clock on, then lets the service claim what fell due (answers once those claims landed). */
  advance(seconds: number): Promise<{ now: string; nowSeconds: number; serviceClaims: number }>;
  fund(
    wallet: string,
    amount: string,
    mint?: string,
  ): { wallet: string; mint: string; symbol: string; amountRaw: string; balanceRaw: string };
}

const refused = (status: number, param: string, rule: string) =>
  new SandboxError(status, { code: "invalid_parameter", message: `${param}: ${rule}`, param });

/** Whole units as a decimal string → raw units, exact; refused when it has more decimals than the token. */
function toRaw(amount: string, decimals: number, symbol: string): bigint {
  const [whole = "0", fraction = ""] = amount.split(".");
  if (fraction.replace(/0+$/, "").length > decimals)
    throw refused(
      400,
      "amount",
      `${symbol} has ${decimals} decimals: give at most ${decimals} after the point`,
    );
  return (
    BigInt(whole) * 10n ** BigInt(decimals) + BigInt(fraction.padEnd(decimals, "0").slice(0, decimals) || "0")
  );
}

/** The driver of a sandbox's world and chain; the routes have already checked each argument's form. */
export function createSandboxDriver(
  world: World,
  chain: RunningLocalChain | undefined,
  serviceClaims?: { sweep(): Promise<number> },
): SandboxDriver {
  function openMarket(marketId: string) {
    const market = world.findMarket(marketId);
    if (market === undefined) throw refused(404, "marketId", `no market ${marketId} in this sandbox`);
    const state = world.marketState(market);
    if (state.result !== null || state.status === "cancelled")
      throw refused(
        409,
        "marketId",
        `market ${marketId} is already ${state.result === null ? "cancelled" : `resolved ${state.result}`}`,
      );
    return { market, state };
  }

  return {
    resolve(marketId, result, options = {}) {
      openMarket(marketId);
      if (result === "cancelled") world.cancelMarket(marketId);
      else world.resolveMarket(marketId, result, options);
      const market = world.findMarket(marketId);
      const state = market === undefined ? undefined : world.marketState(market);
      return { marketId, status: state?.status ?? "unknown", result: state?.result ?? null };
    },

    setPrice(marketId, yesPrice, halfSpread) {
      const { market, state } = openMarket(marketId);
      if (state.status !== "open")
        throw refused(409, "marketId", `market ${marketId} is ${state.status}: its price no longer moves`);
      const yesMicro = Number(toRaw(yesPrice, 6, "a price"));
      const spreadMicro = halfSpread === undefined ? undefined : Number(toRaw(halfSpread, 6, "a spread"));
      if (spreadMicro !== undefined && spreadMicro >= Math.min(yesMicro, 1_000_000 - yesMicro))
        throw refused(400, "halfSpread", "must leave both sides a bid above 0 at this price");
      world.setPrice(marketId, yesMicro, spreadMicro === undefined ? {} : { halfSpreadMicro: spreadMicro });
      const pricing = world.pricing(market);
      return {
        marketId,
        buyYesPriceUsd: pricing.buyYesPriceUsd / 1_000_000,
        sellYesPriceUsd: pricing.sellYesPriceUsd / 1_000_000,
        buyNoPriceUsd: pricing.buyNoPriceUsd / 1_000_000,
        sellNoPriceUsd: pricing.sellNoPriceUsd / 1_000_000,
      };
    },

    async advance(seconds) {
      const now = world.clock.advance(seconds);
      const claimed = (await serviceClaims?.sweep()) ?? 0;
      return { now: new Date(now * 1000).toISOString(), nowSeconds: now, serviceClaims: claimed };
    },

    fund(wallet, amount, mint = "USDC") {
      if (chain === undefined) throw refused(409, "wallet", "this sandbox runs no chain to fund on");
      const owner = new PublicKey(wallet);
      if (mint.toUpperCase() === "SOL") {
        const lamports = toRaw(amount, 9, "SOL");
        chain.chain.airdrop(owner, lamports);
        const balance = chain.chain.getAccount(owner)?.lamports ?? 0n;
        return {
          wallet,
          mint: "SOL",
          symbol: "SOL",
          amountRaw: String(lamports),
          balanceRaw: String(balance),
        };
      }
      const token = tokenOf(world, mint);
      const raw = toRaw(amount, token.decimals, token.symbol);
      if (raw > BigInt(MAX_FUND_WHOLE) * 10n ** BigInt(token.decimals))
        throw refused(400, "amount", `must be at most ${MAX_FUND_WHOLE} whole tokens`);
      const mintKey = new PublicKey(token.mint);
      chain.chain.mintTo(mintKey, owner, raw);
      return {
        wallet,
        mint: token.mint,
        symbol: token.symbol,
        amountRaw: String(raw),
        balanceRaw: String(chain.chain.tokenBalance(owner, mintKey)),
      };
    },
  };
}

/** A catalogue token by mint address or (unambiguous, case-insensitive) symbol. */
function tokenOf(world: World, mint: string): { mint: string; symbol: string; decimals: number } {
  const byMint = world.tokens.byMintAddress(mint);
  if (byMint !== undefined)
    return { mint: byMint.mint, symbol: byMint.token.symbol, decimals: byMint.decimals };
  const bySymbol = world.tokens.tokens.filter((t) => t.token.symbol.toUpperCase() === mint.toUpperCase());
  const [only] = bySymbol;
  if (bySymbol.length === 1 && only !== undefined)
    return { mint: only.mint, symbol: only.token.symbol, decimals: only.decimals };
  if (bySymbol.length > 1)
    throw refused(
      400,
      "mint",
      `"${mint}" matches ${bySymbol.length} tokens (${bySymbol.map((t) => t.mint).join(", ")}): give the mint`,
    );
  throw refused(
    404,
    "mint",
    `"${mint}" is not a token of this sandbox (a mint address, a symbol such as USDC, or SOL)`,
  );
}
