import { Worker } from "bullmq";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ConfiguredStrategy } from "../../../../src/config/load-config.js";
import { intentKeys } from "../../../../src/core/intent.js";
import { defineStrategy } from "../../../../src/core/strategy.js";
import { QUEUES, type RedisKeys } from "../../../../src/keeper/names.js";
import { IndexClaims } from "../../../../src/keeper/pipeline/index-claims.js";
import { processPoll } from "../../../../src/keeper/pipeline/poll-worker.js";
import type { ActionJobData, PollJobData } from "../../../../src/keeper/queues/queues.js";
import { autoClaim } from "../../../../strategies/auto-claim.js";
import { OTHER_WALLET, position, RESOLVED_MARKET, WALLET } from "../../../helpers/fixtures.js";
import { testHolding } from "../../../helpers/holdings.js";
import { type LedgerAndQueues, ledgerAndQueues } from "../../../helpers/ledger-queues.js";
import { testPollDeps } from "../../../helpers/poll-deps.js";

/** Claims every position it is shown (as auto-claim does a claimable one). */
const claimAll = defineStrategy<Record<string, never>>({
  name: "claim-all",
  contractVersion: 1,
  description: "test: claim every position",
  configSchema: {} as never,
  evaluate: ({ snapshot }) => ({
    intents: snapshot.positions.map((p) => ({
      kind: "claim" as const,
      key: intentKeys.claim(p.pubkey),
      wallet: snapshot.wallet,
      strategy: "claim-all",
      positionPubkey: p.pubkey,
      reason: "test",
    })),
    state: {},
  }),
});

const THIRD_WALLET = "So11111111111111111111111111111111111111112";

describe("builds of a targeted poll's intents run before the sweep's", () => {
  let ctx: LedgerAndQueues;
  let keys: RedisKeys;
  let worker: Worker<ActionJobData> | undefined;
  beforeEach(async () => {
    ctx = await ledgerAndQueues("build-priority");
    keys = ctx.keys;
  });
  afterEach(async () => {
    await worker?.close();
    await ctx.cleanup();
  });

  const poll = (wallet: string, count: number, target?: PollJobData["target"]) => {
    const positions = Array.from({ length: count }, () => position({ owner: wallet, ownerPubkey: wallet }));
    const strategies: ConfiguredStrategy[] = [{ name: "claim-all", strategy: claimAll as never, config: {} }];
    return processPoll(
      {
        id: `poll-${wallet}`,
        data: { wallet, kind: "positions", tick: 1, ...(target ? { target } : {}) },
      },
      testPollDeps(ctx, positions, { strategies }),
    );
  };

  /** The wallets whose builds one worker takes, in the order it takes them, once `count` were taken. */
  const buildOrder = async (count: number) => {
    const order: string[] = [];
    const { ledger } = ctx;
    worker = new Worker<ActionJobData>(
      QUEUES.actions,
      async (job) => {
        order.push((await ledger.get(job.data.intentKey))?.wallet ?? "unknown");
      },
      { connection: ctx.redis, prefix: keys.bullPrefix, concurrency: 1 },
    );
    await expect.poll(() => order.length, { timeout: 20_000, interval: 50 }).toBe(count);
    return order;
  };

  it("a build the watcher's poll asked for is taken before every build the sweep queued earlier", async () => {
    const sweepWallet = WALLET;
    const targetedWallet = OTHER_WALLET;
    expect(await poll(sweepWallet, 3)).toMatchObject({ admitted: 3 });
    expect(
      await poll(targetedWallet, 1, { trigger: "resolved", seenAtMs: Date.now(), marketIds: ["mkt-1"] }),
    ).toMatchObject({ admitted: 1 });

    const order = await buildOrder(4);
    expect(order).toEqual([targetedWallet, sweepWallet, sweepWallet, sweepWallet]);
  });

  it("a targeted poll's build goes before a resolution's burst of index claims queued earlier, which go before the sweep's", async () => {
    expect(await poll(WALLET, 1)).toMatchObject({ admitted: 1 });
    const indexClaims = new IndexClaims({
      mode: "live",
      strategies: [
        { name: autoClaim.name, strategy: autoClaim as never, config: autoClaim.configSchema.parse({}) },
      ],
      ledger: ctx.ledger,
      actions: ctx.queue<ActionJobData>(QUEUES.actions),
      logger: pino({ level: "silent" }),
      claimCost: { microUsd: async () => "2000" },
    });
    const winners = [
      "PosA111111111111111111111111111111111111111",
      "PosB111111111111111111111111111111111111111",
    ];
    expect(
      await indexClaims.claim(
        RESOLVED_MARKET,
        winners.map((pos) =>
          testHolding({
            wallet: THIRD_WALLET,
            marketId: "mkt-1",
            eventId: "evt-1",
            position: pos,
            contractsMicro: "5000000",
          }),
        ),
        Date.now(),
      ),
    ).toBe(true);
    expect(
      await poll(OTHER_WALLET, 1, { trigger: "price", seenAtMs: Date.now(), marketIds: ["mkt-2"] }),
    ).toMatchObject({ admitted: 1 });

    const order = await buildOrder(4);
    expect(order).toEqual([OTHER_WALLET, THIRD_WALLET, THIRD_WALLET, WALLET]);
  });
});
