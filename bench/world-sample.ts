import type { World } from "../src/sandbox/world/world.js";

/** A winning position the benchmark created by resolving its market, and who must claim it. */
export interface SamplePosition {
  readonly pubkey: string;
  readonly ownerIndex: number;
}

export interface ClaimSample {
  readonly marketIds: readonly string[];
  readonly positions: readonly SamplePosition[];
  /** Epoch ms when the markets were resolved. */
  readonly resolvedAtMs: number;
}

/**
 * Marks every position that is claimable at start as already claimed, so that sweeps measure steady
 * state (the sandbox gives each wallet one claimable position at genesis). Returns how many.
 */
export function settleBacklog(world: World): number {
  let settled = 0;
  for (const position of world.positions) {
    if (!world.isClaimable(position)) continue;
    world.applyClaim(world.positionPubkey(position), { signature: "bench-presettled", slot: 0 });
    settled += 1;
  }
  return settled;
}

/**
 * Resolves open markets (to "yes"), not already used, until at least `target` positions won; returns
 * those positions and the time of resolution. Markets are taken in a fixed order, so a run is repeatable.
 */
export function resolveSample(world: World, target: number, used: Set<string>): ClaimSample {
  const byMarket = new Map<number, number[]>();
  world.positions.forEach((p, i) => {
    if (p.claimedAt !== undefined || p.closedAt !== undefined) return;
    const list = byMarket.get(p.marketIndex) ?? [];
    list.push(i);
    byMarket.set(p.marketIndex, list);
  });
  const marketIds: string[] = [];
  const positions: SamplePosition[] = [];
  const resolvedAtMs = Date.now();
  for (const market of world.markets) {
    if (positions.length >= target) break;
    if (used.has(market.marketId)) continue;
    const state = world.marketState(market);
    if (state.status !== "open" || state.result !== null) continue;
    const holders = byMarket.get(market.index) ?? [];
    if (!holders.some((i) => world.positions[i]?.isYes === true)) continue;
    world.resolveMarket(market.marketId, "yes");
    used.add(market.marketId);
    marketIds.push(market.marketId);
    for (const i of holders) {
      const position = world.positions[i];
      if (position && world.isClaimable(position))
        positions.push({ pubkey: world.positionPubkey(position), ownerIndex: position.ownerIndex });
    }
  }
  return { marketIds, positions, resolvedAtMs };
}

/** The mark price at which the benchmark's keeper takes profit, and the yes price it moves markets to. */
export const TAKE_PROFIT_USD = "0.97";
const MOVED_YES_PRICE_MICRO = 985_000;

/**
 * Moves the yes price of open markets, not already used, past the keeper's take-profit until at least
 * `target` yes positions without an order on them (exit-rules leaves those alone) cross it. Returns
 * them and the time of the move.
 */
export function movePriceSample(world: World, target: number, used: Set<string>): ClaimSample {
  const byMarket = new Map<number, number[]>();
  world.positions.forEach((p, i) => {
    if (p.claimedAt !== undefined || p.closedAt !== undefined || !p.isYes || p.contracts <= 0) return;
    if (p.extraOrder?.kind === "pending") return;
    byMarket.set(p.marketIndex, [...(byMarket.get(p.marketIndex) ?? []), i]);
  });
  const marketIds: string[] = [];
  const positions: SamplePosition[] = [];
  const resolvedAtMs = Date.now();
  for (const market of world.markets) {
    if (positions.length >= target) break;
    if (used.has(market.marketId)) continue;
    const state = world.marketState(market);
    if (state.status !== "open" || state.result !== null) continue;
    const holders = byMarket.get(market.index) ?? [];
    if (holders.length === 0) continue;
    world.setPrice(market.marketId, MOVED_YES_PRICE_MICRO);
    used.add(market.marketId);
    marketIds.push(market.marketId);
    for (const i of holders) {
      const position = world.positions[i];
      if (position)
        positions.push({ pubkey: world.positionPubkey(position), ownerIndex: position.ownerIndex });
    }
  }
  return { marketIds, positions, resolvedAtMs };
}
