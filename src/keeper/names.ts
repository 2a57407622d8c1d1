/** Queue names, job names and Redis keys, in one place. BullMQ forbids ':' in custom job ids. */
export const QUEUES = { poll: "poll", actions: "actions", sign: "sign", confirm: "confirm" } as const;
export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

export interface RedisKeys {
  /** The BullMQ prefix of every queue on a single Redis (see queuePrefix). */
  readonly bullPrefix: string;
  /** The BullMQ prefix of one queue: bullPrefix on a single Redis, a hash tag of its own on a cluster. */
  queuePrefix(queue: QueueName): string;
  /** Prefix of the signer's attempt records (RedisAttemptStore). */
  readonly attemptsPrefix: string;
  ledgerIntent(key: string): string;
  readonly ledgerIndex: string;
  ledgerInFlight(wallet: string): string;
  /** Open trigger orders Keeper created, per wallet: create intent key -> order account. */
  ledgerTriggerOrders(wallet: string): string;
  strategyState(wallet: string, strategy: string): string;
  lastPoll(wallet: string): string;
  /**
   * Every wallet's last successful poll: a sorted set, each wallet scored by the Unix second of it,
   * so that a role's refresh reads only the wallets polled since its last read, not the whole fleet.
   */
  readonly lastPolls: string;
  /** What one wallet's last polls saw (positions, pending orders), for the status page. */
  pollSeen(wallet: string): string;
  readonly paused: string;
  /**
   * Written with the pause switch and kept for good: Redis without it while a process remembers the
   * switch on has lost its data, and the pause is put back (PauseSwitch). Beside `paused`, in its slot.
   */
  readonly pauseMarker: string;
  /** What /readyz writes, with a short expiry, to see that Redis accepts writes. */
  readonly readinessProbe: string;
  pollLock(wallet: string): string;
  readonly counters: string;
  /** Confirmed closes the protections count (sorted by confirmation time). */
  readonly protectionsExits: string;
  /** When each circuit breaker was last reset by hand. */
  readonly protectionsResets: string;
  /** The last state each breaker was seen in, so a change is announced once. */
  readonly protectionsSeen: string;
  /** Holdings index: held market id -> event id. */
  readonly holdingsMarkets: string;
  /** Holdings index: one market's holders, wallet -> its positions there (JSON). */
  holdingsMarket(marketId: string): string;
  /** Holdings index: the markets one wallet holds. */
  holdingsOfWallet(wallet: string): string;
  /** Holdings index: the wallets that hold something (so wallets gone from the config are found). */
  readonly holdingsWallets: string;
  /** The market watcher: each watched market's last seen state (status and result). */
  readonly watchStates: string;
  /** The market watcher: a holder polled for a market, not polled again for it before this expires. */
  watchCooldown(wallet: string, marketId: string): string;
  /** The signer's tally of what it signed per UTC day and input mint (src/signer/day-tally.ts). */
  readonly signerSpent: string;
  /** The fleet value series: each wallet's last value, their total, the capped samples. */
  readonly valueWallets: string;
  readonly valueTotal: string;
  readonly valueSamples: string;
}

/**
 * Every key starts with the configured prefix; dry-run keeps storage of its own.
 *
 * On a Redis Cluster (`isCluster`) each concern's keys share one hash tag, `{<prefix>:<concern>}`,
 * so every script, transaction and pipeline of a concern (the ledger's admission, the holdings index's
 * rewrite, a pipeline of poll records) stays in one slot, while the concerns and each BullMQ queue
 * (`{<prefix>-bull:<queue>}`) spread over the masters. On a single Redis the names are those Keeper
 * always used, so an upgrade keeps every ledger record and queued job where it was.
 */
