import type { z } from "zod";
import type { Intent } from "./intent.js";
import type { Snapshot } from "./snapshot.js";
import type { StrategyHooks } from "./strategy-hooks.js";

/** Strategy state is JSON data, persisted per wallet and strategy between polls. */
export type StrategyState = Readonly<Record<string, unknown>>;

export interface StrategyInput<C> {
  readonly snapshot: Snapshot;
  readonly state: StrategyState;
  readonly config: C;
  readonly now: Date;
}

export interface StrategyResult {
  /** What the strategy wants done; each intent's key makes it happen at most once. */
  readonly intents: readonly Intent[];
  /** The state to hand back on the next poll of the same wallet. */
  readonly state: StrategyState;
  /** Things a person should hear of (a strategy has no logger): the engine logs and counts each. */
  readonly notices?: readonly StrategyNotice[];
}

/**
 * Something a strategy noticed and will not act on by itself (e.g. an order it cannot match). The
 * engine logs it at warn with the wallet and counts it in `keeper_strategy_notices_total{strategy,
 * notice}`. Report a thing once, when it is first seen (keep what was reported in state), not on
 * every poll.
 */
export interface StrategyNotice {
  /** A constant word of the strategy's own, snake_case (`dca_order_unmatched`): a metric label. */
  readonly code: string;
  readonly message: string;
}

/**
 * The strategy contract, version 1. `evaluate` is synchronous, pure and total: no I/O, no clock but
 * `now`, no randomness. The engine freezes its inputs, catches what it throws, validates what it
 * returns, and runs the other strategies regardless. The optional hooks (`StrategyHooks`) tell the
 * engine what to do for the strategy beyond calling `evaluate`.
 */
export interface Strategy<C = unknown> extends StrategyHooks<C> {
  readonly name: string;
  readonly contractVersion: 1;
  readonly description: string;
  readonly configSchema: z.ZodType<C>;
  evaluate(input: StrategyInput<C>): StrategyResult;
}

export function defineStrategy<C>(strategy: Strategy<C>): Strategy<C> {
  return strategy;
}
