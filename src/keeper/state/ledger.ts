import { randomBytes } from "node:crypto";
import type { Redis } from "ioredis";
import type { Intent, IntentKind } from "../../core/intent.js";
import { redisScript } from "../../ops/redis-script.js";
import type { RedisKeys } from "../names.js";

/**
 * The ledger: one record per intent key, in Redis. It is what makes effects happen once across
 * retries, restarts and replicas (a BullMQ job id only deduplicates while the job exists).
 *
 * Lifecycle: pending -> built -> sending -> confirmed | failed | refused, with expired -> built again
 * (a fresh transaction, bounded) and dry-run as a terminal record. `building` is no longer written
 * (a build's record moved from pending or expired straight to built saves a Redis call a claim);
 * a record an older Keeper left in it is re-enqueued like a pending one.
 * A failed intent is admitted again by a later poll (bounded by maxTries); a refused one only by a
 * person, `keeper retry` (as is a failed one at once), both as a new try: refused | failed -> pending.
 * A close-all does the same for a close of a position still listed open (deferred ones too).
 * `deferred` is "not yet" (a claim before its market is settled): nothing was built, and the key is
 * admitted again after retryAfterSeconds without counting against maxTries.
 * `settled` ends a claim that needs no transaction: the service answered that no claim is required
 * (or the position settles by itself, as Forecast's do) or that it is already claimed. `left_to_service` records a claim not made
 * because its payout was not worth the fee: the service's own free claim pays it. Both are done, not
 * failures: nothing was built, nothing is retried.
 * Each record gets an id of its own at admission (`recordId`), which its job ids carry: a record lost
 * from Redis (a restart without data, a failover) and admitted again does not take the ids of the lost
 * one's jobs, which the queues (on other masters of a cluster) may still hold.
 */
export const IN_FLIGHT_STATUSES = ["pending", "building", "built", "sending", "expired"] as const;
export const TERMINAL_STATUSES = [
  "confirmed",
  "failed",
  "refused",
  "dry-run",
  "deferred",
  "settled",
  "left_to_service",
] as const;
/** Terminal statuses that mean the intent's business is over without a transaction of Keeper's. */
export const DONE_WITHOUT_TRANSACTION: readonly LedgerStatus[] = ["settled", "left_to_service"];
export type LedgerStatus = (typeof IN_FLIGHT_STATUSES)[number] | (typeof TERMINAL_STATUSES)[number];
export const LEDGER_STATUSES: readonly LedgerStatus[] = [...IN_FLIGHT_STATUSES, ...TERMINAL_STATUSES];

export interface LedgerRow {
  key: string;
  kind: IntentKind;
  wallet: string;
  strategy: string;
  status: LedgerStatus;
  reason?: string;
  intent: Intent;
  /** How many times the intent was (re)admitted after a failure. */
  tries: number;
  /** How many transactions were built for the current try. */
  builds: number;
  /** The record's own id, written at its admission (none on a record an older Keeper admitted). */
  recordId?: string;
  signature?: string;
  slot?: number;
  lastValidBlockHeight?: number;
  requestId?: string;
  error?: string;
  amountMicroUsd?: string;
  /** The fee the service estimated for the build (a sell's protocol and venue fees), micro-USD. */
  feeMicroUsd?: string;
  /** The least the current build's transaction may bring in, raw units (see BuiltTransaction). */
  minInflowRaw?: string;
  /** A swap build's quote (stored as JSON; the signer trusts none of it, see src/core/swap-quote.ts). */
  swapQuote?: unknown;
  /** The unsigned transaction of the current build (base64): public data, kept for the signer. */
  transaction?: string;
  /** The order account a create built (the service has no list endpoint for them). */
  order?: string;
  /** The build's execution route (JSON, null when it named none): untrusted, read by the signer. */
  execution?: unknown;
  createdAt: number;
  updatedAt: number;
  confirmedAt?: number;
}

/** The status an admitted intent starts in. */
export type AdmitStatus = "pending" | "dry-run" | "left_to_service";