export function redisKeys(
  prefix: string,
  mode: "live" | "dry-run",
  options: { isCluster?: boolean } = {},
): RedisKeys {
  const p = mode === "dry-run" ? `${prefix}-dry-run` : prefix;
  const isCluster = options.isCluster === true;
  /** A concern's keys: `p:concern` on a single Redis, `{p:concern}` (one hash slot) on a cluster. */
  const of = (concern: string, base = p) => (isCluster ? `{${base}:${concern}}` : `${base}:${concern}`);
  const ledger = of("ledger");
  const poll = of("poll");
  const protections = of("protections");
  const holdings = of("holdings");
  const watch = of("watch");
  const value = of("value");
  // Pause is shared by both modes: an operator's switch must stop whatever runs.
  const paused = of("paused", prefix);
  return {
    bullPrefix: `${p}-bull`,
    queuePrefix: (queue) => (isCluster ? `{${p}-bull:${queue}}` : `${p}-bull`),
    // One key per intent, each script and transaction over one: no tag needed. Untagged on a cluster
    // on purpose. Not in the ledger's slot: a failover losing that master's last writes would take an
    // intent's row and its attempt record together, and a re-admitted intent's new build would be
    // signed beside a sent one. Apart, each covers the other's loss (a surviving record answers a new
    // build with the attempt sent; a surviving row re-signs the same bytes, past their blockhash
    // asking the chain). Nor a slot of their own: every record, signed bytes kept for good, on one master.
    attemptsPrefix: `${p}:`,
    ledgerIntent: (key) => `${ledger}:intent:${key}`,
    ledgerIndex: `${ledger}:index`,
    ledgerInFlight: (wallet) => `${ledger}:inflight:${wallet}`,
    ledgerTriggerOrders: (wallet) => `${ledger}:triggers:${wallet}`,
    strategyState: (wallet, strategy) => `${of("state")}:${wallet}:${strategy}`,
    lastPoll: (wallet) => `${poll}:last:${wallet}`,
    // Not `${poll}:last`: that was a hash of the same times, and a key changes type only under a new name.
    lastPolls: `${poll}:polled-at`,
    pollSeen: (wallet) => `${poll}:seen:${wallet}`,
    paused,
    pauseMarker: `${paused}:marker`,
    readinessProbe: of("readiness"),
    pollLock: (wallet) => `${poll}:lock:${wallet}`,
    counters: of("counters"),
    protectionsExits: `${protections}:exits`,
    protectionsResets: `${protections}:resets`,
    protectionsSeen: `${protections}:seen`,
    holdingsMarkets: `${holdings}:markets`,
    holdingsMarket: (marketId) => `${holdings}:market:${marketId}`,
    holdingsOfWallet: (wallet) => `${holdings}:wallet:${wallet}`,
    holdingsWallets: `${holdings}:wallets`,
    watchStates: `${watch}:states`,
    watchCooldown: (wallet, marketId) => `${watch}:cooldown:${wallet}:${marketId}`,
    signerSpent: of("signer:spent"),
    valueWallets: `${value}:wallets`,
    valueTotal: `${value}:total`,
    valueSamples: `${value}:samples`,
  };
}

/** The keys of a configured keeper: hash-tagged when it runs on a Redis Cluster (redis.cluster). */
export function redisKeysOf(config: {
  readonly mode: "live" | "dry-run";
  readonly redis: { readonly prefix: string; readonly cluster?: readonly string[] | undefined };
}): RedisKeys {
  return redisKeys(config.redis.prefix, config.mode, { isCluster: (config.redis.cluster?.length ?? 0) > 0 });
}

/**
 * One try of one ledger record, as the job ids of its builds and signs name it: the try, and the
 * record's own id (written at admission, none on a record an older Keeper admitted). A record lost
 * from Redis and admitted again is another record: its jobs do not take the ids of the lost one's,
 * which BullMQ may still hold (and would ignore an add under).
 */
export interface RecordTry {
  readonly tries: number;
  readonly recordId?: string | undefined;
}

/** The intent, its record and its try, as they begin a build's or a sign's job id. */
const tryName = (intentKey: string, at: RecordTry) =>
  at.recordId ? `${intentKey}-r${at.recordId}-t${at.tries}` : `${intentKey}-t${at.tries}`;

export const jobIds = {
  poll: (wallet: string, kind: string, tickEpoch: number) => `poll-${kind}-${wallet}-${tickEpoch}`,
  /** A poll the market watcher asked for, named by the moment it saw the change. */
  targetedPoll: (wallet: string, seenAtMs: number) => `poll-positions-${wallet}-watch-${seenAtMs}`,
  /** At most one poll of a kind per wallet waits or runs; BullMQ drops the key when that job ends. */
  pollDeduplication: (wallet: string, kind: string) => `poll-${kind}-${wallet}`,
  action: (intentKey: string, at: RecordTry, build: number) => `act-${tryName(intentKey, at)}-${build}`,
  sign: (intentKey: string, at: RecordTry, build: number) => `sign-${tryName(intentKey, at)}-${build}`,
  /** The watch of attempt `attempt`, handed over by the sign job `signJobId`. */
  confirm: (signJobId: string, attempt: number) => `confirm-${signJobId}-a${attempt}`,
} as const;

/**
 * BullMQ job priorities of polls (lower runs first). Every poll has one: BullMQ runs jobs without a
 * priority before any prioritized job, so the routine sweep must be prioritized too for the market
 * watcher's polls to pass it.
 */
export const POLL_PRIORITY = { targeted: 1, sweep: 10 } as const;

/**
 * BullMQ job priorities of builds (every build has one, as every poll does, since BullMQ runs jobs
 * without one before any prioritized job). First: a targeted poll's intents (an exit at a price that
 * may not last) and rebuilds, retries and resumes of intents already under way. Then the claims a
 * resolution made from the holdings index: a burst of hundreds at once, none of which loses by waiting
 * a few seconds, that an exit found during it must not queue behind. Last, the routine sweep's.
 */
export const BUILD_PRIORITY = { first: 1, indexClaim: 5, sweep: 10 } as const;
