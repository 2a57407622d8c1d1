import type { Redis } from "ioredis";
import { redisScript } from "../ops/redis-script.js";

/**
 * One record per intent key: the transaction attempt in flight or last finished. Signatures and
 * signed transactions are public once sent; key material is never written here.
 *
 *  sent ──▶ confirmed | failed | expired       refused (nothing signed)
 *  expired / failed / refused ──▶ sent (the next attempt, bounded by the caller)
 *  expired / failed / refused ──▶ no record (`keeper retry`: the next try starts at attempt 1)
 */
export type AttemptStatus = "sent" | "confirmed" | "failed" | "expired" | "refused";

export interface AttemptRecord {
  intentKey: string;
  /** 1 for the first transaction of the intent, +1 for each rebuilt one. */
  attempt: number;
  status: AttemptStatus;
  signature?: string;
  lastValidBlockHeight?: number;
  recentBlockhash?: string;
  /** The signed wire bytes (base64), so a resumed run rebroadcasts the very same transaction. */
  signedTransaction?: string;
  slot?: number;
  reason?: string;
  error?: string;
  createdAt: number;
  updatedAt: number;
}

export interface SignedAttempt {
  attempt: number;
  signature: string;
  lastValidBlockHeight: number;
  recentBlockhash: string;
  signedTransaction: string;
}

export interface AttemptFinish {
  status: Exclude<AttemptStatus, "sent">;
  slot?: number;
  reason?: string;
  error?: string;
}

export interface AttemptStore {
  get(intentKey: string): Promise<AttemptRecord | undefined>;
  /**
   * Records a signed transaction before its first send. Atomic: it succeeds only when the record
   * still shows the previous attempt (`attempt - 1`) finished, so two runs cannot both send one.
   */
  recordSigned(intentKey: string, signed: SignedAttempt): Promise<boolean>;
  /**
   * Records a refusal of attempt `attempt` (nothing was signed). Atomic, and only over a record that
   * holds nothing worth more: never over an attempt in flight or confirmed, nor over another run's
   * finished attempt of the same or a later number. Returns whether it was recorded.
   */
  recordRefused(intentKey: string, attempt: number, reason: string, detail: string): Promise<boolean>;
  /** Records the outcome of the attempt whose signature is `signature`. */
  finish(intentKey: string, signature: string, finish: AttemptFinish): Promise<void>;
}

// Claim attempt N: only if there is no record (N = 1) or the record is attempt N-1 and not in flight.
const RECORD_SIGNED = `
local attempt = tonumber(redis.call('HGET', KEYS[1], 'attempt') or '0')
local status = redis.call('HGET', KEYS[1], 'status')
if attempt ~= tonumber(ARGV[1]) - 1 then return 0 end
if status == 'sent' or status == 'confirmed' then return 0 end
redis.call('HDEL', KEYS[1], 'slot', 'reason', 'error')
redis.call('HSET', KEYS[1], 'intentKey', ARGV[7], 'attempt', ARGV[1], 'status', 'sent', 'signature', ARGV[2],
  'lastValidBlockHeight', ARGV[3], 'recentBlockhash', ARGV[4], 'signedTransaction', ARGV[5], 'updatedAt', ARGV[6])
redis.call('HSETNX', KEYS[1], 'createdAt', ARGV[6])
return 1
`;
const recordSignedScript = redisScript<unknown>("keeperAttemptRecordSigned", 1, RECORD_SIGNED);

// A refusal of attempt N: a stalled run refused late must not wipe the winner's signature. Only over
// no record, a finished attempt before N, or a refusal of N itself.
const RECORD_REFUSED = `
local status = redis.call('HGET', KEYS[1], 'status')
local attempt = tonumber(redis.call('HGET', KEYS[1], 'attempt') or '0')
local ours = tonumber(ARGV[1])
if status == 'sent' or status == 'confirmed' then return 0 end
if attempt > ours or (status and attempt == ours and status ~= 'refused') then return 0 end
redis.call('HDEL', KEYS[1], 'signature', 'signedTransaction', 'lastValidBlockHeight', 'recentBlockhash', 'slot')
redis.call('HSET', KEYS[1], 'intentKey', ARGV[5], 'attempt', ARGV[1], 'status', 'refused', 'reason', ARGV[2],
  'error', ARGV[3], 'updatedAt', ARGV[4])
redis.call('HSETNX', KEYS[1], 'createdAt', ARGV[4])
return 1
`;
const recordRefusedScript = redisScript<unknown>("keeperAttemptRecordRefused", 1, RECORD_REFUSED);

