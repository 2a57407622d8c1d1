import type { Redis } from "ioredis";
import { redisScript } from "../../ops/redis-script.js";
import type { RedisKeys } from "../names.js";

/**
 * The fleet's value over time, for the status page's chart, kept by the polls that already read the
 * positions (the page asks the service nothing). Each poll writes its wallet's value; the fleet total
 * moves by the difference, atomically, and the current time bucket's sample takes the new total. So
 * the series costs O(1) a poll, whatever the fleet's size, and at most SAMPLE_CAP entries.
 *
 * A wallet taken out of the config keeps its last value in the total until `forget` (the next start
 * of the keeper drops wallets it does not run).
 */

/** One sample a bucket: the last total written in it wins. */
export const SAMPLE_BUCKET_SECONDS = 600;
/** Seven days of ten-minute samples. */
export const SAMPLE_CAP = 1_008;

export interface ValueSample {
  /** Unix seconds: the start of the sample's bucket. */
  at: number;
  valueMicroUsd: bigint;
}

// KEYS: wallets hash, total, samples list (newest first). ARGV: wallet, value, bucket, cap.
// Amounts stay strings: Redis adds them as 64-bit integers, where a Lua number would round past 2^53.
const RECORD = `
local old = redis.call('HGET', KEYS[1], ARGV[1]) or '0'
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('INCRBY', KEYS[2], ARGV[2])
redis.call('DECRBY', KEYS[2], old)
local total = redis.call('GET', KEYS[2])
local entry = ARGV[3] .. ':' .. total
local head = redis.call('LINDEX', KEYS[3], 0)
if head and string.sub(head, 1, string.len(ARGV[3]) + 1) == ARGV[3] .. ':' then
  redis.call('LSET', KEYS[3], 0, entry)
else
  redis.call('LPUSH', KEYS[3], entry)
  redis.call('LTRIM', KEYS[3], 0, tonumber(ARGV[4]) - 1)
end
return total
`;
const recordScript = redisScript<unknown>("keeperValueRecord", 3, RECORD);

// KEYS: wallets hash, total. ARGV: wallets to keep. Drops the others' values from the total.
const FORGET = `
local keep = {}
for _, w in ipairs(ARGV) do keep[w] = true end
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  if not keep[all[i]] then
    redis.call('DECRBY', KEYS[2], all[i + 1])
    redis.call('HDEL', KEYS[1], all[i])
  end
end
return 0
`;
const forgetScript = redisScript<unknown>("keeperValueForget", 2, FORGET);

export class ValueSeries {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  /** Records a wallet's value as a poll saw it; returns the fleet total now. */
  async record(wallet: string, valueMicroUsd: bigint, atSeconds: number): Promise<bigint> {
    const bucket = atSeconds - (atSeconds % SAMPLE_BUCKET_SECONDS);
    const total = await recordScript(
      this.redis,
      this.keys.valueWallets,
      this.keys.valueTotal,
      this.keys.valueSamples,
      wallet,
      valueMicroUsd.toString(),
      String(bucket),
      String(SAMPLE_CAP),
    );
    return BigInt(total as string);
  }

  /** Drops wallets no longer run from the total (their samples so far stay as they were). */
  async forget(keepWallets: readonly string[]): Promise<void> {
    await forgetScript(this.redis, this.keys.valueWallets, this.keys.valueTotal, ...keepWallets);
  }

  /** The samples, oldest first. */
  async samples(): Promise<ValueSample[]> {
    const entries = await this.redis.lrange(this.keys.valueSamples, 0, SAMPLE_CAP - 1);
    return entries
      .map((entry) => {
        const [at, value] = entry.split(":");
        return { at: Number(at), valueMicroUsd: BigInt(value ?? "0") };
      })
      .reverse();
  }
}
