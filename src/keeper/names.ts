/** Queue names, job names and Redis keys, in one place. BullMQ forbids ':' in custom job ids. */
export const QUEUES = { poll: "poll", actions: "actions", sign: "sign", confirm: "confirm" } as const;
export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

export interface RedisKeys {
  readonly bullPrefix: string;
  /** Prefix of the signer's attempt records (RedisAttemptStore). */
  readonly attemptsPrefix: string;
  ledgerIntent(key: string): string;
  readonly ledgerIndex: string;
  ledgerInFlight(wallet: string): string;
  /** Open trigger orders Keeper created, per wallet: create intent key -> order account. */
  ledgerTriggerOrders(wallet: string): string;
  strategyState(wallet: string, strategy: string): string;
  lastPoll(wallet: string): string;
  readonly lastPolls: string;
  /** What one wallet's last polls saw (positions, pending orders), for the status page. */
  pollSeen(wallet: string): string;
  readonly paused: string;
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
}

/** Every key starts with the configured prefix; dry-run keeps storage of its own. */
export function redisKeys(prefix: string, mode: "live" | "dry-run"): RedisKeys {
  const p = mode === "dry-run" ? `${prefix}-dry-run` : prefix;
  return {
    bullPrefix: `${p}-bull`,
    attemptsPrefix: `${p}:`,
    ledgerIntent: (key) => `${p}:ledger:intent:${key}`,
    ledgerIndex: `${p}:ledger:index`,
    ledgerInFlight: (wallet) => `${p}:ledger:inflight:${wallet}`,
    ledgerTriggerOrders: (wallet) => `${p}:ledger:triggers:${wallet}`,
    strategyState: (wallet, strategy) => `${p}:state:${wallet}:${strategy}`,
    lastPoll: (wallet) => `${p}:poll:last:${wallet}`,
    lastPolls: `${p}:poll:last`,
    pollSeen: (wallet) => `${p}:poll:seen:${wallet}`,
    // Pause is shared by both modes: an operator's switch must stop whatever runs.
    paused: `${prefix}:paused`,
    pollLock: (wallet) => `${p}:poll:lock:${wallet}`,
    counters: `${p}:counters`,
    protectionsExits: `${p}:protections:exits`,
    protectionsResets: `${p}:protections:resets`,
    protectionsSeen: `${p}:protections:seen`,
    holdingsMarkets: `${p}:holdings:markets`,
    holdingsMarket: (marketId) => `${p}:holdings:market:${marketId}`,
    holdingsOfWallet: (wallet) => `${p}:holdings:wallet:${wallet}`,
    holdingsWallets: `${p}:holdings:wallets`,
    watchStates: `${p}:watch:states`,
    watchCooldown: (wallet, marketId) => `${p}:watch:cooldown:${wallet}:${marketId}`,
    signerSpent: `${p}:signer:spent`,
  };
}

export const jobIds = {
  poll: (wallet: string, kind: string, tickEpoch: number) => `poll-${kind}-${wallet}-${tickEpoch}`,
  /** A poll the market watcher asked for, named by the moment it saw the change. */
  targetedPoll: (wallet: string, seenAtMs: number) => `poll-positions-${wallet}-watch-${seenAtMs}`,
  /** At most one poll of a kind per wallet waits or runs; BullMQ drops the key when that job ends. */
  pollDeduplication: (wallet: string, kind: string) => `poll-${kind}-${wallet}`,
  action: (intentKey: string, build: number) => `act-${intentKey}-${build}`,
  sign: (intentKey: string, build: number) => `sign-${intentKey}-${build}`,
  /** The watch of attempt `attempt`, started by the sign job `signJobId`. */
  confirm: (signJobId: string, attempt: number) => `confirm-${signJobId}-a${attempt}`,
} as const;

/**
 * BullMQ job priorities of polls (lower runs first). Every poll has one: BullMQ runs jobs without a
 * priority before any prioritized job, so the routine sweep must be prioritized too for the market
 * watcher's polls to pass it.
 */
export const POLL_PRIORITY = { targeted: 1, sweep: 10 } as const;

/**
 * BullMQ job priorities of builds: those of a targeted poll's intents, and rebuilds, retries and
 * resumes of intents already under way, run before the builds the routine sweep found (every build has
 * one, as every poll does, since BullMQ runs jobs without one before any prioritized job).
 */
export const BUILD_PRIORITY = { first: 1, sweep: 10 } as const;
