import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ConfiguredStrategy } from "../../../../src/config/load-config.js";
import type { Intent } from "../../../../src/core/intent.js";
import { defineStrategy } from "../../../../src/core/strategy.js";
import type { RedisKeys } from "../../../../src/keeper/names.js";
import type { ProtectionsConfig } from "../../../../src/keeper/operator/circuit-breakers.js";
import { Protections } from "../../../../src/keeper/operator/protections.js";
import { processPoll } from "../../../../src/keeper/pipeline/poll-worker.js";
import type { LedgerRow } from "../../../../src/keeper/state/ledger.js";
import { StrategyStateStore } from "../../../../src/keeper/state/strategy-state.js";
import { position, WALLET } from "../../../helpers/fixtures.js";
import { type LedgerAndQueues, ledgerAndQueues } from "../../../helpers/ledger-queues.js";
import { testPollDeps } from "../../../helpers/poll-deps.js";

// 2026-01-02T12:00:00Z
const NOW = 1_767_355_200;
const MINT_A = "So11111111111111111111111111111111111111112";
const MINT_B = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const CLAIMABLE = position({ claimable: true });

/** A strategy that asks for one claim and one new trigger order on every poll. */
const both = defineStrategy<Record<string, never>>({
  name: "both",
  contractVersion: 1,
  description: "test: a claim and an order",
  configSchema: {} as never,
  evaluate: ({ snapshot }) => ({
    intents: [
      {
        kind: "claim",
        key: `claim-${CLAIMABLE.pubkey}`,
        wallet: snapshot.wallet,
        strategy: "both",
        positionPubkey: CLAIMABLE.pubkey,
      },
      {
        kind: "createTrigger",
        key: "limit-test-1",
        wallet: snapshot.wallet,
        strategy: "both",
        inputMint: MINT_A,
        outputMint: MINT_B,
        makingAmount: "1000",
        takingAmount: "2000",
      },
    ],
    state: {},
  }),
});

/** A strategy that places one trigger order, once: its state remembers that it asked. */
const placeOnce = defineStrategy<Record<string, never>>({
  name: "place-once",
  contractVersion: 1,
  description: "test: one order, remembered in state",
  configSchema: {} as never,
  evaluate: ({ snapshot, state }) =>
    state.placed === true
      ? { intents: [], state }
      : {
          intents: [
            {
              kind: "createTrigger",
              key: "limit-once-1",
              wallet: snapshot.wallet,
              strategy: "place-once",
              inputMint: MINT_A,
              outputMint: MINT_B,
              makingAmount: "1000",
              takingAmount: "2000",
            },
          ],
          state: { placed: true },
        },
});

function closeRow(key: string, proceeds: string, cost: string, exitRule: string): LedgerRow {
  const intent: Intent = {
    kind: "close",
    key,
    wallet: WALLET,
    strategy: "exit-rules",
    positionPubkey: `${key.slice(-8)}${"1".repeat(36)}`,
    exitRule,
    costBasisMicroUsd: cost,
  };
  return {
    key,
    kind: "close",
    wallet: WALLET,
    strategy: "exit-rules",
    status: "sending",
    intent,
    tries: 1,
    builds: 1,
    amountMicroUsd: proceeds,
    createdAt: NOW,
    updatedAt: NOW,
  };
}

