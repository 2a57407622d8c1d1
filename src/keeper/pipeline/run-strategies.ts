import type { Logger } from "pino";
import type { ConfiguredStrategy } from "../../config/load-config.js";
import { type Intent, intentSchema } from "../../core/intent.js";
import type { Snapshot } from "../../core/snapshot.js";
import type { StrategyNotice, StrategyState } from "../../core/strategy.js";

export interface StrategyRunReport {
  intents: Intent[];
  /** New state per strategy that ran cleanly; strategies that failed keep their old state. */
  states: Map<string, StrategyState>;
  errors: Array<{ strategy: string; error: string }>;
  /** What the strategies that ran cleanly reported, each logged already. */
  notices: Array<StrategyNotice & { strategy: string }>;
}

export interface RunStrategiesInput {
  snapshot: Snapshot;
  strategies: readonly ConfiguredStrategy[];
  states: ReadonlyMap<string, StrategyState>;
  now: Date;
  logger: Logger;
  onStrategyError?: (strategy: string) => void;
  /** A notice a strategy reported (logged already), for the metric. */
  onStrategyNotice?: (strategy: string, code: string) => void;
}

/**
 * Calls each strategy with frozen copies of its inputs, catches what it throws, and checks what it
 * returns: intents must match the intent schema and belong to the snapshot's wallet and to the
 * strategy that produced them. One strategy's failure never stops the others.
 */
export function runStrategies(input: RunStrategiesInput): StrategyRunReport {
  const report: StrategyRunReport = { intents: [], states: new Map(), errors: [], notices: [] };
  const seenKeys = new Set<string>();
  // One frozen copy serves every strategy: none can change it, so none sees another's hand in it.
  const snapshot = frozenCopy(input.snapshot);
  for (const { name, strategy, config } of input.strategies) {
    try {
      const result = strategy.evaluate({
        snapshot,
        state: frozenCopy(input.states.get(name) ?? {}),
        config: frozenCopyOf(config),
        now: new Date(input.now.getTime()),
      });
      const intents = checkIntents(result?.intents, name, input.snapshot.wallet);
      const state = checkState(result?.state);
      const notices = checkNotices(result?.notices);
      for (const intent of intents) {
        if (seenKeys.has(intent.key)) continue; // two strategies asking for the same effect: once is enough
        seenKeys.add(intent.key);
        report.intents.push(intent);
      }
      report.states.set(name, state);
      for (const { code, message } of notices) {
        input.logger.warn(
          { strategy: name, wallet: input.snapshot.wallet, notice: code, message },
          "strategy notice",
        );
        report.notices.push({ strategy: name, code, message });
        input.onStrategyNotice?.(name, code);
      }
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      report.errors.push({ strategy: name, error: message });
      input.logger.error({ strategy: name, wallet: input.snapshot.wallet, err: message }, "strategy failed");
      input.onStrategyError?.(name);
    }
  }
  return report;
}

function checkIntents(value: unknown, strategy: string, wallet: string): Intent[] {
  if (!Array.isArray(value)) throw new TypeError("evaluate() must return { intents: Intent[], state }");
  return value.map((candidate, index) => {
    const parsed = intentSchema.safeParse(candidate);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new TypeError(
        `intents[${index}].${issue?.path.join(".") ?? ""}: ${issue?.message ?? "invalid intent"}`,
      );
    }
    if (parsed.data.wallet !== wallet)
      throw new TypeError(`intents[${index}].wallet: not the snapshot's wallet`);
    if (parsed.data.strategy !== strategy)
      throw new TypeError(
        `intents[${index}].strategy: expected "${strategy}", got "${parsed.data.strategy}"`,
      );
    return parsed.data;
  });
}

/** A notice's code is a metric label: a short snake_case word, so its values stay few. */
const NOTICE_CODE = /^[a-z][a-z0-9_]{0,47}$/;

function checkNotices(value: unknown): StrategyNotice[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new TypeError("evaluate() notices must be a list of { code, message }");
  return value.map((candidate: unknown, index) => {
    const { code, message } = (candidate ?? {}) as Partial<StrategyNotice>;
    if (typeof code !== "string" || !NOTICE_CODE.test(code))
      throw new TypeError(`notices[${index}].code: expected a snake_case word of at most 48 characters`);
    if (typeof message !== "string" || message.length > 1000)
      throw new TypeError(`notices[${index}].message: expected text of at most 1000 characters`);
    return { code, message };
  });
}

function checkState(value: unknown): StrategyState {
  if (value === undefined) return {};
  if (value === null || typeof value !== "object" || Array.isArray(value))
    throw new TypeError("evaluate() must return a state object");
  // Round-trip through JSON now, so a state that cannot be stored fails here and not in Redis.
  return JSON.parse(JSON.stringify(value)) as StrategyState;
}

/** Each strategy config's frozen copy, made once: a loaded config does not change while it runs. */
const frozenConfigs = new WeakMap<object, unknown>();

function frozenCopyOf<T>(config: T): T {
  if (config === null || typeof config !== "object") return config;
  const known = frozenConfigs.get(config);
  if (known !== undefined) return known as T;
  const copy = deepFreeze(structuredClone(config));
  frozenConfigs.set(config, copy);
  return copy;
}

/**
 * A frozen copy of data read from JSON (plain objects, arrays, primitives), made in one walk: a poll's
 * snapshot is a few hundred objects, and structuredClone then a second walk to freeze cost several
 * times this on every poll of a sweep. Anything else (a Date, a Map) is cloned by structuredClone.
 */
export function frozenCopy<T>(value: T): T {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return Object.freeze(value.map(frozenCopy)) as T;
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return deepFreeze(structuredClone(value));
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const child = frozenCopy((value as Record<string, unknown>)[key]);
    // JSON.parse makes "__proto__" an own key; assigned, it would set the copy's prototype instead.
    if (key === "__proto__") Object.defineProperty(copy, key, { value: child, enumerable: true });
    else copy[key] = child;
  }
  return Object.freeze(copy) as T;
}

/** Frozen in place, all the way down: a strategy's hooks get frozen copies, as `evaluate` does. */
export function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
