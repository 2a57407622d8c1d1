import type { ConfiguredStrategy } from "../config/load-config.js";
import { TOKEN_FIELDS } from "../config/resolve-tokens.js";
import type { ParsedConfig } from "../config/schema.js";
import { type AllowedMints, type SignerLimitSettings, SPENDING_KINDS, type SpendingKind } from "./limits.js";

type LimitsConfig = ParsedConfig["signer"]["limits"];

/** Which kind each built-in strategy that names tokens spends through (its TOKEN_FIELDS: input, output). */
const KIND_OF_STRATEGY: Readonly<Record<string, SpendingKind>> = {
  dca: "createRecurring",
  "limit-orders": "createTrigger",
  sweep: "swap",
};

/** Whether some spending kind takes its allowed mints from the strategies (so their tokens must be resolved). */
export function needsStrategyMints(limits: LimitsConfig, strategies: readonly ConfiguredStrategy[]): boolean {
  return strategies.some((s) => {
    const kind = s.module ? undefined : KIND_OF_STRATEGY[s.name];
    return kind !== undefined && limits.allowedMints[kind] === undefined;
  });
}

/**
 * The signer's limits from its config: each spending kind allows the mints `allowedMints` lists for it,
 * or else the mints the config's strategies name for it (after symbols were resolved to mints), so a
 * config without limits keeps working and an intent for any other mint is refused.
 */
export function limitSettingsFrom(
  limits: LimitsConfig,
  strategies: readonly ConfiguredStrategy[],
): SignerLimitSettings {
  const named = mintsNamedByStrategies(strategies);
  const allowedMints = Object.fromEntries(
    SPENDING_KINDS.map((kind) => {
      const configured = limits.allowedMints[kind];
      const sides: AllowedMints = configured
        ? { input: new Set(configured.input), output: new Set(configured.output) }
        : named[kind];
      return [kind, sides];
    }),
  ) as Record<SpendingKind, AllowedMints>;
  const caps = (byMint: Record<string, string>) =>
    new Map(Object.entries(byMint).map(([mint, raw]) => [mint, BigInt(raw)] as const));
  return { allowedMints, perIntent: caps(limits.perIntent), perDay: caps(limits.perDay) };
}

function mintsNamedByStrategies(
  strategies: readonly ConfiguredStrategy[],
): Record<SpendingKind, { input: Set<string>; output: Set<string> }> {
  const named = Object.fromEntries(
    SPENDING_KINDS.map((kind) => [kind, { input: new Set<string>(), output: new Set<string>() }]),
  ) as Record<SpendingKind, { input: Set<string>; output: Set<string> }>;
  for (const entry of strategies) {
    // A user module's config is its own: only the built-in strategies' token fields are known.
    const kind = entry.module ? undefined : KIND_OF_STRATEGY[entry.name];
    const spec = TOKEN_FIELDS[entry.name];
    const items = spec ? (entry.config as Record<string, unknown>)[spec.list] : undefined;
    if (!kind || !spec || !Array.isArray(items)) continue;
    const [inputField, outputField] = spec.fields as [string, string];
    for (const item of items as Array<Record<string, unknown>>) {
      if (typeof item[inputField] === "string") named[kind].input.add(item[inputField] as string);
      if (typeof item[outputField] === "string") named[kind].output.add(item[outputField] as string);
    }
  }
  return named;
}
