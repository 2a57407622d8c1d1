import type { Redis } from "ioredis";
import { redisScript } from "../../ops/redis-script.js";
import type { RedisKeys } from "../names.js";
import type { LedgerRow } from "../state/ledger.js";
import {
  BREAKERS,
  type BreakerName,
  type EvaluateProtectionsInput,
  evaluateProtections,
  horizonSeconds,
  type ProtectionsConfig,
  type ProtectionsEvaluation,
  type RecordedExit,
  realizedPnlMicroUsd,
  STOP_LOSS_RULES,
} from "./circuit-breakers.js";

export interface BreakerChange {
  readonly breaker: BreakerName;
  readonly isTripped: boolean;
  readonly detail: string;
}

// Atomically swaps the breaker's last seen state; returns the previous one ("" when never seen).
const SWAP_SEEN = `
local previous = redis.call('HGET', KEYS[1], ARGV[1]) or ''
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return previous
`;
const swapSeenScript = redisScript<unknown>("keeperProtectionsSwapSeen", 1, SWAP_SEEN);

/**
 * The circuit breakers' state in Redis: the confirmed closes they count and the manual resets. Every
 * role on every machine reads the same state; the decision itself is `evaluateProtections` (pure).
 */
export class Protections {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly config: ProtectionsConfig,
  ) {}

  /** Remembers a confirmed close: its realized pnl and whether a stop-loss rule asked for it. */
  async recordExit(row: LedgerRow, confirmedAtSeconds: number): Promise<void> {
    if (row.intent.kind !== "close") return;
    const exit: RecordedExit = {
      key: row.key,
      at: confirmedAtSeconds,
      pnlMicroUsd: realizedPnlMicroUsd(row.amountMicroUsd, row.intent.costBasisMicroUsd),
      isStopLoss: row.intent.exitRule !== undefined && STOP_LOSS_RULES.has(row.intent.exitRule),
    };
    // One member per intent key: a repeated confirmation replaces, never double-counts.
    const existing = await this.redis.zrange(this.keys.protectionsExits, "0", "-1");
    const tx = this.redis.multi();
    for (const member of existing)
      if ((JSON.parse(member) as RecordedExit).key === row.key) tx.zrem(this.keys.protectionsExits, member);
    tx.zadd(this.keys.protectionsExits, confirmedAtSeconds, JSON.stringify(exit));
    // What no breaker can need any more is dropped.
    tx.zremrangebyscore(
      this.keys.protectionsExits,
      "-inf",
      String(confirmedAtSeconds - 2 * horizonSeconds(this.config)),
    );
    await tx.exec();
  }

  async exits(nowSeconds: number): Promise<RecordedExit[]> {
    const members = await this.redis.zrangebyscore(
      this.keys.protectionsExits,
      String(nowSeconds - horizonSeconds(this.config)),
      "+inf",
    );
    return members.map((m) => JSON.parse(m) as RecordedExit);
  }

  async resets(): Promise<EvaluateProtectionsInput["resets"]> {
    const raw = await this.redis.hgetall(this.keys.protectionsResets);
    const out: Partial<Record<BreakerName, number>> = {};
    for (const name of BREAKERS) if (raw[name] !== undefined) out[name] = Number(raw[name]);
    return out;
  }

  /**
   * No breaker enabled and no close-all limit: nothing a poll does depends on the breakers, so a poll
   * reads none of their state (two commands a poll; the status page still reads it for its figures).
   */
  get isOff(): boolean {
    const { dailyLossLimitUsd, closeAllOnDailyLossUsd, stopLossPause } = this.config;
    return (
      dailyLossLimitUsd === undefined && closeAllOnDailyLossUsd === undefined && stopLossPause === undefined
    );
  }

  async evaluate(nowSeconds: number): Promise<ProtectionsEvaluation> {
    const [exits, resets] = await Promise.all([this.exits(nowSeconds), this.resets()]);
    return evaluateProtections({ config: this.config, exits, resets, nowSeconds });
  }

  /** Resets breakers by hand (all when none named): exits confirmed up to now stop counting. */
  async reset(nowSeconds: number, names: readonly BreakerName[] = BREAKERS): Promise<void> {
    if (names.length === 0) return;
    await this.redis.hset(
      this.keys.protectionsResets,
      Object.fromEntries(names.map((n) => [n, String(nowSeconds)])),
    );
  }

  /**
   * The breakers whose state changed since any process last looked: each change is reported to
   * exactly one caller, so one notification goes out per trip and per reset.
   */
  async changes(evaluation: ProtectionsEvaluation): Promise<BreakerChange[]> {
    const out: BreakerChange[] = [];
    for (const breaker of evaluation.breakers) {
      if (!breaker.isEnabled) continue;
      const state = breaker.isTripped ? "tripped" : "ok";
      const previous = (await swapSeenScript(this.redis, this.keys.protectionsSeen, breaker.name, state)) as
        | string
        | null;
      // A breaker never seen before is reported only when it starts out tripped.
      if (previous === state || (previous === "" && !breaker.isTripped)) continue;
      out.push({ breaker: breaker.name, isTripped: breaker.isTripped, detail: breaker.detail });
    }
    return out;
  }
}
