import { describe, expect, it } from "vitest";
import { type Intent, intentSchema } from "../../../src/core/intent.js";
import type { Snapshot } from "../../../src/core/snapshot.js";
import type { Strategy, StrategyState } from "../../../src/core/strategy.js";
import { dca } from "../../../strategies/dca.js";
import { limitOrders, type TriggerOrdersSnapshot } from "../../../strategies/limit-orders.js";
import { sweep } from "../../../strategies/sweep.js";
import { fakePubkey, inFlight, OTHER_WALLET, snapshot, WALLET } from "../../helpers/fixtures.js";

/**
 * Intent keys are unique per wallet: the ledger admits a key once, so two wallets running the same
 * plan under one key would leave all but the first without their order.
 */

const USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const SOL = "So11111111111111111111111111111111111111112";
const T0 = 1_700_000_000;
/** The longest id config allows: the keys must still pass the intent schema. */
const LONG_ID = "x".repeat(64);

const configs = {
  dca: {
    plans: [
      {
        id: "weekly",
        inputMint: USDC,
        outputMint: SOL,
        inAmountRaw: "400000000",
        numberOfOrders: 4,
        intervalSeconds: 60,
      },
    ],
  },
  "limit-orders": {
    orders: [
      {
        id: "sell-sol",
        side: "sell",
        inputMint: SOL,
        outputMint: USDC,
        inputDecimals: 9,
        outputDecimals: 6,
        amount: "1",
        price: "150",
        ttlSeconds: 60,
      },
    ],
  },
  sweep: { rules: [{ id: "usdc", fromMint: USDC, toMint: SOL, keepRaw: "500" }] },
} as const;

function evaluate<C>(
  strategy: Strategy<C>,
  rawConfig: unknown,
  overrides: Partial<TriggerOrdersSnapshot> = {},
  state: StrategyState = {},
  at = T0,
) {
  const result = strategy.evaluate({
    // The service's recurring order list was read and is empty: a DCA round may start.
    snapshot: snapshot({ balances: { [USDC]: "1500" }, listedRecurringOrders: [], ...overrides }) as Snapshot,
    state,
    config: strategy.configSchema.parse(rawConfig),
    now: new Date(at * 1000),
  });
  for (const intent of result.intents) intentSchema.parse(intent); // what the engine will check
  return result;
}

const keysOf = (intents: readonly Intent[]) => intents.map((intent) => intent.key);

describe("intent keys carry the wallet", () => {
  it.each<[string, Strategy<unknown>, unknown, string]>([
    ["dca", dca as Strategy<unknown>, configs.dca, "dca-<wallet>-weekly-1"],
    ["limit-orders", limitOrders as Strategy<unknown>, configs["limit-orders"], "limit-<wallet>-sell-sol-1"],
    ["sweep", sweep as Strategy<unknown>, configs.sweep, "sweep-<wallet>-usdc-1"],
  ])("%s: two wallets, same config, two distinct keys", (_name, strategy, config, pattern) => {
    const first = evaluate(strategy, config, { wallet: WALLET });
    const second = evaluate(strategy, config, { wallet: OTHER_WALLET });
    expect(keysOf(first.intents)).toEqual([pattern.replace("<wallet>", WALLET)]);
    expect(keysOf(second.intents)).toEqual([pattern.replace("<wallet>", OTHER_WALLET)]);
    expect(first.intents[0]?.wallet).toBe(WALLET);
    expect(second.intents[0]?.wallet).toBe(OTHER_WALLET);
  });

  it("limit-orders: each wallet cancels its own order under its own key", () => {
    const keys = [WALLET, OTHER_WALLET].map((wallet) => {
      const created = evaluate(limitOrders, configs["limit-orders"], { wallet });
      const createKey = created.intents[0]?.key ?? "";
      const expired = evaluate(
        limitOrders,
        configs["limit-orders"],
        { wallet, triggerOrders: [{ key: createKey, order: fakePubkey(`order-${wallet}`) }] },
        created.state,
        T0 + 60,
      );
      return keysOf(expired.intents);
    });
    expect(keys).toEqual([
      [`limit-${WALLET}-sell-sol-1-cancel`],
      [`limit-${OTHER_WALLET}-sell-sol-1-cancel`],
    ]);
  });

  it("the longest id still makes keys the intent schema accepts", () => {
    const longest = {
      orders: [{ ...configs["limit-orders"].orders[0], id: LONG_ID }],
    };
    const created = evaluate(limitOrders, longest);
    const createKey = created.intents[0]?.key ?? "";
    const expired = evaluate(
      limitOrders,
      longest,
      { triggerOrders: [{ key: createKey, order: fakePubkey("order") }] },
      created.state,
      T0 + 60,
    );
    expect(keysOf(expired.intents)).toEqual([`limit-${WALLET}-${LONG_ID}-1-cancel`]);
    expect(keysOf(evaluate(dca, { plans: [{ ...configs.dca.plans[0], id: LONG_ID }] }).intents)).toEqual([
      `dca-${WALLET}-${LONG_ID}-1`,
    ]);
  });
});

