import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningKeeper } from "../../src/app/start-keeper.js";
import { StrategyStateStore } from "../../src/keeper/state/strategy-state.js";
import type { RunningSandbox } from "../../src/sandbox/index.js";
import {
  eventually,
  loadTestConfig,
  positionsOf,
  startTestKeeper,
  startTestSandbox,
  writeKeeperConfig,
} from "../helpers/keeper-harness.js";
import { lastPollsOf } from "../helpers/last-polls.js";
import { testRedis } from "../helpers/redis.js";

const EXAMPLE = resolve("strategies/examples/close-at-multiple.ts");
const MULTIPLE = 1.3;

/** A user strategy, plain JS: it writes into its state what its snapshots carried of the order lists. */
const ORDER_LIST_READER = `export default {
  name: "reads-orders",
  contractVersion: 1,
  description: "test: remembers the order lists it was given",
  configSchema: { safeParse: (value) => ({ success: true, data: value }) },
  needs: () => ({ orderLists: ["trigger", "recurring"] }),
  evaluate: ({ snapshot }) => ({
    intents: [],
    state: {
      trigger: snapshot.listedTriggerOrders ? snapshot.listedTriggerOrders.length : null,
      recurring: snapshot.listedRecurringOrders ? snapshot.listedRecurringOrders.length : null,
    },
  }),
};
`;

/**
 * User strategies get what the built-ins get, through the hooks of the strategy contract: one that
 * declares it needs the order lists finds them in its snapshots (no list is read without one: see
 * snapshotNeeds' and orderListsFor's tests); the
 * example close-at-multiple, which declares the price at which it would close, gets the market
 * watcher's poll when a price gets there. The sweeps run once a day, so after the sweep at start only
 * the watcher can poll a wallet.
 */
describe("user strategies through the contract's hooks, end to end", () => {
  let sandbox: RunningSandbox;
  let keeper: RunningKeeper;
  let redis: Awaited<ReturnType<typeof testRedis>>;

  beforeAll(async () => {
    ({ sandbox } = await startTestSandbox({ walletCount: 4 }));
    redis = await testRedis("e2e-user-hooks");
    const dir = await mkdtemp(join(tmpdir(), "keeper-user-hooks-"));
    await writeFile(join(dir, "reads-orders.mjs"), ORDER_LIST_READER);
    const config = await loadTestConfig(
      await writeKeeperConfig(sandbox, redis.prefix, {
        pollPositions: "0 0 3 * * *",
        pollOrders: "0 0 3 * * *",
        extra: `watcher:
  schedule: "* * * * * *"
strategies:
  - name: reads-orders
    module: ${join(dir, "reads-orders.mjs")}
  - name: close-at-multiple
    module: ${EXAMPLE}
    multiple: ${MULTIPLE}
`,
      }),
    );
    ({ keeper } = await startTestKeeper(config, sandbox));
  }, 60_000);

  afterAll(async () => {
    await keeper?.stop();
    await sandbox?.close();
    await redis?.cleanup();
  });

  it("gives the order lists to a strategy that needs them", async () => {
    const states = new StrategyStateStore(keeper.redis, keeper.keys);
    for (const wallet of sandbox.wallets) {
      const seen = await eventually(
        "the first poll of the wallet",
        async () => {
          const state = await states.load(wallet, "reads-orders");
          return "trigger" in state ? state : undefined;
        },
        60_000,
      );
      expect(seen).toEqual({ trigger: expect.any(Number), recurring: expect.any(Number) });
    }
  }, 90_000);

  it("polls a holder when a price reaches the example's threshold, and its close lands", async () => {
    await eventually(
      "every wallet swept once, nothing in flight",
      async () => {
        const polled = await lastPollsOf(keeper.redis, keeper.keys);
        if (!sandbox.wallets.every((w) => polled[w] !== undefined)) return undefined;
        const ledger = await keeper.ledger.list();
        return ledger.every((row) => ["confirmed", "failed", "refused"].includes(row.status))
          ? true
          : undefined;
      },
      60_000,
    );
    // A YES position the example would close only well above today's price: at 1.3 x its average
    // price, itself below 0.70, so that a mark of 0.985 clears it, fees included.
    const positions = (await Promise.all(sandbox.wallets.map((w) => positionsOf(sandbox, w)))).flat();
    const chosen = positions.find(
      (p) =>
        p.marketMetadata.status === "open" &&
        p.isYes &&
        !p.claimed &&
        p.openOrders === 0 &&
        BigInt(p.sizeUsd) > 0n &&
        BigInt(p.totalCostUsd) > 0n &&
        BigInt(p.avgPriceUsd) < 700_000n &&
        p.valueUsd !== null &&
        BigInt(p.valueUsd) * 10n < BigInt(p.totalCostUsd) * 13n,
    );
    expect(chosen).toBeDefined();
    if (!chosen) return;
    const marketId = chosen.marketId;
    const before = await keeper.ledger.list();
    expect(before.some((r) => r.key === `close-${chosen.pubkey}`)).toBe(false);

    sandbox.world.setPrice(marketId, 985_000);

    await eventually(
      "a confirmed close of the chosen position",
      async () => {
        const row = (await keeper.ledger.list()).find((r) => r.key === `close-${chosen.pubkey}`);
        return row?.status === "confirmed" ? row : undefined;
      },
      90_000,
    );
    // The service lists it sold, and the watcher asked for the poll that found it.
    const after = (await positionsOf(sandbox, chosen.ownerPubkey)).find((p) => p.pubkey === chosen.pubkey);
    expect(after === undefined || BigInt(after.sizeUsd) === 0n || after.contracts === "0").toBe(true);
    const jobs = await keeper.queues.poll.getJobs([
      "completed",
      "failed",
      "active",
      "waiting",
      "prioritized",
    ]);
    expect(
      jobs.some(
        (j) =>
          j?.data.wallet === chosen.ownerPubkey &&
          j.data.target?.trigger === "price" &&
          j.data.target.marketIds.includes(marketId),
      ),
    ).toBe(true);
  }, 180_000);
});
