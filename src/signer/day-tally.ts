import type { Redis } from "ioredis";

/** Two days: a day's tally outlives the day by one, for a late look, then Redis drops it. */
const TALLY_TTL_SECONDS = 2 * 86_400;

/** The UTC day of a moment, `YYYY-MM-DD`. */
export function utcDay(nowMs: number): string {
  return new Date(nowMs).toISOString().slice(0, 10);
}

/**
 * What the signer signed per input mint and UTC day, one entry per intent (an intent rebuilt and signed
 * again counts once). Kept in Redis, shared by every signer process, and in this process's memory: a
 * total is the union of both, so a Redis writer who deletes or lowers the tally cannot raise what this
 * process spends in a day. Amounts are raw units as decimal strings (Redis numbers are doubles).
 */
export class DayTally {
  private readonly memory = new Map<string, Map<string, bigint>>();

  constructor(
    private readonly redis: Redis,
    /** The signer's own key prefix, e.g. `keeper:signer:spent`. */
    private readonly keyPrefix: string,
  ) {}

  /** Each intent counted on `day` for `mint`, Redis and memory together. */
  async entries(day: string, mint: string): Promise<Map<string, bigint>> {
    const key = this.key(day, mint);
    const stored = await this.redis.hgetall(key);
    const all = new Map(this.memory.get(key));
    for (const [intentKey, amount] of Object.entries(stored)) {
      // An entry someone wrote that is not an amount counts for nothing; a larger one counts as is.
      if (!/^\d+$/.test(amount)) continue;
      const mine = all.get(intentKey);
      if (mine === undefined || BigInt(amount) > mine) all.set(intentKey, BigInt(amount));
    }
    return all;
  }

  /**
   * Counts `amount` for the intent unless it is counted already, and answers the day's total with it.
   * Two signers counting at the same moment both see each other's entry (each adds before it sums), so
   * together they never pass a cap; near it both may be refused. `remove` takes back an entry added here.
   */
  async add(day: string, mint: string, intentKey: string, amount: bigint): Promise<bigint> {
    const key = this.key(day, mint);
    await this.redis.multi().hsetnx(key, intentKey, amount.toString()).expire(key, TALLY_TTL_SECONDS).exec();
    let mine = this.memory.get(key);
    if (!mine) {
      mine = new Map();
      this.memory.set(key, mine);
      this.forgetDaysBefore(day);
    }
    if (!mine.has(intentKey)) mine.set(intentKey, amount);
    return sum(await this.entries(day, mint));
  }

  async remove(day: string, mint: string, intentKey: string): Promise<void> {
    const key = this.key(day, mint);
    this.memory.get(key)?.delete(intentKey);
    await this.redis.hdel(key, intentKey);
  }

  private key(day: string, mint: string): string {
    return `${this.keyPrefix}:${day}:${mint}`;
  }

  /** The process keeps today's tallies only (the keys start with the prefix and the day). */
  private forgetDaysBefore(day: string): void {
    const today = `${this.keyPrefix}:${day}:`;
    for (const key of this.memory.keys()) if (!key.startsWith(today)) this.memory.delete(key);
  }
}

export function sum(entries: ReadonlyMap<string, bigint>): bigint {
  let total = 0n;
  for (const amount of entries.values()) total += amount;
  return total;
}
