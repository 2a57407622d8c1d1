/** Messages between the benchmark and the keeper process it forks (Node IPC, JSON). */

/** What one request to the service was (the naive bot's as it sent it, the keeper's as the sandbox answered it). */
export const REQUEST_KIND = { positions: 0, claim: 1, other: 2 } as const;
export type RequestKind = (typeof REQUEST_KIND)[keyof typeof REQUEST_KIND];

/** One request: [sent at (epoch ms), kind, wallet index (-1 unknown), HTTP status (0: no answer)]. */
export type RequestEvent = [number, RequestKind, number, number];

export interface KeeperStart {
  readonly type: "start";
  readonly serviceUrl: string;
  readonly apiKey: string;
  readonly rpcUrl: string;
  /** The sandbox's USDC mint: claims pay in it (signer.payoutMints). */
  readonly usdcMint: string;
  readonly redisUrl: string;
  readonly prefix: string;
  readonly requestsPerSecond: number;
  /** The keeper's service.rateLimitWindowSeconds: the sandbox's window. */
  readonly windowSeconds: number;
  readonly pollCron: string;
  /** schedules.pollOrders (default: never within a run). */
  readonly ordersCron?: string;
  /** schedules.idleSweepMultiple (default: the keeper's own). */
  readonly idleSweepMultiple?: number;
  /** The market watcher on (mode markets) or off (mode wallets). */
  readonly watcher: boolean;
  /** watcher.hotIntervalMs of the keeper (undefined: its default; 0: the hot cadence off). */
  readonly hotIntervalMs?: number;
  /** watcher.sweepSharePct of the keeper (undefined: its default). */
  readonly sweepSharePct?: number;
  /** exit-rules' take-profit price, so that a price moved past it makes a close. */
  readonly takeProfitPriceUsd: string;
  /** queues.actionConcurrency and signer.concurrency (undefined: the keeper's defaults). */
  readonly concurrency: number | undefined;
  /** queues.pollConcurrency (undefined: the keeper's default). */
  readonly pollConcurrency: number | undefined;
  readonly seed: number;
  readonly walletCount: number;
  readonly logFile: string;
  readonly logLevel: string;
  /**
   * The signer role in a process of its own (as `keeper start --role signer` runs it), forked by the
   * keeper process, which adds that process's CPU time and RSS to its reports.
   */
  readonly signerProcess?: boolean;
  /** The roles this process runs (default: every role; the forked signer: the signer). */
  readonly roles?: readonly ("scheduler" | "worker" | "signer")[];
}

export interface KeeperStop {
  readonly type: "stop";
}

/** Write a heap snapshot to `file` (the peak RSS so far is kept aside first). */
export interface KeeperHeapSnapshot {
  readonly type: "heap-snapshot";
  readonly file: string;
}

/** Start the CPU profiler; "cpu-profile-stop" writes the profile to `file` and answers its summary. */
export interface KeeperCpuProfile {
  readonly type: "cpu-profile-start" | "cpu-profile-stop";
  readonly file?: string;
}

export type ToKeeper = KeeperStart | KeeperStop | KeeperHeapSnapshot | KeeperCpuProfile;

export interface KeeperReady {
  readonly type: "ready";
  readonly startupMs: number;
}

export interface KeeperProgress {
  readonly type: "progress";
  readonly rssBytes: number;
  /** CPU time the keeper's process used since it started (user + system), in microseconds. */
  readonly cpuMicros: number;
  /** With --signer-process: the signer process's part of cpuMicros. */
  readonly signerCpuMicros?: number;
  /**
   * The part of cpuMicros spent on the processes' main threads (process.threadCpuUsage); the rest is
   * V8's helper threads: garbage collection and compiling.
   */
  readonly mainThreadCpuMicros?: number;
}

export interface KeeperStopped {
  readonly type: "stopped";
  /** process.resourceUsage().maxRSS, in kilobytes. */
  readonly maxRssKb: number;
  readonly peakSampledRssBytes: number;
  /** What the sampled peak was made of (process.memoryUsage() then). */
  readonly atPeak?: MemoryAtPeak;
}

export interface MemoryAtPeak {
  readonly heapUsedBytes: number;
  readonly heapTotalBytes: number;
  readonly externalBytes: number;
  readonly arrayBuffersBytes: number;
}

export interface KeeperFailed {
  readonly type: "failed";
  readonly error: string;
}

export interface KeeperCpuProfileWritten {
  readonly type: "cpu-profile";
  readonly summary: string;
}

export type FromKeeper =
  | KeeperReady
  | KeeperProgress
  | KeeperStopped
  | KeeperFailed
  | KeeperCpuProfileWritten;
