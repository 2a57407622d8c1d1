import { Worker } from "bullmq";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ConfiguredStrategy } from "../../../../src/config/load-config.js";
import { intentKeys } from "../../../../src/core/intent.js";
import { defineStrategy } from "../../../../src/core/strategy.js";
import { QUEUES, type RedisKeys } from "../../../../src/keeper/names.js";
import { processPoll } from "../../../../src/keeper/pipeline/poll-worker.js";
import type { ActionJobData, PollJobData } from "../../../../src/keeper/queues/queues.js";
import { OTHER_WALLET, position, WALLET } from "../../../helpers/fixtures.js";
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

  it("a build the watcher's poll asked for is taken before every build the sweep queued earlier", async () => {
    const sweepWallet = WALLET;
    const targetedWallet = OTHER_WALLET;
    expect(await poll(sweepWallet, 3)).toMatchObject({ admitted: 3 });
    expect(
      await poll(targetedWallet, 1, { trigger: "resolved", seenAtMs: Date.now(), marketIds: ["mkt-1"] }),
    ).toMatchObject({ admitted: 1 });

    const order: string[] = [];
    const { ledger } = ctx;
    worker = new Worker<ActionJobData>(
      QUEUES.actions,
      async (job) => {
        order.push((await ledger.get(job.data.intentKey))?.wallet ?? "unknown");
      },
      { connection: ctx.redis, prefix: keys.bullPrefix, concurrency: 1 },
    );
    await expect.poll(() => order.length, { timeout: 20_000, interval: 50 }).toBe(4);
    expect(order).toEqual([targetedWallet, sweepWallet, sweepWallet, sweepWallet]);
  });
});
