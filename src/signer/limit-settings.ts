import type { ConfiguredStrategy } from "../config/load-config.js";
import type { ParsedConfig } from "../config/schema.js";
import type { Spending } from "../core/strategy-hooks.js";
import { type AllowedMints, type SignerLimitSettings, SPENDING_KINDS, type SpendingKind } from "./limits.js";

type LimitsConfig = ParsedConfig["signer"]["limits"];

/**
 * What a strategy's intents spend, from its `spends` hook: built-in strategies only. A user module's
 * hook is code the signer must not run (a signer on its own never imports one), and a keeper running
 * every role must allow the same mints as one that does not: a user strategy's mints are listed in
 * `signer.limits.allowedMints`.
 */
function spendingOf(entry: ConfiguredStrategy): readonly Spending[] {
  return entry.module || !entry.strategy.spends ? [] : entry.strategy.spends(entry.config);
}

/** Whether some spending kind takes its allowed mints from the strategies (so their tokens must be resolved). */
export function needsStrategyMints(limits: LimitsConfig, strategies: readonly ConfiguredStrategy[]): boolean {
  return strategies.some((s) => spendingOf(s).some(({ kind }) => limits.allowedMints[kind] === undefined));
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
  for (const entry of strategies)
    for (const { kind, input, output } of spendingOf(entry)) {
      named[kind].input.add(input);
      named[kind].output.add(output);
    }
  return named;
}