export interface AdmitResult {
  admitted: boolean;
  /** Status that blocked admission, when not admitted. */
  status?: LedgerStatus;
  /** The wallet that recorded the key, when not admitted (another wallet's: see notAdmittedReason). */
  owner?: string;
  tries?: number;
  /** The admitted record's own id (see LedgerRow.recordId), when it has one. */
  recordId?: string;
}

/**
 * Why an intent was not admitted, as a log field and metric label: its key is in flight, done
 * (confirmed, or recorded in dry-run), failed and not due for another try, refused by the signer,
 * or held by another wallet (a key that does not name its wallet: see strategies/README.md).
 */
export type NotAdmittedReason = "in_flight" | "done" | "failed" | "refused" | "deferred" | "other_wallet";

export function notAdmittedReason(
  status: LedgerStatus | undefined,
  isOtherWallet: boolean,
): NotAdmittedReason {
  if (isOtherWallet) return "other_wallet";
  if (status === "confirmed" || status === "dry-run" || status === "settled" || status === "left_to_service")
    return "done";
  if (status === "failed" || status === "refused" || status === "deferred") return status;
  return "in_flight";
}

export interface LedgerOptions {
  /** A failed intent may be admitted again this many times in all. */
  maxTries: number;
  /** ...and not before this many seconds after it failed. */
  retryAfterSeconds: number;
}

// Atomic admission: a key in flight or done is refused; a failed one is re-admitted, bounded. A refusal
// answers the status and the wallet that recorded the key (so no second read tells whose it is).
const ADMIT = `
local status = redis.call('HGET', KEYS[1], 'status')
local now = tonumber(ARGV[2])
if status then
  -- This very admission run again (ioredis resends a command whose reply a dropped connection lost):
  -- the record names the admission that last wrote it (ARGV[11], unique a call), and it still stands.
  if redis.call('HGET', KEYS[1], 'admission') == ARGV[11] and status == ARGV[7] then
    return {1, redis.call('HGET', KEYS[1], 'tries') or '1', redis.call('HGET', KEYS[1], 'recordId') or ''}
  end
  local function refused() return {0, status, redis.call('HGET', KEYS[1], 'wallet') or ''} end
  if status ~= 'failed' and status ~= 'deferred' then return refused() end
  local tries = tonumber(redis.call('HGET', KEYS[1], 'tries') or '1')
  local deferrals = tonumber(redis.call('HGET', KEYS[1], 'deferrals') or '0')
  local updated = tonumber(redis.call('HGET', KEYS[1], 'updatedAt') or '0')
  if now < updated + tonumber(ARGV[6]) then return refused() end
  if status == 'failed' and tries - deferrals >= tonumber(ARGV[5]) then return refused() end
  redis.call('HSET', KEYS[1], 'status', ARGV[7], 'tries', tries + 1, 'builds', 0, 'updatedAt', now,
    'intent', ARGV[3], 'reason', ARGV[4], 'admission', ARGV[11])
  redis.call('HDEL', KEYS[1], 'signature', 'slot', 'lastValidBlockHeight', 'requestId', 'error', 'transaction', 'minInflowRaw', 'swapQuote', 'execution')
  if ARGV[7] == 'pending' then redis.call('SADD', KEYS[3], ARGV[1]) end
  return {1, tostring(tries + 1), redis.call('HGET', KEYS[1], 'recordId') or ''}
end
redis.call('HSET', KEYS[1], 'key', ARGV[1], 'status', ARGV[7], 'tries', 1, 'builds', 0, 'createdAt', now,
  'updatedAt', now, 'intent', ARGV[3], 'reason', ARGV[4], 'kind', ARGV[8], 'wallet', ARGV[9], 'strategy', ARGV[10],
  'recordId', ARGV[11], 'admission', ARGV[11])
redis.call('ZADD', KEYS[2], now, ARGV[1])
if ARGV[7] == 'pending' then redis.call('SADD', KEYS[3], ARGV[1]) end
return {1, '1', ARGV[11]}
`;

