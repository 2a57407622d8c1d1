import { ONE_USD_MICRO } from "../sandbox/world/markets.js";
import { MAINNET_MINTS } from "../sandbox/world/tokens.js";
import type { World } from "../sandbox/world/world.js";
import type { DemoOpen } from "./demo-opens.js";

/**
 * What the `npm start` demo does beyond claims, so that every strategy Keeper ships is seen at work:
 * positions whose prices it moves so that a take-profit and a stop-loss fire (one a Forecast position,
 * sold through the service's execute endpoint), a small winner not worth a claim's fee, a DCA plan
 * through recurring orders whose rounds it completes as the service would, and a limit order.
 */

/** The exit rules' thresholds, and how far the demo moves a price past them (percent of pnl). */
const EXIT_RULE_PCT = 20;
const EXIT_MOVE_PCT = 50;
/** When the demo moves each target's price, after the keeper started. */
const MOVE_AFTER_MS = { "take-profit": 15_000, "stop-loss": 30_000, forecast: 20_000 } as const;
/** The Forecast position the demo opens: $50 of an open Forecast market's YES side. */
const FORECAST_DEPOSIT_RAW = "50000000";
/**
 * The small winner: half a contract (pays $0.50) on the service's smallest order ($5 offered, only the
 * contracts' cost taken). At the default `minPayoutToCostRatio` it is not worth a claim's fee.
 */
const SMALL_CLAIM_CONTRACTS = "0.5";
const MIN_ORDER_RAW = "5000000";
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
  /** When the demo moves the price, after the keeper started. */
  readonly moveAfterMs: number;
  /** A Forecast (bisonfi) position: its sell goes through the service's execute endpoint. */
  readonly forecast: boolean;
}

/** A target past `rule` by half the position's price, or undefined where that leaves (0, $1). */
function targetOf(
  rule: ExitTarget["rule"],
  marketId: string,
  walletIndex: number,
  position: { readonly isYes: boolean; readonly avgPriceMicro: number },
): ExitTarget | undefined {
  const factor = rule === "take-profit" ? 100 + EXIT_MOVE_PCT : 100 - EXIT_MOVE_PCT;
  const sidePrice = Math.round((position.avgPriceMicro * factor) / 100);
  if (sidePrice < 30_000 || sidePrice > 970_000) return undefined;
  return {
    rule,
    marketId,
    walletIndex,
    isYes: position.isYes,
    yesPriceMicro: position.isYes ? sidePrice : ONE_USD_MICRO - sidePrice,
    startYesPriceMicro: position.isYes ? position.avgPriceMicro : ONE_USD_MICRO - position.avgPriceMicro,
    moveAfterMs: MOVE_AFTER_MS[rule],
    forecast: false,
  };
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
        const target = targetOf(rule, market.marketId, w, position);
        if (target === undefined) continue;
        targets.push(target);
        used.add(market.marketId);
        break search;
      }
    }
  }
  return targets;
}

/** The Forecast position the demo opens for the last wallet: an open Forecast market's YES side. */
export function forecastOpen(world: World, walletCount: number): DemoOpen {
  const market = world.markets.find(
    (m) =>
      m.forecast !== undefined &&
      world.marketState(m).status === "open" &&
      m.closeTime > world.now() + 6 * 3600,
  );
  if (market === undefined) throw new Error("demo: the sandbox lists no open Forecast market");
  return {
    walletIndex: walletCount - 1,
    marketId: market.marketId,
    isYes: true,
    depositAmount: FORECAST_DEPOSIT_RAW,
  };
}

/** The Forecast position's take-profit target, from the price it was bought at. */
export function forecastTarget(world: World, open: DemoOpen, positionPubkey: string): ExitTarget {
  const position = world.findPosition(positionPubkey);
  if (position === undefined) throw new Error(`demo: the Forecast position ${positionPubkey} is not listed`);
  // Half again, short of the top (a Forecast market opens between $0.35 and $0.65): past 20 % anyway.
  const yesPriceMicro = Math.min(950_000, Math.round((position.avgPriceMicro * (100 + EXIT_MOVE_PCT)) / 100));
  return {
    rule: "take-profit",
    marketId: open.marketId,
    walletIndex: open.walletIndex,
    isYes: true,
    yesPriceMicro,
    startYesPriceMicro: position.avgPriceMicro,
    moveAfterMs: MOVE_AFTER_MS.forecast,
    forecast: true,
  };
}

/**
 * The small winner's open: half a contract for the first wallet on an open market no demo wallet holds
 * (so resolving it pays nobody else), one that needs a claim (not Forecast), far from its close.
 */
export function smallClaimOpen(world: World, walletCount: number, skip: ReadonlySet<string>): DemoOpen {
  const held = new Set<number>();
  for (let w = 0; w < walletCount; w += 1)
    for (const position of world.positionsOfWallet(w)) held.add(position.marketIndex);
  const market = world.markets.find(
    (m) =>
      m.forecast === undefined &&
      !held.has(m.index) &&
      !skip.has(m.marketId) &&
      world.marketState(m).status === "open" &&
      m.closeTime > world.now() + 6 * 3600,
  );
  if (market === undefined) throw new Error("demo: the sandbox lists no open market the wallets leave alone");
  return {
    walletIndex: 0,
    marketId: market.marketId,
    isYes: true,
    depositAmount: MIN_ORDER_RAW,
    contractsDecimal: SMALL_CLAIM_CONTRACTS,
  };
}

/** The demo's strategies, as a config file's `strategies:` would hold them. */
export function demoStrategies(targets: readonly ExitTarget[], nowSeconds: number): unknown[] {
  const usdc = MAINNET_MINTS.usdc;
  const sol = MAINNET_MINTS.sol;
  return [
    { name: "auto-claim" },
    {
      name: "exit-rules",
      // Rules for the chosen markets only: the other positions are the claims' part of the demo.
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

/** The public key of the position an exit target sells (the wallet's on that market and side). */
export function positionOfTarget(world: World, target: ExitTarget): string {
  const position = world
    .positionsOfWallet(target.walletIndex)
    .find((p) => world.marketOf(p).marketId === target.marketId && p.isYes === target.isYes);
  if (position === undefined) throw new Error(`demo: no position on ${target.marketId} to exit`);
  return world.positionPubkey(position);
}
