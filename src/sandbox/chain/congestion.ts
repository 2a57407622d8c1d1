import { seededRandom } from "./seeded-random.js";

/** How many recent slots getRecentPrioritizationFees covers on an RPC node. */
export const RECENT_FEE_SLOTS = 150;

export interface CongestionSettings {
  /**
   * The leader's threshold in micro-lamports per compute unit, one a slot from the slot the knob is
   * set; the last one holds after. A transaction bidding less is dropped (acknowledged, never landed).
   */
  readonly thresholds: readonly number[];
  /**
   * Other users' transactions land every slot at the threshold (default true), so the recent fees
   * show the market even in slots where no transaction sent here landed.
   */
  readonly backgroundTraffic?: boolean;
}

export interface RecentFee {
  readonly slot: number;
  readonly prioritizationFee: number;
}

/**
 * A congested leader: only bids at or above a moving threshold are included. It remembers the lowest
 * bid included in each recent slot, which is what getRecentPrioritizationFees reports.
 */
export class Congestion {
  private readonly thresholds: readonly number[];
  private readonly backgroundTraffic: boolean;
  /** Lowest compute-unit price landed per slot, for the recent slots only. */
  private readonly lowestLanded = new Map<number, number>();

  constructor(
    settings: CongestionSettings,
    /** The slot the first threshold applies to. */
    private readonly startSlot: number,
  ) {
    if (settings.thresholds.length === 0) throw new RangeError("congestion.thresholds: at least one");
    for (const t of settings.thresholds)
      if (!Number.isFinite(t) || t < 0)
        throw new RangeError(`congestion.thresholds: expected numbers >= 0, got ${t}`);
    this.thresholds = settings.thresholds;
    this.backgroundTraffic = settings.backgroundTraffic ?? true;
  }

  thresholdAt(slot: number): number {
    const index = Math.min(Math.max(0, slot - this.startSlot), this.thresholds.length - 1);
    return this.thresholds[index] ?? 0;
  }

  /** Whether a bid of `price` micro-lamports per unit is included in `slot`. */
  admits(price: number, slot: number): boolean {
    return price >= this.thresholdAt(slot);
  }

  recordLanded(price: number, slot: number): void {
    const lowest = this.lowestLanded.get(slot);
    if (lowest === undefined || price < lowest) this.lowestLanded.set(slot, price);
    for (const old of this.lowestLanded.keys()) {
      if (old > slot - RECENT_FEE_SLOTS) break; // insertion order is slot order
      this.lowestLanded.delete(old);
    }
  }

  /**
   * One entry a slot since the knob was set (at most the last 150), oldest first: the lowest price
   * landed in it, counting the background traffic at the threshold; 0 where nothing landed.
   */
  recentFees(currentSlot: number): RecentFee[] {
    const fees: RecentFee[] = [];
    for (
      let slot = Math.max(this.startSlot, currentSlot - RECENT_FEE_SLOTS + 1);
      slot <= currentSlot;
      slot++
    ) {
      const candidates = [
        this.lowestLanded.get(slot),
        this.backgroundTraffic ? this.thresholdAt(slot) : undefined,
      ];
      const landed = candidates.filter((c): c is number => c !== undefined);
      fees.push({ slot, prioritizationFee: landed.length === 0 ? 0 : Math.min(...landed) });
    }
    return fees;
  }
}

/**
 * A seeded random walk of thresholds, one a slot: each step multiplies by `growthPerSlot` and by a
 * log-normal shock of `volatility` (the standard deviation of its logarithm), never below `floor`.
 */
export function congestionWalk(args: {
  startMicroLamports: number;
  slots: number;
  growthPerSlot?: number;
  volatility?: number;
  floor?: number;
  seed?: number;
}): number[] {
  const random = seededRandom(args.seed ?? 1);
  const growth = args.growthPerSlot ?? 1;
  const volatility = args.volatility ?? 0;
  const floor = args.floor ?? 0;
  const thresholds: number[] = [];
  let level = args.startMicroLamports;
  for (let i = 0; i < args.slots; i++) {
    thresholds.push(Math.max(floor, Math.round(level)));
    // Box-Muller: a standard normal draw from two uniform ones.
    const normal = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
    level = Math.max(floor, level * growth * Math.exp(volatility * normal));
  }
  return thresholds;
}
