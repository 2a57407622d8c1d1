import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KeeperConfig } from "../../src/config/load-config.js";
import type { RunningKeeper } from "../../src/keeper/keeper.js";
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
  const before = Number((await keeper.redis.hget(keeper.keys.lastPolls, wallet)) ?? 0);
  await eventually(`${count} more polls`, async () => {
    const now = Number((await keeper.redis.hget(keeper.keys.lastPolls, wallet)) ?? 0);
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
    // The default signer concurrency (4): the recurring and the trigger order of this one wallet are
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
