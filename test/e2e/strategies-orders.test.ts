import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningKeeper } from "../../src/app/start-keeper.js";
import type { KeeperConfig } from "../../src/config/load-config.js";
import type { RunningSandbox } from "../../src/sandbox/index.js";
import {
  eventually,
  loadTestConfig,
  startTestKeeper,
  startTestSandbox,
  usdcBalance,
  writeKeeperConfig,
} from "../helpers/keeper-harness.js";
import { testRedis } from "../helpers/redis.js";

async function morePolls(keeper: RunningKeeper, wallet: string, count: number) {
  const before = Number((await keeper.redis.zscore(keeper.keys.lastPolls, wallet)) ?? 0);
  await eventually(`${count} more polls`, async () => {
    const now = Number((await keeper.redis.zscore(keeper.keys.lastPolls, wallet)) ?? 0);
    return now >= before + count ? true : undefined;
  });
}

describe("dca and limit-orders end to end: recurring and trigger orders through the execute endpoints", () => {
  let sandbox: RunningSandbox;
  let keeper: RunningKeeper | undefined;
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let config: KeeperConfig;
  let wallet: string;

  beforeAll(async () => {
    ({ sandbox } = await startTestSandbox());
    redis = await testRedis("e2e-orders");
    wallet = sandbox.wallets[0] ?? "";
    // Tokens by symbol: resolved once at start through token search.
    const extra = `strategies:
  - name: dca
    plans:
      - id: keep-weekly
        inputMint: USDC
        outputMint: KEEP
        inAmountRaw: "100000000"
        numberOfOrders: 2
        intervalSeconds: 604800
  - name: limit-orders
    orders:
      - id: buy-keep
        side: buy
        inputMint: USDC
        outputMint: Keeper Token
        inputDecimals: 6
        outputDecimals: 6
        amount: "10"
        price: "0.40"
        ttlSeconds: 3
`;
    const file = await writeKeeperConfig(sandbox, redis.prefix, {
      extra,
      walletYaml: `wallets:\n  - pubkey: ${wallet}\n`,
    });
    // The default signer concurrency (16): the recurring and the trigger order of this one wallet are
    // checked side by side, and neither may count the other's outflow as its own.
    config = await loadTestConfig(file);
    expect(config.signer.concurrency).toBeGreaterThan(1);
  }, 60_000);

  afterAll(async () => {
    await keeper?.stop();
    await sandbox?.close();
    await redis?.cleanup();
  });

  it("creates one recurring order and one trigger order, cancels the trigger after its TTL, and nothing twice across a restart", async () => {
    const usdcBefore = await usdcBalance(sandbox, wallet, sandbox.usdcMint);
    const keepMint = sandbox.world.tokens.byKey("keep")?.mint;
    keeper = (await startTestKeeper(config, sandbox)).keeper;
    const first = keeper;

    const rows = await eventually(
      "the recurring order, the trigger order and its cancel confirmed",
      async () => {
        const all = await first.ledger.list();
        const done = [
          `dca-${wallet}-keep-weekly-1`,
          `limit-${wallet}-buy-keep-1`,
          `limit-${wallet}-buy-keep-1-cancel`,
        ].every((key) => all.find((r) => r.key === key)?.status === "confirmed");
        return done ? all : undefined;
      },
      60_000,
    );
    const dca = rows.find((r) => r.key === `dca-${wallet}-keep-weekly-1`);
    const create = rows.find((r) => r.key === `limit-${wallet}-buy-keep-1`);
    const cancel = rows.find((r) => r.key === `limit-${wallet}-buy-keep-1-cancel`);
    expect(dca).toMatchObject({ kind: "createRecurring", strategy: "dca" });
    expect(dca?.requestId).toBeTruthy();
    expect(dca?.intent).toMatchObject({ inputMint: sandbox.usdcMint, outputMint: keepMint });
    expect(create).toMatchObject({ kind: "createTrigger", strategy: "limit-orders" });
    expect(create?.order).toBeTruthy();
    expect(create?.intent).toMatchObject({
      inputMint: sandbox.usdcMint,
      outputMint: keepMint,
      makingAmount: "10000000",
      takingAmount: "25000000",
    });
    expect(cancel?.intent).toMatchObject({ kind: "cancelTrigger", order: create?.order });
    expect(cancel?.reason).toMatch(/^ttl: order buy-keep/);

    // The service saw them through the execute endpoints: the recurring order is open, the trigger cancelled.
    const orders = [...sandbox.world.swapOrders.values()];
    expect(orders.filter((o) => o.kind === "recurring")).toHaveLength(1);
    expect(sandbox.world.swapOrders.get(create?.order ?? "")?.status).toBe("cancelled");
    // The recurring order escrowed its 100 USDC; the trigger's 10 came back with its cancel.
    expect(await usdcBalance(sandbox, wallet, sandbox.usdcMint)).toBe(usdcBefore - 100_000_000n);
    // The ledger no longer lists the trigger order as open.
    expect(await first.ledger.triggerOrders(wallet)).toEqual([]);

    // A restart: the plan's round and the expired order are not placed again.
    await first.stop();
    keeper = (await startTestKeeper(config, sandbox)).keeper;
    await morePolls(keeper, wallet, 3);
    const after = await keeper.ledger.list();
    expect(after.map((r) => r.key).sort()).toEqual(
      [
        `dca-${wallet}-keep-weekly-1`,
        `limit-${wallet}-buy-keep-1`,
        `limit-${wallet}-buy-keep-1-cancel`,
      ].sort(),
    );
    expect([...sandbox.world.swapOrders.values()].filter((o) => o.kind === "recurring")).toHaveLength(1);
  }, 120_000);
});

