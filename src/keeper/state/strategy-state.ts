import type { Redis } from "ioredis";
import type { StrategyState } from "../../core/strategy.js";
import type { RedisKeys } from "../names.js";

/** A wallet's strategy states as one poll loaded them: each state, and the JSON it was stored as. */
export interface LoadedStates {
  readonly states: Map<string, StrategyState>;
  /** The stored JSON per strategy (null: none stored), so that an unchanged state is not written back. */
  readonly stored: ReadonlyMap<string, string | null>;
}

/** Strategy state per wallet and strategy, as JSON in Redis, so it survives restarts and moves between replicas. */
export class StrategyStateStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  async load(wallet: string, strategy: string): Promise<StrategyState> {
    return parseState(await this.redis.get(this.keys.strategyState(wallet, strategy)));
  }

  /**
   * Every named strategy's state of one wallet in one read (MGET: a wallet's states share the state
   * concern's hash tag, so one slot on a cluster too). A poll reads them all, every poll.
   */
  async loadAll(wallet: string, strategies: readonly string[]): Promise<LoadedStates> {
    const states = new Map<string, StrategyState>();
    const stored = new Map<string, string | null>();
    if (strategies.length === 0) return { states, stored };
    const raws = await this.redis.mget(strategies.map((name) => this.keys.strategyState(wallet, name)));
    strategies.forEach((name, i) => {
      const raw = raws[i] ?? null;
      stored.set(name, raw);
      states.set(name, parseState(raw));
    });
    return { states, stored };
  }

  async save(wallet: string, strategy: string, state: StrategyState): Promise<void> {
    await this.redis.set(this.keys.strategyState(wallet, strategy), JSON.stringify(state));
  }

  /**
   * Writes the states that differ from what `loadAll` read, in one MSET; most polls change none, and
   * then nothing is written. A state a person changed since the load is overwritten only by a state
   * the strategy itself changed, as a save after the poll would have done anyway.
   */
  async saveChanged(
    wallet: string,
    states: Iterable<readonly [string, StrategyState]>,
    loaded: LoadedStates,
  ): Promise<number> {
    const changed: string[] = [];
    for (const [name, state] of states) {
      const json = JSON.stringify(state);
      if (loaded.stored.get(name) !== json) changed.push(this.keys.strategyState(wallet, name), json);
    }
    if (changed.length > 0) await this.redis.mset(...changed);
    return changed.length / 2;
  }
}

function parseState(raw: string | null): StrategyState {
  if (raw === null) return {};
  const parsed: unknown = JSON.parse(raw);
  return parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)
    ? (parsed as StrategyState)
    : {};
}
