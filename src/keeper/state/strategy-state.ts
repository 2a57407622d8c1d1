import type { Redis } from "ioredis";
import type { StrategyState } from "../../core/strategy.js";
import type { RedisKeys } from "../names.js";

/** Strategy state per wallet and strategy, as JSON in Redis, so it survives restarts and moves between replicas. */
export class StrategyStateStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  async load(wallet: string, strategy: string): Promise<StrategyState> {
    const raw = await this.redis.get(this.keys.strategyState(wallet, strategy));
    if (raw === null) return {};
    const parsed: unknown = JSON.parse(raw);
    return parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)
      ? (parsed as StrategyState)
      : {};
  }

  async save(wallet: string, strategy: string, state: StrategyState): Promise<void> {
    await this.redis.set(this.keys.strategyState(wallet, strategy), JSON.stringify(state));
  }
}
