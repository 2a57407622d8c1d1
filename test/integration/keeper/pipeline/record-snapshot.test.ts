import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Snapshot } from "../../../../src/core/snapshot.js";
import { processPoll } from "../../../../src/keeper/pipeline/poll-worker.js";
import { readRecording } from "../../../../src/keeper/replay/read-recording.js";
import { recordLineOf } from "../../../../src/keeper/replay/recording.js";
import { RecordWriter } from "../../../../src/ops/record-writer.js";
import { position } from "../../../helpers/fixtures.js";
import { type LedgerAndQueues, ledgerAndQueues } from "../../../helpers/ledger-queues.js";
import { quietExitRules, testPollDeps } from "../../../helpers/poll-deps.js";

const HELD = position({ openOrders: 0, sellPriceUsd: "650000" });
const NOW = 1_767_355_200;
const strategies = quietExitRules;

describe("the poll tells what it read to the recording, and a failing recording never fails the poll", () => {
  let ctx: LedgerAndQueues;
  beforeEach(async () => {
    ctx = await ledgerAndQueues("record-snapshot");
  });
  afterEach(async () => {
    await ctx.cleanup();
  });

  const poll = (onSnapshot: (snapshot: Snapshot) => void) =>
    processPoll(
      { id: "poll-1", data: { wallet: HELD.ownerPubkey, kind: "positions", tick: NOW } },
      testPollDeps(ctx, [HELD], { strategies, now: () => new Date(NOW * 1000), events: { onSnapshot } }),
    );

  it("records the positions and the time the strategies saw, in the format replay reads", async () => {
    const dir = await mkdtemp(join(tmpdir(), "keeper-rec-"));
    const writer = new RecordWriter({ dir });
    expect(await poll((snapshot) => writer.write(recordLineOf(snapshot)))).toMatchObject({ intents: 0 });
    await writer.flush();
    const [recorded, ...more] = await readRecording(dir);
    expect(more).toEqual([]);
    expect(recorded?.line).toMatchObject({ v: 1, at: NOW, wallet: HELD.ownerPubkey });
    expect(recorded?.line.positions).toEqual([HELD]);
    expect(recorded?.where).toBe(join(dir, "2026-01-02.jsonl.gz:1"));
  });

  it("a listener that throws: the poll goes on and records its poll time", async () => {
    const [redisSecondBefore] = await ctx.redis.time();
    const result = await poll(() => {
      throw new Error("disk on fire");
    });
    expect(result.skipped).toBeUndefined();
    // Recorded by Redis's clock when the poll's record lands (see refreshPollTimes).
    expect(Number(await ctx.redis.zscore(ctx.keys.lastPolls, HELD.ownerPubkey))).toBeGreaterThanOrEqual(
      Number(redisSecondBefore),
    );
  });
});