describe("protections against real Redis: state, changes, and what a poll holds back", () => {
  let ctx: LedgerAndQueues;
  let keys: RedisKeys;
  beforeEach(async () => {
    ctx = await ledgerAndQueues("protections", {
      options: { maxTries: 3, retryAfterSeconds: 60 },
      nowSeconds: () => NOW,
    });
    keys = ctx.keys;
  });
  afterEach(async () => {
    await ctx.cleanup();
  });

  function poll(
    protections: Protections,
    events: Parameters<typeof processPoll>[1]["events"] = {},
    strategies: ConfiguredStrategy[] = [{ name: "both", strategy: both as never, config: {} }],
  ) {
    return processPoll(
      { id: `poll-${Math.random()}`, data: { wallet: WALLET, kind: "positions", tick: NOW } },
      testPollDeps(ctx, [CLAIMABLE], { strategies, now: () => new Date(NOW * 1000), protections, events }),
    );
  }

  it("a daily loss trips the breaker once, holds back orders (not claims), and a reset lifts it", async () => {
    const config: ProtectionsConfig = { dailyLossLimitUsd: 5 };
    const protections = new Protections(ctx.redis, keys, config);
    const seen: string[] = [];
    const events = {
      onBreakerChange: (c: { breaker: string; isTripped: boolean }) =>
        seen.push(`${c.breaker}:${c.isTripped ? "tripped" : "reset"}`),
    };

    // Nothing lost yet: both intents go through.
    const first = await poll(protections, events);
    expect(first).toMatchObject({ admitted: 2, heldBack: 0 });

    // A $6 loss: proceeds $4 for a position that cost $10. Recorded twice (a re-run): counted once.
    await protections.recordExit(closeRow("close-aaaaaaaa", "4000000", "10000000", "take-profit"), NOW - 60);
    await protections.recordExit(closeRow("close-aaaaaaaa", "4000000", "10000000", "take-profit"), NOW - 30);
    const evaluation = await protections.evaluate(NOW);
    expect(evaluation.dailyLossMicroUsd).toBe(6_000_000n);
    expect(evaluation.tripped).toEqual(["daily_loss"]);

    // The order of a new generation is held back; a new claim is not.
    await ctx.redis.del(keys.ledgerIntent("limit-test-1"), keys.ledgerIntent(`claim-${CLAIMABLE.pubkey}`));
    await ctx.redis.del(keys.ledgerInFlight(WALLET));
    const tripped = await poll(protections, events);
    expect(tripped).toMatchObject({ admitted: 1, heldBack: 1 });
    expect(await ctx.redis.exists(keys.ledgerIntent("limit-test-1"))).toBe(0);
    expect(await ctx.redis.exists(keys.ledgerIntent(`claim-${CLAIMABLE.pubkey}`))).toBe(1);
    // A second poll (another replica, say) does not announce the trip again.
    await poll(protections, events);
    expect(seen).toEqual(["daily_loss:tripped"]);

    // Reset by hand: the loss no longer counts, the order is admitted, the reset is announced once.
    await protections.reset(NOW);
    const after = await poll(protections, events);
    expect(after).toMatchObject({ heldBack: 0 });
    expect(await ctx.redis.exists(keys.ledgerIntent("limit-test-1"))).toBe(1);
    expect(seen).toEqual(["daily_loss:tripped", "daily_loss:reset"]);
  });

  it("stop-loss exits within the window pause new orders; other exits do not count", async () => {
    const protections = new Protections(ctx.redis, keys, {
      stopLossPause: { afterExits: 2, windowSeconds: 600, pauseSeconds: 3_600 },
    });
    await protections.recordExit(closeRow("close-bbbbbbbb", "9000000", "10000000", "stop-loss"), NOW - 500);
    await protections.recordExit(
      closeRow("close-cccccccc", "12000000", "10000000", "take-profit"),
      NOW - 300,
    );
    expect((await protections.evaluate(NOW)).tripped).toEqual([]);
    await protections.recordExit(
      closeRow("close-dddddddd", "9000000", "10000000", "trailing-stop"),
      NOW - 100,
    );
    const evaluation = await protections.evaluate(NOW);
    expect(evaluation.tripped).toEqual(["stop_loss_streak"]);
    expect(evaluation.breakers.find((b) => b.name === "stop_loss_streak")?.until).toBe(NOW - 100 + 3_600);
    expect(await poll(protections)).toMatchObject({ admitted: 1, heldBack: 1 });
    // The pause runs out by itself.
    expect((await protections.evaluate(NOW + 3_600)).tripped).toEqual([]);
  });

  it("the close-all trigger adds one close-all of the wallet per UTC day", async () => {
    const protections = new Protections(ctx.redis, keys, { closeAllOnDailyLossUsd: 5 });
    await protections.recordExit(closeRow("close-eeeeeeee", "1000000", "10000000", "stop-loss"), NOW - 60);
    const result = await poll(protections);
    // The claim, the order (no breaker is configured to hold it back) and the close-all.
    expect(result).toMatchObject({ admitted: 3, heldBack: 0 });
    const row = await ctx.ledger.get(`close-all-${WALLET}-20260102`);
    expect(row).toMatchObject({ kind: "closeAll", strategy: "protections", status: "pending" });
    expect(row?.reason).toContain("$9.00");
    // The next poll does not add a second one.
    expect((await poll(protections)).admitted).toBe(0);
  });

  it("a strategy whose order is held back keeps its old state, so it asks again once the breaker resets", async () => {
    const protections = new Protections(ctx.redis, keys, { dailyLossLimitUsd: 5 });
    await protections.recordExit(closeRow("close-ffffffff", "4000000", "10000000", "stop-loss"), NOW - 60);
    const strategies: ConfiguredStrategy[] = [
      { name: "place-once", strategy: placeOnce as never, config: {} },
    ];
    const states = new StrategyStateStore(ctx.redis, keys);

    expect(await poll(protections, {}, strategies)).toMatchObject({ admitted: 0, heldBack: 1 });
    expect(await states.load(WALLET, "place-once")).not.toMatchObject({ placed: true });

    await protections.reset(NOW);
    expect(await poll(protections, {}, strategies)).toMatchObject({ admitted: 1, heldBack: 0 });
    expect(await ctx.redis.exists(keys.ledgerIntent("limit-once-1"))).toBe(1);
    expect(await states.load(WALLET, "place-once")).toMatchObject({ placed: true });
  });
});
