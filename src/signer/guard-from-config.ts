import type { Redis } from "ioredis";
import type { KeeperConfig } from "../config/load-config.js";
import { resolveStrategyTokens, type SearchTokens } from "../config/resolve-tokens.js";
import { DayTally } from "./day-tally.js";
import { SignerGuard } from "./intent-guard.js";
import { limitSettingsFrom, needsStrategyMints } from "./limit-settings.js";
import { SignerLimits } from "./limits.js";
import { DEFAULT_SWAP_SLIPPAGE_BPS } from "./swap-floor.js";
import { TokenPrices } from "./token-prices.js";

/**
 * The signer role's guard, from the config it read from its own file and the service it reads itself:
 * the strategies' tokens are resolved here (where the limits default to the mints they name), prices
 * come from its own token searches, the day's tally lives under its own Redis key and in its memory.
 */
export async function signerGuardFor(
  config: Pick<KeeperConfig, "signer" | "strategies" | "tokens">,
  search: SearchTokens,
  redis: Redis,
  tallyKeyPrefix: string,
): Promise<SignerGuard> {
  const { limits, maxPriceDeviationPct } = config.signer;
  const strategies = needsStrategyMints(limits, config.strategies)
    ? (await resolveStrategyTokens(config, search)).strategies
    : config.strategies;
  return new SignerGuard(
    new SignerLimits(limitSettingsFrom(limits, strategies), new DayTally(redis, tallyKeyPrefix)),
    new TokenPrices(search),
    {
      maxPriceDeviationBps: Math.round(maxPriceDeviationPct * 100),
      defaultSlippageBps: DEFAULT_SWAP_SLIPPAGE_BPS,
    },
  );
}
