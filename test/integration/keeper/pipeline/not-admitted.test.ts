import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ConfiguredStrategy } from "../../../../src/config/load-config.js";
import { defineStrategy } from "../../../../src/core/strategy.js";
import type { RedisKeys } from "../../../../src/keeper/names.js";
import type { PollEvents } from "../../../../src/keeper/pipeline/poll-worker.js";
import { processPoll } from "../../../../src/keeper/pipeline/poll-worker.js";
import type { Ledger } from "../../../../src/keeper/state/ledger.js";
import { StrategyStateStore } from "../../../../src/keeper/state/strategy-state.js";
import { createMetrics } from "../../../../src/ops/metrics.js";
import { dca } from "../../../../strategies/dca.js";
import { captureLogger } from "../../../helpers/capture-logger.js";
import { OTHER_WALLET, WALLET } from "../../../helpers/fixtures.js";
import { type LedgerAndQueues, ledgerAndQueues } from "../../../helpers/ledger-queues.js";
import { testPollDeps } from "../../../helpers/poll-deps.js";

const USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const SOL = "So11111111111111111111111111111111111111112";
const KEY = "plan-1"; // on purpose without the wallet, as the built-ins' keys were

/** Asks for one swap under the same key on every poll of every wallet. */
const sameKeyEverywhere = defineStrategy<Record<string, never>>({
  name: "same-key",
  contractVersion: 1,
  description: "test: one key for all wallets",
  configSchema: {} as never,
  evaluate: ({ snapshot }) => ({
    intents: [
      {
        kind: "swap" as const,
        key: KEY,
        wallet: snapshot.wallet,
        strategy: "same-key",
        inputMint: USDC,
        outputMint: SOL,
        amount: "1000000",
      },
    ],
    state: {},
  }),
});

describe("an intent the ledger does not admit is logged and counted, with why", () => {
  let ctx: LedgerAndQueues;
  let keys: RedisKeys;
  let ledger: Ledger;
  let now: number;
  beforeEach(async () => {
    ctx = await ledgerAndQueues("not-admitted", {
      options: { maxTries: 2, retryAfterSeconds: 60 },
      nowSeconds: () => now,
    });
    ({ keys, ledger } = ctx);
    now = 1_767_355_200;
  });
  afterEach(async () => {
    await ctx.cleanup();
  });

  const poller =
    (
      strategies: ConfiguredStrategy[],
      logger: ReturnType<typeof captureLogger>["logger"],
      events: PollEvents = {},
    ) =>
    (wallet: string) =>
      processPoll(
        { id: `poll-${wallet}-${now}`, data: { wallet, kind: "positions", tick: now } },
        testPollDeps(ctx, [], {
          strategies,
          logger,
          now: () => new Date(now * 1000),
          events,
          // The service lists no recurring orders (read on every poll, as for a configured dca).
          source: {
            positions: async () => [],
            pendingOrders: async () => [],
            recurringOrders: async () => [],
          },
        }),
      );

  it("in flight, done, failed (not yet due), refused, and held by another wallet", async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    const { logger, lines } = captureLogger("debug");
    const strategies = [{ name: "same-key", strategy: sameKeyEverywhere as never, config: {} }];
    const poll = poller(strategies, logger, {
      onIntentNotAdmitted: (intent, reason) =>
        metrics.recordIntentNotAdmitted(intent.strategy, intent.kind, reason),
    });
    const reasons = () =>
      lines()
        .filter((line) => line.msg === "intent not admitted")
        .map((line) => [line.wallet, line.status, line.reason]);

    expect(await poll(WALLET)).toMatchObject({ admitted: 1 });
    expect(await poll(WALLET)).toMatchObject({ admitted: 0 });
    expect(await poll(OTHER_WALLET)).toMatchObject({ admitted: 0 });
    await ledger.update(KEY, { status: "failed", error: "test" });
    expect(await poll(WALLET)).toMatchObject({ admitted: 0 }); // within retryAfterSeconds
    now += 60;
    expect(await poll(WALLET)).toMatchObject({ admitted: 1 }); // try 2 of 2
    await ledger.update(KEY, { status: "confirmed" });
    expect(await poll(WALLET)).toMatchObject({ admitted: 0 });
    await ctx.redis.hset(keys.ledgerIntent(KEY), "status", "refused");
    expect(await poll(WALLET)).toMatchObject({ admitted: 0 });

    expect(reasons()).toEqual([
      [WALLET, "pending", "in_flight"],
      [OTHER_WALLET, "pending", "other_wallet"],
      [WALLET, "failed", "failed"],
      [WALLET, "confirmed", "done"],
      [WALLET, "refused", "refused"],
    ]);
    const line = lines().find((l) => l.msg === "intent not admitted");
    expect(line).toMatchObject({ level: "debug", intent: KEY, kind: "swap", strategy: "same-key" });
    const text = await metrics.render();
    for (const reason of ["in_flight", "other_wallet", "failed", "done", "refused"])
      expect(text).toContain(
        `keeper_intents_not_admitted_total{strategy="same-key",kind="swap",reason="${reason}"} 1`,
      );
  });

  it("an upgrade: a DCA round done under its old key is not placed again; a new round of each wallet is its own", async () => {
    const { logger } = captureLogger("debug");
    const plan = {
      id: "weekly",
      inputMint: USDC,
      outputMint: SOL,
      inAmountRaw: "400000000",
      numberOfOrders: 4,
      intervalSeconds: 60,
    };
    const strategies = [
      {
        name: "dca",
        strategy: dca as never,
        config: dca.configSchema.parse({ plans: [{ ...plan, repeat: true }] }),
      },
    ];
    const poll = poller(strategies, logger);
    const states = new StrategyStateStore(ctx.redis, keys);
    // As the keeper before the change left it: WALLET placed round 1 under `dca-weekly-1`; OTHER_WALLET's
    // state says its round 1 started, but the ledger gave the key to WALLET.
    const oldRound = { round: 1, startedAt: now, endsAt: now + 240, retryUntil: now + 60 };
    const oldIntent = {
      kind: "createRecurring" as const,
      key: "dca-weekly-1",
      wallet: WALLET,
      strategy: "dca",
      inputMint: USDC,
      outputMint: SOL,
      inAmount: plan.inAmountRaw,
      numberOfOrders: 4,
      intervalSeconds: 60,
    };
    await ledger.admit(oldIntent);
    await ledger.update("dca-weekly-1", { status: "confirmed" });
    for (const wallet of [WALLET, OTHER_WALLET])
      await states.save(wallet, "dca", { plans: { weekly: oldRound } });

    now += 10; // within the round's first interval: it is asked for on every poll
    expect(await poll(WALLET)).toMatchObject({ intents: 1, admitted: 0 });
    expect(await poll(OTHER_WALLET)).toMatchObject({ intents: 1, admitted: 0 });
    expect((await ledger.list()).map((r) => r.key)).toEqual(["dca-weekly-1"]);

    now += 240; // the round ended: the next one, under each wallet's own key
    expect(await poll(WALLET)).toMatchObject({ admitted: 1 });
    expect(await poll(OTHER_WALLET)).toMatchObject({ admitted: 1 });
    const rows = await ledger.list();
    expect(rows.map((r) => [r.key, r.wallet]).sort()).toEqual(
      [
        ["dca-weekly-1", WALLET],
        [`dca-${WALLET}-weekly-2`, WALLET],
        [`dca-${OTHER_WALLET}-weekly-2`, OTHER_WALLET],
      ].sort(),
    );
  });
});
