import { z } from "zod";
import { type Position, positionSchema } from "../../core/schemas/prediction.js";
import type { Snapshot } from "../../core/snapshot.js";

/**
 * The recording's format: one JSON object a line, one line per poll, gzip members in a file a UTC
 * day (`YYYY-MM-DD.jsonl.gz`, see `RecordWriter`). A line holds what the strategies read of the
 * service: the wallet's positions as the service listed them (each with its market's state, result
 * and close time, and its mark and bid), the events' details when a strategy asked for them, and the
 * time. Nothing of Keeper's own (ledger, keys, config) is in it: positions are public data.
 */
export const RECORD_VERSION = 1;

export const recordLineSchema = z.strictObject({
  v: z.literal(RECORD_VERSION, { error: `expected v: ${RECORD_VERSION} (the recording format's version)` }),
  at: z.number({ error: "expected Unix seconds" }).int("expected Unix seconds").nonnegative(),
  wallet: z.string({ error: "expected the wallet's address" }).min(1, "expected the wallet's address"),
  positions: z.array(positionSchema, { error: "expected a list of positions" }),
  events: z.record(z.string(), z.looseObject({})).optional(),
});

export interface RecordLine {
  readonly v: typeof RECORD_VERSION;
  /** Unix seconds: when the poll took its snapshot. */
  readonly at: number;
  readonly wallet: string;
  readonly positions: readonly Position[];
  readonly events?: Snapshot["events"];
}

/** What one poll's snapshot records. */
export function recordLineOf(snapshot: Snapshot): RecordLine {
  return {
    v: RECORD_VERSION,
    at: snapshot.takenAt,
    wallet: snapshot.wallet,
    positions: snapshot.positions,
    ...(snapshot.events ? { events: snapshot.events } : {}),
  };
}