// A person's retry: drop a finished attempt record, never one in flight or confirmed.
const CLEAR_FINISHED = `
local status = redis.call('HGET', KEYS[1], 'status')
if status == 'sent' or status == 'confirmed' then return status end
redis.call('DEL', KEYS[1])
return status or ''
`;
const clearFinishedScript = redisScript<unknown>("keeperAttemptClearFinished", 1, CLEAR_FINISHED);

// Finish only the attempt we sent: a late writer of an older attempt must not overwrite a newer one.
const FINISH = `
if redis.call('HGET', KEYS[1], 'signature') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'status', ARGV[2], 'updatedAt', ARGV[3])
for i = 4, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
return 1
`;
const finishScript = redisScript<unknown>("keeperAttemptFinish", 1, FINISH);

/** The intent's attempt in flight (recorded, sent, not finished), if any. */
export async function sentAttemptOf(
  attempts: Pick<AttemptStore, "get">,
  intentKey: string,
): Promise<AttemptRecord | undefined> {
  const record = await attempts.get(intentKey);
  return record?.status === "sent" ? record : undefined;
}

export class RedisAttemptStore implements AttemptStore {
  constructor(
    private readonly redis: Redis,
    /** Key prefix, e.g. `keeper:` (tests use one of their own). */
    private readonly prefix: string,
    private readonly now: () => number = Date.now,
  ) {}

  private key(intentKey: string): string {
    return `${this.prefix}attempt:${intentKey}`;
  }

  async get(intentKey: string): Promise<AttemptRecord | undefined> {
    const h = await this.redis.hgetall(this.key(intentKey));
    if (!h.status) return undefined;
    const record: AttemptRecord = {
      intentKey,
      attempt: Number(h.attempt ?? 0),
      status: h.status as AttemptStatus,
      createdAt: Number(h.createdAt ?? 0),
      updatedAt: Number(h.updatedAt ?? 0),
    };
    if (h.signature) record.signature = h.signature;
    if (h.lastValidBlockHeight) record.lastValidBlockHeight = Number(h.lastValidBlockHeight);
    if (h.recentBlockhash) record.recentBlockhash = h.recentBlockhash;
    if (h.signedTransaction) record.signedTransaction = h.signedTransaction;
    if (h.slot) record.slot = Number(h.slot);
    if (h.reason) record.reason = h.reason;
    if (h.error) record.error = h.error;
    return record;
  }

  async recordSigned(intentKey: string, signed: SignedAttempt): Promise<boolean> {
    const result = await recordSignedScript(
      this.redis,
      this.key(intentKey),
      signed.attempt,
      signed.signature,
      signed.lastValidBlockHeight,
      signed.recentBlockhash,
      signed.signedTransaction,
      this.now(),
      intentKey,
    );
    return result === 1;
  }

  async recordRefused(intentKey: string, attempt: number, reason: string, detail: string): Promise<boolean> {
    const result = await recordRefusedScript(
      this.redis,
      this.key(intentKey),
      attempt,
      reason,
      detail,
      this.now(),
      intentKey,
    );
    return result === 1;
  }

  /**
   * For `keeper retry`: forgets a finished attempt (refused, failed or expired) so the intent's next
   * try starts with the whole bound of attempts again. The bound is there to stop Keeper from looping
   * on its own; a person who looked and retries asks for a fresh start. Forgetting it cannot let
   * anything land twice: the record stops a second transaction only while one is in flight (`sent`)
   * or done (`confirmed`), and those are kept, their status returned (resumed, or done). A
   * refused attempt signed nothing; a failed one landed with an error and an expired one's blockhash
   * passed unseen, so neither can land any more.
   */
  async clearFinished(intentKey: string): Promise<{ cleared: boolean; status?: AttemptStatus }> {
    const status = (await clearFinishedScript(this.redis, this.key(intentKey))) as string;
    if (status === "sent" || status === "confirmed") return { cleared: false, status };
    return status === "" ? { cleared: false } : { cleared: true, status: status as AttemptStatus };
  }

  async finish(intentKey: string, signature: string, finish: AttemptFinish): Promise<void> {
    const extra: (string | number)[] = [];
    if (finish.slot !== undefined) extra.push("slot", finish.slot);
    if (finish.reason !== undefined) extra.push("reason", finish.reason);
    if (finish.error !== undefined) extra.push("error", finish.error);
    await finishScript(this.redis, this.key(intentKey), signature, finish.status, this.now(), ...extra);
  }
}
