import { PublicKey } from "@solana/web3.js";
import { type CatalogueMintSpec, catalogueMintSpecs, MAINNET_MINTS } from "../world/tokens.js";
import type { LocalChainPort } from "./local-chain-port.js";
import type { ChainTokenSpec, SandboxAssets } from "./sandbox-assets.js";

export interface CatalogueOnChain {
  /** Mint address of every catalogue token, by catalogue key (the world's `tokenMints`). */
  readonly tokenMints: Readonly<Record<string, string>>;
  /** The lookup table swap builds hand out. */
  readonly lookupTable: PublicKey;
}

/**
 * Puts the token catalogue on the chain: USDC is the assets' mint (at mainnet USDC's address), USDT
 * sits at mainnet USDT's address, SOL is the real wrapped SOL mint (`So111…112`, created at genesis
 * as SPL Token does on mainnet), every other token a mint derived from the seed (`mint:<key>`) with
 * the catalogue's decimals and token program. The vault holds
 * liquidity of each for swap outputs, and the service's lookup table lists them all.
 */
export function putCatalogueOnChain(
  assets: SandboxAssets,
  port: LocalChainPort,
  specs: readonly CatalogueMintSpec[] = catalogueMintSpecs(),
): CatalogueOnChain {
  const chainSpecs: ChainTokenSpec[] = specs
    .filter((spec) => spec.key !== "usdc")
    .map((spec) => {
      const mainnet = MAINNET_MINTS[spec.key];
      return {
        symbol: spec.key,
        decimals: spec.decimals,
        seedLabel: spec.key,
        tokenProgram: spec.tokenProgram,
        ...(mainnet === undefined ? {} : { address: new PublicKey(mainnet) }),
      };
    });
  const created = assets.createTokenMints(chainSpecs);
  const mints: Record<string, PublicKey> = { usdc: assets.usdcMint, ...created };
  const lookupTable = port.registerLookupTable(Object.values(mints));
  return {
    tokenMints: Object.fromEntries(Object.entries(mints).map(([key, mint]) => [key, mint.toBase58()])),
    lookupTable,
  };
}
