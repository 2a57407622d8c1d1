import { ONE_USD_MICRO } from "../sandbox/world/markets.js";
import { MAINNET_MINTS } from "../sandbox/world/tokens.js";
import type { World } from "../sandbox/world/world.js";

/**
 * What the `npm start` demo does beyond claims, so that every strategy Keeper ships is seen at work:
 * two positions whose prices it moves so that a take-profit and a stop-loss fire, a DCA plan through
 * recurring orders whose rounds it completes as the service would, and a limit order.
 */

/** The exit rules' thresholds, and how far the demo moves a price past them (percent of pnl). */
const EXIT_RULE_PCT = 20;
const EXIT_MOVE_PCT = 50;
/** A DCA round: 120 USDC in two orders a minute apart (the service's minimums: $100 a round, $50 an order). */
const DCA_ROUND_USDC_RAW = "120000000";
const DCA_ORDERS = 2;
const DCA_INTERVAL_SECONDS = 60;
/** Rounds start for this long (six rounds at most: the wallets hold 1,000 USDC each). */
const DCA_RUNS_SECONDS = 12 * 60;

export interface ExitTarget {
  readonly rule: "take-profit" | "stop-loss";
  readonly marketId: string;
  readonly walletIndex: number;
  readonly isYes: boolean;
  /** The yes price that puts the position past its rule. */
  readonly yesPriceMicro: number;
  /** The yes price at which the position is worth what it cost: no rule holds there. */
  readonly startYesPriceMicro: number;
}

/**
 * Two positions of the sandbox wallets in different open markets, far from their close, with no order
 * waiting on them (an open order holds exit rules back): one to rise past a take-profit, one to fall
 * past a stop-loss. Their prices are where each can move 50 % and stay strictly inside (0, $1).
 */
export function chooseExitTargets(world: World, walletCount: number): ExitTarget[] {
  const targets: ExitTarget[] = [];
  const used = new Set<string>();
  for (const rule of ["take-profit", "stop-loss"] as const) {
    search: for (let w = 0; w < walletCount; w += 1) {
      for (const position of world.positionsOfWallet(w)) {
        const market = world.marketOf(position);
        if (used.has(market.marketId) || world.marketState(market).status !== "open") continue;
        if (market.closeTime < world.now() + 6 * 3600 || position.extraOrder?.kind === "pending") continue;
        if (position.claimedAt !== undefined || position.closedAt !== undefined) continue;
        const factor = rule === "take-profit" ? 100 + EXIT_MOVE_PCT : 100 - EXIT_MOVE_PCT;
        const sidePrice = Math.round((position.avgPriceMicro * factor) / 100);
        if (sidePrice < 30_000 || sidePrice > 970_000) continue;
        const yesPriceMicro = position.isYes ? sidePrice : ONE_USD_MICRO - sidePrice;
        const atCost = position.isYes ? position.avgPriceMicro : ONE_USD_MICRO - position.avgPriceMicro;
        targets.push({
          rule,
          marketId: market.marketId,
          walletIndex: w,
          isYes: position.isYes,
          yesPriceMicro,
          startYesPriceMicro: atCost,
        });
        used.add(market.marketId);
        break search;
      }
    }
  }
  return targets;
}

/** The demo's strategies, as a config file's `strategies:` would hold them. */
export function demoStrategies(targets: readonly ExitTarget[], nowSeconds: number): unknown[] {
  const usdc = MAINNET_MINTS.usdc;
  const sol = MAINNET_MINTS.sol;
  return [
    { name: "auto-claim" },
    {
      name: "exit-rules",
      // Rules for the two chosen markets only: the other positions are the claims' part of the demo.
      overrides: targets.map((t) => ({
        match: { marketId: t.marketId },
        rules: t.rule === "take-profit" ? { takeProfitPct: EXIT_RULE_PCT } : { stopLossPct: EXIT_RULE_PCT },
      })),
    },
    {
      name: "dca",
      plans: [
        {
          id: "demo-usdc-to-sol",
          inputMint: usdc,
          outputMint: sol,
          inAmountRaw: DCA_ROUND_USDC_RAW,
          numberOfOrders: DCA_ORDERS,
          intervalSeconds: DCA_INTERVAL_SECONDS,
          repeat: true,
          stopAt: nowSeconds + DCA_RUNS_SECONDS,
        },
      ],
    },
    {
      name: "limit-orders",
      orders: [
        {
          id: "demo-sell-sol",
          side: "sell", // 0.5 SOL for USDC at 250 USDC a SOL: above the market, so it waits
          inputMint: sol,
          outputMint: usdc,
          inputDecimals: 9,
          outputDecimals: 6,
          amount: "0.5",
          price: "250",
        },
      ],
    },
  ];
}

/**
 * Holds each target's market at the target position's cost until the demo moves it: the rules read
 * what a sale would bring in (the bid, less fees), so a price that wandered below cost could fire a
 * stop-loss before its move.
 */
export function holdAtCost(world: World, targets: readonly ExitTarget[]): void {
  for (const target of targets) world.setPrice(target.marketId, target.startYesPriceMicro);
}

/** Moves a target's market to its price (held there); a market that is no longer open is left alone. */
export function moveToTarget(world: World, target: ExitTarget): boolean {
  const market = world.findMarket(target.marketId);
  if (market === undefined || world.marketState(market).status !== "open") return false;
  world.setPrice(target.marketId, target.yesPriceMicro);
  return true;
}

/**
 * The service completes a recurring order once all its orders ran; the sandbox trades nothing by
 * itself, so the demo completes each one whose last order is due. Returns the orders completed.
 */
export function completeDueRecurringOrders(world: World): string[] {
  const completed: string[] = [];
  for (const order of world.swapOrders.values()) {
    if (order.kind !== "recurring" || order.status !== "open") continue;
    const endsAt = order.createdAt + (order.numberOfOrders ?? 1) * (order.intervalSeconds ?? 0);
    if (world.now() < endsAt) continue;
    world.settleOrder(order.order, "completed");
    completed.push(order.order);
  }
  return completed;
}