describe("dca and limit-orders end to end: the service's order lists are the orders' true state", () => {
  let sandbox: RunningSandbox;
  let keeper: RunningKeeper | undefined;
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let wallet: string;

  // Long enough for the order to still be open when the test settles it on a busy machine.
  const LIMIT_TTL_SECONDS = 15;
  const plans = (withStopPlan: boolean) => `strategies:
  - name: dca
    plans:
      - id: keep-daily
        inputMint: USDC
        outputMint: KEEP
        inAmountRaw: "100000000"
        numberOfOrders: 2
        intervalSeconds: 86400
        repeat: true
${
  withStopPlan
    ? `      - id: keep-stop
        inputMint: USDC
        outputMint: KEEP
        inAmountRaw: "120000000"
        numberOfOrders: 2
        intervalSeconds: 86400
`
    : ""
}  - name: limit-orders
    orders:
      - id: buy-keep
        side: buy
        inputMint: USDC
        outputMint: KEEP
        inputDecimals: 6
        outputDecimals: 6
        amount: "10"
        price: "0.40"
        ttlSeconds: ${LIMIT_TTL_SECONDS}
`;
  const configWith = async (withStopPlan: boolean) =>
    loadTestConfig(
      await writeKeeperConfig(sandbox, redis.prefix, {
        extra: plans(withStopPlan),
        walletYaml: `wallets:\n  - pubkey: ${wallet}\n`,
      }),
    );
  const confirmed = (k: RunningKeeper, keys: string[], what: string) =>
    eventually(
      what,
      async () => {
        const all = await k.ledger.list();
        return keys.every((key) => all.find((r) => r.key === key)?.status === "confirmed") ? all : undefined;
      },
      60_000,
    );
  const recurringOf = (amount: bigint) =>
    [...sandbox.world.swapOrders.values()].filter((o) => o.kind === "recurring" && o.inAmountRaw === amount);

  beforeAll(async () => {
    ({ sandbox } = await startTestSandbox());
    redis = await testRedis("e2e-order-lists");
    wallet = sandbox.wallets[0] ?? "";
  }, 60_000);

  afterAll(async () => {
    await keeper?.stop();
    await sandbox?.close();
    await redis?.cleanup();
  });

  it("starts the next DCA round when the service completes one, leaves a filled limit order alone, and cancels a removed plan's order", async () => {
    const usdcBefore = await usdcBalance(sandbox, wallet, sandbox.usdcMint);
    keeper = (await startTestKeeper(await configWith(true), sandbox)).keeper;
    const first = keeper;
    const rows = await confirmed(
      first,
      [`dca-${wallet}-keep-daily-1`, `dca-${wallet}-keep-stop-1`, `limit-${wallet}-buy-keep-1`],
      "both plans' first rounds and the limit order confirmed",
    );
    const created = rows.find((r) => r.key === `limit-${wallet}-buy-keep-1`);
    const trigger = created?.order ?? "";
    expect(sandbox.world.swapOrders.get(trigger)?.status, "still open before its TTL").toBe("open");
    const [daily] = recurringOf(100_000_000n);
    expect(daily?.status).toBe("open");

    // Keeper learns a round's order from the list on a poll after its create confirmed (a round
    // finished before Keeper ever saw it open ends on its planned time instead).
    await morePolls(first, wallet, 2);
    // The service finishes both by itself: the round's orders ran, the limit order traded.
    sandbox.world.settleOrder(daily?.order ?? "", "completed");
    sandbox.world.settleOrder(trigger, "filled");

    // The round planned for two days is over: the next starts now.
    await confirmed(first, [`dca-${wallet}-keep-daily-2`], "the second round of the daily plan");
    // Past the limit order's TTL, polls see it filled and ask for no cancel.
    await eventually(
      "a poll after the limit order's TTL",
      async () => {
        const last = Number((await first.redis.zscore(first.keys.lastPolls, wallet)) ?? 0);
        return last > (created?.createdAt ?? 0) + LIMIT_TTL_SECONDS ? true : undefined;
      },
      60_000,
    );
    await morePolls(first, wallet, 2);
    const keys = (await first.ledger.list()).map((r) => r.key);
    expect(keys).not.toContain(`limit-${wallet}-buy-keep-1-cancel`);
    expect(keys).not.toContain(`limit-${wallet}-buy-keep-2`);
    expect(sandbox.world.swapOrders.get(trigger)?.status).toBe("filled");
    expect(
      recurringOf(100_000_000n)
        .map((o) => o.status)
        .sort(),
    ).toEqual(["completed", "open"]);

    // The stop plan leaves the config: its open order is cancelled through the recurring endpoints.
    await first.stop();
    keeper = (await startTestKeeper(await configWith(false), sandbox)).keeper;
    const cancelRows = await confirmed(
      keeper,
      [`dca-${wallet}-keep-stop-1-cancel`],
      "the removed plan's cancel",
    );
    const stop = recurringOf(120_000_000n);
    expect(stop).toHaveLength(1);
    expect(stop[0]?.status).toBe("cancelled");
    expect(cancelRows.find((r) => r.key === `dca-${wallet}-keep-stop-1-cancel`)).toMatchObject({
      kind: "cancelRecurring",
      strategy: "dca",
    });
    await morePolls(keeper, wallet, 2);
    // Nothing twice: three recurring orders in all, one trigger order; the stopped plan's 120 USDC
    // came back, the two daily rounds (200) and the filled limit order (10) stay spent.
    expect([...sandbox.world.swapOrders.values()].filter((o) => o.kind === "recurring")).toHaveLength(3);
    expect([...sandbox.world.swapOrders.values()].filter((o) => o.kind === "trigger")).toHaveLength(1);
    expect(await usdcBalance(sandbox, wallet, sandbox.usdcMint)).toBe(usdcBefore - 210_000_000n);
    const ledgerKeys = (await keeper.ledger.list()).map((r) => r.key).sort();
    expect(ledgerKeys).toEqual(
      [
        `dca-${wallet}-keep-daily-1`,
        `dca-${wallet}-keep-daily-2`,
        `dca-${wallet}-keep-stop-1`,
        `dca-${wallet}-keep-stop-1-cancel`,
        `limit-${wallet}-buy-keep-1`,
      ].sort(),
    );
  }, 180_000);
});
