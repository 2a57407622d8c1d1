import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import type { KeeperConfig } from "../config/load-config.js";
import { QUEUES, type RedisKeys } from "../keeper/names.js";
import type { ProtectionsEvaluation } from "../keeper/operator/circuit-breakers.js";
import { PauseSwitch } from "../keeper/operator/pause.js";
import { Protections } from "../keeper/operator/protections.js";
import {
  DONE_WITHOUT_TRANSACTION,
  Ledger,
  type LedgerRow,
  type LedgerStatus,
} from "../keeper/state/ledger.js";

/** How many of the newest ledger rows `status` and the status page read (the ledger index is sorted). */
export const LEDGER_SCAN_LIMIT = 10_000;

const DONE_STATUSES: readonly LedgerStatus[] = [
  "confirmed",
  "failed",
  "refused",
  "dry-run",
  ...DONE_WITHOUT_TRANSACTION,
];
const JOB_STATES = ["waiting", "active", "delayed", "failed", "completed"] as const;

export interface KeeperStatus {
  mode: KeeperConfig["mode"];
  paused: Awaited<ReturnType<PauseSwitch["status"]>>;
  protections: ProtectionsEvaluation;
  /** Jobs per state, per queue. */
  queues: Record<string, Record<string, number>>;
  /** Wallet -> Unix seconds of its last successful poll. */
  lastPolls: Record<string, number>;
  /** Intents by status, over the newest LEDGER_SCAN_LIMIT rows. */
  intents: Record<string, number>;
  inFlight: LedgerRow[];
  /** The newest LEDGER_SCAN_LIMIT rows, newest first. */
  recent: LedgerRow[];
}

export interface StatusDeps {
  config: KeeperConfig;
  redis: Redis;
  keys: RedisKeys;
}

/** What `keeper status` prints and the status page shows: one read of the keeper's state in Redis. */
export async function readKeeperStatus(deps: StatusDeps, nowSeconds: number): Promise<KeeperStatus> {
  const { config, redis, keys } = deps;
  const paused = await new PauseSwitch(redis, keys).status();
  const queues: Record<string, Record<string, number>> = {};
  for (const name of Object.values(QUEUES)) {
    const queue = new Queue(name, { connection: redis, prefix: keys.queuePrefix(name) });
    try {
      queues[name] = await queue.getJobCounts(...JOB_STATES);
    } finally {
      await queue.close();
    }
  }
  const lastPolls: Record<string, number> = {};
  const scored = await redis.zrange(keys.lastPolls, "0", "-1", "WITHSCORES");
  for (let i = 0; i + 1 < scored.length; i += 2) lastPolls[scored[i] as string] = Number(scored[i + 1]);
  const recent = await new Ledger(redis, keys).list({ limit: LEDGER_SCAN_LIMIT });
  const intents: Record<string, number> = {};
  for (const row of recent) intents[row.status] = (intents[row.status] ?? 0) + 1;
  // Deferred claims are listed too: they are still to happen.
  const inFlight = recent.filter((r) => !DONE_STATUSES.includes(r.status));
  const protections = await new Protections(redis, keys, config.protections).evaluate(nowSeconds);
  return { mode: config.mode, paused, protections, queues, lastPolls, intents, inFlight, recent };
}
