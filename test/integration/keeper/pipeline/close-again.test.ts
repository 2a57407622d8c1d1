import type { Queue } from "bullmq";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ConfiguredStrategy } from "../../../../src/config/load-config.js";
import { intentKeys } from "../../../../src/core/intent.js";
import { defineStrategy } from "../../../../src/core/strategy.js";
import { QUEUES } from "../../../../src/keeper/names.js";
import { RECLOSE_AFTER_SECONDS } from "../../../../src/keeper/pipeline/close-chain.js";
import { processPoll } from "../../../../src/keeper/pipeline/poll-worker.js";
import type { ActionJobData } from "../../../../src/keeper/queues/queues.js";
import type { Ledger } from "../../../../src/keeper/state/ledger.js";
import { position } from "../../../helpers/fixtures.js";
import { type LedgerAndQueues, ledgerAndQueues } from "../../../helpers/ledger-queues.js";
import { testPollDeps } from "../../../helpers/poll-deps.js";

const OPEN = position({ openOrders: 0 });
const KEY = intentKeys.close(OPEN.pubkey);

/** An exit that fires on every poll while the position is listed open (as exit-rules does). */
const closeWhileOpen = defineStrategy<Record<string, never>>({
  name: "close-while-open",
  contractVersion: 1,
  description: "test: close the position while it is listed",
  configSchema: {} as never,
  evaluate: ({ snapshot }) => ({
    intents: snapshot.positions.map((p) => ({
      kind: "close" as const,
      key: intentKeys.close(p.pubkey),
      wallet: snapshot.wallet,
      strategy: "close-while-open",
      positionPubkey: p.pubkey,
      reason: "stop-loss: test",
    })),
    state: {},
  }),
});

describe("a close that confirmed but left its position open is asked for again, once per close", () => {
  let ctx: LedgerAndQueues;
  let actions: Queue<ActionJobData>;
  let ledger: Ledger;
  let now: number;
  beforeEach(async () => {
    ctx = await ledgerAndQueues("close-again", {
      options: { maxTries: 3, retryAfterSeconds: 60 },
      nowSeconds: () => now,
    });
    ({ ledger } = ctx);
    actions = ctx.queue(QUEUES.actions);
    now = 1_767_355_200;
  });
  afterEach(async () => {
    await ctx.cleanup();
  });

  const poll = () => {
    const strategies: ConfiguredStrategy[] = [
      { name: "close-while-open", strategy: closeWhileOpen as never, config: {} },
    ];
    return processPoll(
      { id: `poll-${now}`, data: { wallet: OPEN.ownerPubkey, kind: "positions", tick: now } },
      testPollDeps(ctx, [OPEN], { strategies, now: () => new Date(now * 1000) }),
    );
  };
  const closeKeys = async () => (await ledger.list()).filter((r) => r.kind === "close").map((r) => r.key);

  it("not while the close is in flight or just confirmed; then once under a key of its own", async () => {
    expect(await poll()).toMatchObject({ admitted: 1 });
    expect(await closeKeys()).toEqual([KEY]);
    // In flight: nothing more.
    expect(await poll()).toMatchObject({ admitted: 0 });

    await ledger.update(KEY, { status: "confirmed" });
    const confirmedAt = now;
    // The service still lists the position open: too early to say the close did not take.
    now += RECLOSE_AFTER_SECONDS - 1;
    expect(await poll()).toMatchObject({ admitted: 0 });

    now += 1;
    expect(await poll()).toMatchObject({ admitted: 1 });
    const again = `${KEY}-after-${confirmedAt}`;
    expect((await closeKeys()).sort()).toEqual([KEY, again].sort());
    expect(await ledger.get(again)).toMatchObject({
      status: "pending",
      intent: { positionPubkey: OPEN.pubkey },
    });
    expect((await actions.getJobs(["waiting", "prioritized"])).map((j) => j.data.intentKey)).toContain(again);
    // ...and not a third time while that one is in flight.
    now += RECLOSE_AFTER_SECONDS * 2;
    expect(await poll()).toMatchObject({ admitted: 0 });
  });

  it("a close refused by the policy is never asked for again", async () => {
    await poll();
    await ledger.update(KEY, { status: "refused", reason: "outflow_sol" });
    now += RECLOSE_AFTER_SECONDS * 10;
    expect(await poll()).toMatchObject({ admitted: 0 });
    expect(await closeKeys()).toEqual([KEY]);
  });
});