// A person's retry (or a close-all's): only a refused, failed or deferred intent, unbounded by maxTries
// (a person decided), as a new try (its job ids differ from the last try's, which BullMQ may still hold).
const READMIT = `
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return {0, ''} end
if status ~= 'refused' and status ~= 'failed' and status ~= 'deferred' then return {0, status} end
local tries = tonumber(redis.call('HGET', KEYS[1], 'tries') or '1')
redis.call('HSET', KEYS[1], 'status', 'pending', 'tries', tries + 1, 'builds', 0, 'updatedAt', ARGV[2],
  'reason', ARGV[3])
redis.call('HDEL', KEYS[1], 'signature', 'slot', 'lastValidBlockHeight', 'requestId', 'error', 'transaction', 'minInflowRaw', 'swapQuote', 'execution')
redis.call('SADD', KEYS[2], ARGV[1])
return {1, tostring(tries + 1), redis.call('HGET', KEYS[1], 'recordId') or ''}
`;

// A move along of a record that exists (a record gone, say with a Redis that lost its data, is not
// written back in part). KEYS: the record, the wallet's in-flight set. ARGV: '1' when the status is
// terminal (the key leaves the set), the intent key, a count field to add one to ('' for none), then
// field, value pairs.
const UPDATE = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 4))
if ARGV[3] ~= '' then redis.call('HINCRBY', KEYS[1], ARGV[3], 1) end
if ARGV[1] == '1' then redis.call('SREM', KEYS[2], ARGV[2]) end
return 1
`;

const admitScript = redisScript<[number, string, string?]>("keeperLedgerAdmit", 3, ADMIT);
const readmitScript = redisScript<[number, string, string?]>("keeperLedgerReadmit", 2, READMIT);
const updateScript = redisScript<number>("keeperLedgerUpdate", 2, UPDATE);

/** What never changes in a record once written: the wallet and the kind its key was admitted for. */
type Identity = Pick<LedgerRow, "wallet" | "kind">;

/** Identities kept in memory, so a move along needs no read of the record; the oldest go first. */
const IDENTITIES_KEPT = 10_000;

type Fields = Partial<
  Omit<LedgerRow, "key" | "intent" | "kind" | "wallet" | "strategy" | "createdAt" | "recordId">
>;

export class Ledger {
  readonly #identities = new Map<string, Identity>();

  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly options: LedgerOptions = { maxTries: 3, retryAfterSeconds: 60 },
    private readonly nowSeconds: () => number = () => Math.floor(Date.now() / 1000),
  ) {}

  /**
   * Records a new intent unless its key is in flight or done. `dry-run` and `left_to_service` record
   * it as done (nothing is to be built).
   */
  async admit(intent: Intent, status: AdmitStatus = "pending"): Promise<AdmitResult> {
    return this.#admitted(intent, await admitScript(this.redis, ...this.#admitArgs(intent, status)));
  }

  /**
   * Admits several intents (a resolution's claims from the index) in one round trip, each as `admit`
   * would, answers in order. Each admission is a script of its own: one that Redis failed (out of
   * memory halfway through the batch, a key of the wrong type) answers its error in its place, and
   * the others stand, admitted or not.
   */
  async admitMany(
    items: readonly { intent: Intent; status: AdmitStatus }[],
  ): Promise<Array<AdmitResult | Error>> {
    if (items.length === 0) return [];
    const answers = await admitScript.many(
      this.redis,
      items.map(({ intent, status }) => this.#admitArgs(intent, status)),
    );
    return answers.map((answer, i) =>
      answer instanceof Error ? answer : this.#admitted((items[i] as { intent: Intent }).intent, answer),
    );
  }

  #admitArgs(intent: Intent, status: AdmitStatus): string[] {
    return [
      this.keys.ledgerIntent(intent.key),
      this.keys.ledgerIndex,
      this.keys.ledgerInFlight(intent.wallet),
      intent.key,
      String(this.nowSeconds()),
      JSON.stringify(intent),
      intent.reason ?? "",
      String(this.options.maxTries),
      String(this.options.retryAfterSeconds),
      status,
      intent.kind,
      intent.wallet,
      intent.strategy,
      // This admission's own id: the id of a record it creates, and how a replay of it is recognised.
      randomBytes(6).toString("hex"),
    ];
  }

  #admitted(intent: Intent, result: [number, string, string?]): AdmitResult {
    if (result[0] !== 1)
      return {
        admitted: false,
        status: result[1] as LedgerStatus,
        ...(result[2] ? { owner: result[2] } : {}),
      };
    // A first record holds the intent's own wallet and kind; a record admitted again keeps its first.
    if (result[1] === "1") this.#remember(intent.key, intent);
    return { admitted: true, tries: Number(result[1]), ...(result[2] ? { recordId: result[2] } : {}) };
  }

  /**
   * `keeper retry` and a close-all: admits a refused, failed or deferred intent again as a new try
   * (status pending, no build yet), whatever its tries. Anything else is left as it is and its status
   * returned.
   */
  async readmit(row: LedgerRow): Promise<AdmitResult> {
    const result = await readmitScript(
      this.redis,
      this.keys.ledgerIntent(row.key),
      this.keys.ledgerInFlight(row.wallet),
      row.key,
      String(this.nowSeconds()),
      row.intent.reason ?? "",
    );
    if (result[0] === 1)
      return { admitted: true, tries: Number(result[1]), ...(result[2] ? { recordId: result[2] } : {}) };
    return result[1] === "" ? { admitted: false } : { admitted: false, status: result[1] as LedgerStatus };
  }

  /**
   * Moves a record along; terminal statuses leave the wallet's in-flight set. One script, without
   * reading the record first when its identity is known (a claim moves along six times).
   */
  async update(key: string, fields: Fields): Promise<void> {
    return this.#move(key, fields, "");
  }

  /** update, adding one to the count field `counted` ('' for none) in the same script. */
  async #move(key: string, fields: Fields, counted: "deferrals" | ""): Promise<void> {
    const identity = this.#identities.get(key) ?? (await this.get(key));
    if (!identity) throw new Error(`ledger: no intent ${key}`);
    const now = this.nowSeconds();
    const flat: Record<string, string> = { updatedAt: String(now) };
    for (const [name, value] of Object.entries(fields))
      if (value !== undefined) flat[name] = typeof value === "object" ? JSON.stringify(value) : String(value);
    if (fields.status === "confirmed") flat.confirmedAt = String(now);
    const isTerminal =
      fields.status !== undefined && (TERMINAL_STATUSES as readonly string[]).includes(fields.status);
    if (
      fields.status === "confirmed" &&
      (identity.kind === "createTrigger" || identity.kind === "cancelTrigger")
    )
      return this.#confirmTriggerOrder(key, flat, fields);
    const written = await updateScript(
      this.redis,
      this.keys.ledgerIntent(key),
      this.keys.ledgerInFlight(identity.wallet),
      isTerminal ? "1" : "",
      key,
      counted,
      ...Object.entries(flat).flat(),
    );
    if (written !== 1) {
      this.#identities.delete(key);
      throw new Error(`ledger: no intent ${key}`);
    }
  }

  /** A trigger order's create or cancel confirmed: the record, and the wallet's open orders with it. */
  async #confirmTriggerOrder(key: string, flat: Record<string, string>, fields: Fields): Promise<void> {
    const row = await this.get(key);
    if (!row) throw new Error(`ledger: no intent ${key}`);
    const tx = this.redis
      .multi()
      .hset(this.keys.ledgerIntent(key), flat)
      .srem(this.keys.ledgerInFlight(row.wallet), key);
    // Trigger orders the service cannot list: a confirmed create opens one, a confirmed cancel ends it.
    const order = fields.order ?? row.order;
    if (row.kind === "createTrigger" && order) tx.hset(this.keys.ledgerTriggerOrders(row.wallet), key, order);
    if (row.intent.kind === "cancelTrigger") {
      const open = await this.redis.hgetall(this.keys.ledgerTriggerOrders(row.wallet));
      for (const [createKey, value] of Object.entries(open))
        if (value === row.intent.order) tx.hdel(this.keys.ledgerTriggerOrders(row.wallet), createKey);
    }
    await tx.exec();
  }

  /** Trigger orders created and confirmed for the wallet, without a confirmed cancel. */
  async triggerOrders(wallet: string): Promise<Array<{ key: string; order: string }>> {
    const open = await this.redis.hgetall(this.keys.ledgerTriggerOrders(wallet));
    return Object.entries(open)
      .map(([key, order]) => ({ key, order }))
      .sort((a, b) => a.key.localeCompare(b.key));
  }

  /**
   * "Not yet": the intent took no effect and is to be asked again later (a claim answered
   * market_not_settled). Unlike a failure it does not count against maxTries.
   */
  async defer(key: string, why: string): Promise<void> {
    // Counted in the update's script, after its check that the record exists: a record gone is not
    // written back as a stub holding only the count.
    await this.#move(key, { status: "deferred", error: why }, "deferrals");
  }

  async get(key: string): Promise<LedgerRow | undefined> {
    const hash = await this.redis.hgetall(this.keys.ledgerIntent(key));
    if (Object.keys(hash).length === 0) return undefined;
    const row = toRow(hash);
    this.#remember(key, row);
    return row;
  }

  #remember(key: string, identity: Identity): void {
    if (this.#identities.has(key)) return;
    if (this.#identities.size >= IDENTITIES_KEPT) {
      const oldest = this.#identities.keys().next().value;
      if (oldest !== undefined) this.#identities.delete(oldest);
    }
    this.#identities.set(key, { wallet: identity.wallet, kind: identity.kind });
  }

  async inFlight(wallet: string): Promise<LedgerRow[]> {
    const keys = await this.redis.smembers(this.keys.ledgerInFlight(wallet));
    return this.getMany(keys);
  }

  /** Most recent first. */
  async list(options: { limit?: number } = {}): Promise<LedgerRow[]> {
    const keys = await this.redis.zrevrange(this.keys.ledgerIndex, 0, (options.limit ?? 1_000) - 1);
    return this.getMany(keys);
  }

  private async getMany(keys: readonly string[]): Promise<LedgerRow[]> {
    if (keys.length === 0) return [];
    // Issued together, they leave in one write on Keeper's connection (coalesceWrites), as a pipeline's
    // would, without one: a pipeline copies every script the client knows (BullMQ's dozens among
    // them) each time it is made, and a poll of a busy wallet gets here.
    const hashes = await Promise.all(keys.map((key) => this.redis.hgetall(this.keys.ledgerIntent(key))));
    const rows = hashes.filter((hash) => Object.keys(hash).length > 0).map(toRow);
    for (const row of rows) this.#remember(row.key, row);
    return rows;
  }
}

function toRow(hash: Record<string, string>): LedgerRow {
  const optionalNumber = (v: string | undefined) => (v === undefined || v === "" ? undefined : Number(v));
  const optionalString = (v: string | undefined) => (v === undefined || v === "" ? undefined : v);
  return {
    key: hash.key ?? "",
    kind: hash.kind as IntentKind,
    wallet: hash.wallet ?? "",
    strategy: hash.strategy ?? "",
    status: hash.status as LedgerStatus,
    reason: optionalString(hash.reason),
    intent: JSON.parse(hash.intent ?? "{}") as Intent,
    tries: Number(hash.tries ?? 1),
    builds: Number(hash.builds ?? 0),
    recordId: optionalString(hash.recordId),
    signature: optionalString(hash.signature),
    slot: optionalNumber(hash.slot),
    lastValidBlockHeight: optionalNumber(hash.lastValidBlockHeight),
    requestId: optionalString(hash.requestId),
    error: optionalString(hash.error),
    amountMicroUsd: optionalString(hash.amountMicroUsd),
    feeMicroUsd: optionalString(hash.feeMicroUsd),
    minInflowRaw: optionalString(hash.minInflowRaw),
    swapQuote: optionalJson(hash.swapQuote),
    transaction: optionalString(hash.transaction),
    order: optionalString(hash.order),
    execution: optionalJson(hash.execution),
    createdAt: Number(hash.createdAt ?? 0),
    updatedAt: Number(hash.updatedAt ?? 0),
    confirmedAt: optionalNumber(hash.confirmedAt),
  };
}

/** A JSON field as written, or undefined where it is absent or not JSON (the reader checks its shape). */
function optionalJson(value: string | undefined): unknown {
  if (value === undefined || value === "") return undefined;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return undefined;
  }
}
