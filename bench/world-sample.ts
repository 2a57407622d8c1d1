import type { World } from "../src/sandbox/world/world.js";

/** A winning position the benchmark created by resolving its market, and who must claim it. */
export interface SamplePosition {
  readonly pubkey: string;
  readonly ownerIndex: number;
  /** When its market was resolved, if not at the sample's `resolvedAtMs` (staggered resolutions). */
  readonly resolvedAtMs?: number;
}

export interface ClaimSample {
  readonly marketIds: readonly string[];
  readonly positions: readonly SamplePosition[];
  /** Epoch ms when the markets were resolved (the first of them, when staggered). */
  readonly resolvedAtMs: number;
  /** Staggered: true once every market of the sample is resolved (its positions are then all listed). */
  readonly isComplete?: () => boolean;
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
 * With `staggerMs`, the same markets resolve one at a time, that far apart (the first at once); their
 * positions join the sample as each resolves.
 */
export function resolveSample(
  world: World,
  target: number,
  used: Set<string>,
  staggerMs = 0,
  closed: ReadonlySet<string> = new Set(),
): ClaimSample {
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
  let resolved = 0;
  const resolve = (marketId: string, holders: readonly number[], atMs: number) => {
    world.resolveMarket(marketId, "yes");
    for (const i of holders) {
      const position = world.positions[i];
      if (position && world.isClaimable(position))
        positions.push({
          pubkey: world.positionPubkey(position),
          ownerIndex: position.ownerIndex,
          ...(staggerMs > 0 ? { resolvedAtMs: atMs } : {}),
        });
    }
    resolved += 1;
  };
  let winners = 0;
  for (const market of world.markets) {
    if (winners >= target) break;
    if (used.has(market.marketId)) continue;
    const state = world.marketState(market);
    // Open markets, or those `closeMarketsToResolve` closed for this sample (the same ones, in the same order).
    if ((state.status !== "open" && !closed.has(market.marketId)) || state.result !== null) continue;
    const holders = byMarket.get(market.index) ?? [];
    const yes = holders.filter((i) => world.positions[i]?.isYes === true).length;
    if (yes === 0) continue;
    used.add(market.marketId);
    marketIds.push(market.marketId);
    winners += yes;
    const delayMs = (marketIds.length - 1) * staggerMs;
    if (delayMs === 0) resolve(market.marketId, holders, resolvedAtMs);
    else setTimeout(() => resolve(market.marketId, holders, Date.now()), delayMs);
  }
  return { marketIds, positions, resolvedAtMs, isComplete: () => resolved === marketIds.length };
}

/**
 * Closes the markets `resolveSample` would resolve next (same rule, same order), unresolved, showing
 * `closeAtSeconds` as their close time; returns their ids for `resolveSample`'s `closed`.
 */
export function closeMarketsToResolve(
  world: World,
  target: number,
  used: ReadonlySet<string>,
  closeAtSeconds: number,
) {
  const yesHolders = new Map<number, number>();
  for (const p of world.positions)
    if (p.claimedAt === undefined && p.closedAt === undefined && p.isYes)
      yesHolders.set(p.marketIndex, (yesHolders.get(p.marketIndex) ?? 0) + 1);
  const closed = new Set<string>();
  let winners = 0;
  for (const market of world.markets) {
    if (winners >= target) break;
    if (used.has(market.marketId)) continue;
    const state = world.marketState(market);
    const yes = yesHolders.get(market.index) ?? 0;
    if (state.status !== "open" || state.result !== null || yes === 0) continue;
    world.closeMarket(market.marketId, closeAtSeconds);
    closed.add(market.marketId);
    winners += yes;
  }
  return closed;
}

/**
 * The price at which the benchmark's keeper takes profit, and the yes price it moves markets to. The
 * rule reads the bid net of the estimated sell fee: at a mark of $0.985 the bid is $0.98, $0.9653 net.
 */
export const TAKE_PROFIT_USD = "0.95";
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
