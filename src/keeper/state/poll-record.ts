import type { Redis } from "ioredis";
import type { Order, Position } from "../../core/schemas/prediction.js";
import type { Snapshot } from "../../core/snapshot.js";
import type { RedisKeys } from "../names.js";
import { isHeld } from "./holdings.js";

/**
 * What one wallet's last polls saw, kept so the status page never asks the service: an open page
 * or a loop of GETs must not spend the rate limit that claims and exits need. Positions come from
 * every poll; pending orders only from the orders poll, so each carries its own time.
 */
export interface PollRecord {
  /** The wallet's positions not yet claimed (claimed ones are history, and only grow). */
  positions: Position[];
  /** Unix seconds of the poll that read the positions. */
  positionsAt: number;
  /** Pending prediction orders, as the last orders poll listed them. */
  orders?: Order[];
  ordersAt?: number;
}

/**
 * How busy a wallet was at its last polls, in a few numbers the sweep reads for every wallet each
 * tick (not the position lists): positions held (open, or waiting for a claim) and pending orders.
 */
export interface WalletActivity {
  /** Unix seconds of the last poll that read the positions. */
  positionsAt: number;
  held: number;
  /** Intents in flight and swap orders open (trigger, recurring) at the last poll. */
  otherOpen: number;
  /** Absent until an orders poll listed them. */
  pendingOrders?: number;
}

/** What a snapshot shows open beside positions and prediction orders: intents in flight, swap orders. */
export function openBesidesPositions(snapshot: Snapshot): number {
  const open = (list: Snapshot["listedTriggerOrders"]) =>
    (list ?? []).filter((o) => o.state === "open").length;
  return (
    snapshot.inFlight.length +
    (snapshot.triggerOrders?.length ?? 0) +
    open(snapshot.listedTriggerOrders) +
    open(snapshot.listedRecurringOrders)
  );
}

/** A wallet no poll wrote for this long (taken out of the config) loses its record. */
const RECORD_TTL_SECONDS = 7 * 24 * 3600;

/** The poll records in Redis, one hash per wallet under Keeper's prefix (public data only). */
export class PollRecords {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  /** Writes what a poll saw; `orders` only when the poll read them (the others keep the last list). */
  async record(
    wallet: string,
    seen: { positions: readonly Position[]; orders?: readonly Order[]; otherOpen?: number },
    atSeconds: number,
  ): Promise<void> {
    const key = this.keys.pollSeen(wallet);
    const fields: Record<string, string> = {
      positions: JSON.stringify(seen.positions.filter((p) => !p.claimed)),
      positionsAt: String(atSeconds),
      held: String(seen.positions.filter(isHeld).length),
      otherOpen: String(seen.otherOpen ?? 0),
    };
    if (seen.orders) {
      const pending = seen.orders.filter((o) => o.status === "pending");
      fields.orders = JSON.stringify(pending);
      fields.ordersAt = String(atSeconds);
      fields.pendingOrders = String(pending.length);
    }
    // Not a transaction: MULTI makes a pipeline object each poll (it copies every script the client
    // knows), and Keeper's connection sends both in one write anyway (coalesceWrites). A record left without its
    // expiry (a crash between the two) is written again, with it, by the wallet's next poll.
    await Promise.all([this.redis.hset(key, fields), this.redis.expire(key, RECORD_TTL_SECONDS)]);
  }

  /** The records of the wallets asked for, in one round trip; a wallet never recorded is absent. */
  async read(wallets: readonly string[]): Promise<Map<string, PollRecord>> {
    const out = new Map<string, PollRecord>();
    if (wallets.length === 0) return out;
    const pipeline = this.redis.pipeline();
    for (const wallet of wallets) pipeline.hgetall(this.keys.pollSeen(wallet));
    const answers = (await pipeline.exec()) ?? [];
    wallets.forEach((wallet, i) => {
      const [error, fields] = answers[i] ?? [null, {}];
      if (error) throw error;
      const record = parseRecord(fields as Record<string, string>);
      if (record) out.set(wallet, record);
    });
    return out;
  }

  /** The activity of the wallets asked for, in one round trip; a wallet without one is absent. */
  async activity(wallets: readonly string[]): Promise<Map<string, WalletActivity>> {
    const out = new Map<string, WalletActivity>();
    if (wallets.length === 0) return out;
    const pipeline = this.redis.pipeline();
    for (const wallet of wallets)
      pipeline.hmget(this.keys.pollSeen(wallet), "positionsAt", "held", "otherOpen", "pendingOrders");
    const answers = (await pipeline.exec()) ?? [];
    wallets.forEach((wallet, i) => {
      const [error, fields] = answers[i] ?? [null, []];
      if (error) throw error;
      const [positionsAt, held, otherOpen, pendingOrders] = fields as (string | null)[];
      // A record written before these fields existed says nothing of activity: the wallet counts as busy.
      if (positionsAt == null || held == null) return;
      out.set(wallet, {
        positionsAt: Number(positionsAt),
        held: Number(held),
        otherOpen: Number(otherOpen ?? 0),
        ...(pendingOrders == null ? {} : { pendingOrders: Number(pendingOrders) }),
      });
    });
    return out;
  }
}

function parseRecord(fields: Record<string, string>): PollRecord | undefined {
  if (fields.positions === undefined || fields.positionsAt === undefined) return undefined;
  try {
    return {
      positions: JSON.parse(fields.positions) as Position[],
      positionsAt: Number(fields.positionsAt),
      ...(fields.orders === undefined || fields.ordersAt === undefined
        ? {}
        : { orders: JSON.parse(fields.orders) as Order[], ordersAt: Number(fields.ordersAt) }),
    };
  } catch {
    // Written by another version: the next poll writes it again.
    return undefined;
  }
}