describe("an upgrade: state from before keys carried the wallet keeps its old keys", () => {
  it("dca: a live round is asked for under its old key, the next round under the new one", () => {
    const old = { plans: { weekly: { round: 1, startedAt: T0, endsAt: T0 + 240, retryUntil: T0 + 60 } } };
    const during = evaluate(dca, configs.dca, {}, old, T0 + 10);
    expect(keysOf(during.intents)).toEqual(["dca-weekly-1"]);
    const repeating = { plans: [{ ...configs.dca.plans[0], repeat: true }] };
    expect(keysOf(evaluate(dca, repeating, {}, during.state, T0 + 240).intents)).toEqual([
      `dca-${WALLET}-weekly-2`,
    ]);
  });

  it("sweep: a round in flight under its old key is not asked again under a new one", () => {
    const old = { rules: { usdc: { round: 3, balance: "1500" } } };
    expect(
      evaluate(sweep, configs.sweep, { inFlight: [inFlight("sweep-usdc-3", "swap")] }, old).intents,
    ).toEqual([]);
    // Failed (not in flight, same balance): retried under its old key; landed: the next round is new.
    expect(keysOf(evaluate(sweep, configs.sweep, {}, old).intents)).toEqual(["sweep-usdc-3"]);
    expect(keysOf(evaluate(sweep, configs.sweep, { balances: { [USDC]: "900" } }, old).intents)).toEqual([
      `sweep-${WALLET}-usdc-4`,
    ]);
  });

  it("limit-orders: an order placed under its old key is not placed again, and is cancelled under it", () => {
    const order = configs["limit-orders"].orders[0];
    const created = evaluate(limitOrders, configs["limit-orders"]);
    const old = created.state as { orders: Record<string, Record<string, unknown>> };
    const { key: _scoped, ...withoutKey } = old.orders["sell-sol"] ?? {};
    const oldState = { ...old, orders: { "sell-sol": withoutKey } };
    const known = [{ key: "limit-sell-sol-1", order: fakePubkey("old-order") }];
    expect(
      evaluate(limitOrders, configs["limit-orders"], { triggerOrders: known }, oldState, T0 + 10).intents,
    ).toEqual([]);
    const expired = evaluate(
      limitOrders,
      configs["limit-orders"],
      { triggerOrders: known },
      oldState,
      T0 + 60,
    );
    expect(keysOf(expired.intents)).toEqual(["limit-sell-sol-1-cancel"]);
    // Cancelled: with new terms, the next generation is the wallet's own.
    const changed = { orders: [{ ...order, price: "160" }] };
    expect(
      keysOf(evaluate(limitOrders, changed, { triggerOrders: [] }, expired.state, T0 + 70).intents),
    ).toEqual([`limit-${WALLET}-sell-sol-2`]);
  });
});
