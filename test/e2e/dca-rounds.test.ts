import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningKeeper } from "../../src/app/start-keeper.js";
import type { KeeperConfig } from "../../src/config/load-config.js";
import type { RunningSandbox } from "../../src/sandbox/index.js";
import type { SwapOrderRecord } from "../../src/sandbox/world/world.js";
import {
  eventually,
  loadTestConfig,
  startTestKeeper,
  startTestSandbox,
  writeKeeperConfig,
} from "../helpers/keeper-harness.js";
import { testRedis } from "../helpers/redis.js";

/**
 * Issue 22, finding 8: a DCA round starts only when the service says the previous one is over. The
 * sandbox's recurring orders run until the test finishes them (`settleOrder`), so each one outlives
 * the two seconds its plan schedules (2 orders, 1 s apart): executions late or skipped, as on the
 * live service. Overlaps are counted from the sandbox's own orders, sampled every 20 ms.
 */
describe("dca rounds end to end: never two open orders of one plan, with faults and restarts", () => {
  let sandbox: RunningSandbox;
  let clock: Awaited<ReturnType<typeof startTestSandbox>>["clock"];
  let keeper: RunningKeeper | undefined;
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let config: KeeperConfig;
  let wallet: string;
  let sampler: ReturnType<typeof setInterval> | undefined;
  /** Orders seen open together with another of the plan, and the most seen open at once. */
  const overlapping = new Set<string>();
  let mostOpen = 0;
  let samples = 0;

  const AMOUNT = 100_000_000n;
  /** The wallet's recurring orders of the plan's mints, whatever their amount. */
  const planOrders = (): SwapOrderRecord[] =>
    [...sandbox.world.swapOrders.values()].filter(
      (o) =>
        o.kind === "recurring" &&
        o.maker === wallet &&
        o.inputMint === sandbox.usdcMint &&
        o.outputMint === sandbox.tokenMints.keep,
    );
  const openOrders = () => planOrders().filter((o) => o.status === "open");
  const listFails = (rate: number) =>
    sandbox.faults.configure("getRecurringOrders", { errorRate: rate, errorStatus: 503 });

  async function polls(count: number) {
    const k = keeper;
    if (!k) throw new Error("no keeper running");
    const before = Number((await k.redis.zscore(k.keys.lastPolls, wallet)) ?? 0);
    await eventually(
      `${count} more polls`,
      async () => {
        const now = Number((await k.redis.zscore(k.keys.lastPolls, wallet)) ?? 0);
        return now >= before + count ? true : undefined;
      },
      60_000,
    );
  }
  /** Waits for the plan's `count`-th order, open on the sandbox, and returns it. */
  const nthOrderOpen = (count: number) =>
    eventually(
      `the plan's order ${count} open on the sandbox`,
      async () => {
        const all = planOrders();
        return all.length >= count && openOrders().length > 0 ? openOrders()[0] : undefined;
      },
      60_000,
    );

  const configFor = async (amount: bigint) =>
    loadTestConfig(
      await writeKeeperConfig(sandbox, redis.prefix, {
        walletYaml: `wallets:\n  - pubkey: ${wallet}\n`,
        extra: `strategies:
  - name: dca
    plans:
      - id: keep-fast
        inputMint: USDC
        outputMint: KEEP
        inAmountRaw: "${amount}"
        numberOfOrders: 2
        intervalSeconds: 1
        repeat: true
`,
      }),
    );

  beforeAll(async () => {
    ({ sandbox, clock } = await startTestSandbox());
    redis = await testRedis("e2e-dca-rounds");
    wallet = sandbox.wallets[0] ?? "";
    config = await configFor(AMOUNT);
    sampler = setInterval(() => {
      const open = openOrders();
      samples += 1;
      mostOpen = Math.max(mostOpen, open.length);
      if (open.length > 1) for (const o of open) overlapping.add(o.order);
    }, 20);
  }, 60_000);

  afterAll(async () => {
    if (sampler) clearInterval(sampler);
    await keeper?.stop();
    await sandbox?.close();
    await redis?.cleanup();
  });

  it("starts each round only once the service lists the previous one finished", async () => {
    // A third of the list reads fail throughout; the windows below make every one fail.
    listFails(0.33);
    keeper = (await startTestKeeper(config, sandbox)).keeper;
    const first = await nthOrderOpen(1);
    // Past its schedule on both clocks, the list read: the order is still open, Keeper waits.
    clock.advance(60);
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    await polls(3);
    expect(openOrders().map((o) => o.order)).toEqual([first?.order]);

    // Every list read fails, well past the round's schedule: nothing new.
    listFails(1);
    await polls(4);
    expect(planOrders()).toHaveLength(1);
    // The service finishes the order, but Keeper cannot read that yet: still nothing new.
    sandbox.world.settleOrder(first?.order ?? "", "completed");
    await polls(3);
    expect(planOrders()).toHaveLength(1);
    // The list reads again: the next round, once.
    listFails(0.33);
    const second = await nthOrderOpen(2);
    expect(second?.order).not.toBe(first?.order);

    // A keeper restart while the list cannot be read, past the round's schedule.
    await keeper.stop();
    listFails(1);
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    keeper = (await startTestKeeper(config, sandbox)).keeper;
    await polls(4);
    expect(planOrders()).toHaveLength(2);
    listFails(0.33);
    await polls(4);
    expect(openOrders().map((o) => o.order)).toEqual([second?.order]);
    sandbox.world.settleOrder(second?.order ?? "", "completed");
    const third = await nthOrderOpen(3);

    // Redis loses everything (state, ledger, queues) while the keeper is down, and the first polls
    // after cannot read the list: the plan takes the listed order as its round 1, places none.
    await keeper.stop();
    await wipe(redis);
    listFails(1);
    keeper = (await startTestKeeper(config, sandbox)).keeper;
    await polls(4);
    expect(planOrders()).toHaveLength(3);
    listFails(0.33);
    await polls(4);
    expect(openOrders().map((o) => o.order)).toEqual([third?.order]);
    sandbox.world.settleOrder(third?.order ?? "", "completed");
    const fourth = await nthOrderOpen(4);
    await polls(3);

    // Four rounds, one at a time, counted on the sandbox.
    expect(planOrders()).toHaveLength(4);
    expect(openOrders().map((o) => o.order)).toEqual([fourth?.order]);
    expect(samples).toBeGreaterThan(100);
    expect(mostOpen).toBe(1);
    expect([...overlapping]).toEqual([]);
  }, 240_000);

  it("reports an open order of the plan's mints it cannot match, and places nothing beside it", async () => {
    const [open] = openOrders();
    expect(open?.inAmountRaw).toBe(AMOUNT);
    // Redis loses the state and the plan's amount changes: the listed order is not the plan's.
    await keeper?.stop();
    await wipe(redis);
    listFails(0);
    keeper = (await startTestKeeper(await configFor(150_000_000n), sandbox)).keeper;
    const k = keeper;
    const stateKey = k.keys.strategyState(wallet, "dca");
    const waiting = await eventually(
      "the unmatched order in the dca state",
      async () => {
        const state = JSON.parse((await k.redis.get(stateKey)) ?? "{}");
        return state.unmatched?.["keep-fast"];
      },
      60_000,
    );
    expect(waiting.order).toBe(open?.order);
    await polls(4);
    expect(planOrders().filter((o) => o.inAmountRaw === 150_000_000n)).toEqual([]);
    const notices = (await k.metrics.strategyNotices.get()).values;
    expect(notices).toEqual([
      expect.objectContaining({ labels: { strategy: "dca", notice: "dca_order_unmatched" }, value: 1 }),
    ]);
    // The order runs out: the plan starts, with its new amount.
    sandbox.world.settleOrder(open?.order ?? "", "completed");
    await eventually(
      "the plan's first order at its new amount",
      async () => (openOrders().some((o) => o.inAmountRaw === 150_000_000n) ? true : undefined),
      60_000,
    );
    await polls(3);
    expect(openOrders()).toHaveLength(1);
    expect(mostOpen).toBe(1);
    expect([...overlapping]).toEqual([]);
  }, 120_000);
});

/** Every key under the test's prefix, as a Redis restart without persistence would leave it. */
async function wipe(redis: Awaited<ReturnType<typeof testRedis>>) {
  let cursor = "0";
  do {
    const [next, keys] = await redis.redis.scan(cursor, "MATCH", `${redis.prefix}*`, "COUNT", 500);
    cursor = next;
    if (keys.length > 0) await redis.redis.del(...keys);
  } while (cursor !== "0");
}
