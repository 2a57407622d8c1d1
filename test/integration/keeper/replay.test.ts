import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { beforeAll, describe, expect, it } from "vitest";
import { recordSandbox } from "../../../src/cli/sandbox-record.js";
import type { ConfiguredStrategy } from "../../../src/config/load-config.js";
import { type ReplayExit, replay } from "../../../src/keeper/replay/engine.js";
import { sellFill } from "../../../src/keeper/replay/fill-model.js";
import { type RecordedPoll, readRecording } from "../../../src/keeper/replay/read-recording.js";
import { DrivenClock } from "../../../src/sandbox/world/clock.js";
import { closePlan } from "../../../src/sandbox/world/prediction-handlers.js";
import { exitRules } from "../../../strategies/exit-rules/index.js";
import { startCheckedSandbox } from "../../helpers/checked-sandbox.js";
import { positionsOf } from "../../helpers/keeper-harness.js";

const silent = pino({ level: "silent" });

function exitRulesWith(config: Record<string, unknown>): ConfiguredStrategy {
  return {
    name: "exit-rules",
    strategy: exitRules as ConfiguredStrategy["strategy"],
    config: exitRules.configSchema.parse(config),
  };
}

/** An exit without what the report adds from the recording's end (`held`): the decision and its fill. */
const decision = ({ held: _held, ...rest }: ReplayExit) => rest;

describe("replay over a recording of the sandbox world", () => {
  let polls: RecordedPoll[];
  const strategies = [exitRulesWith({ takeProfitPct: 20, stopLossPct: 10 })];

  beforeAll(async () => {
    const dir = join(await mkdtemp(join(tmpdir(), "keeper-replay-")), "recording");
    await recordSandbox({ out: dir, minutes: 240, everySeconds: 60, seed: 3 }, () => {});
    polls = await readRecording(dir);
  }, 60_000);

  it("reads every poll in time order: 241 steps of 4 wallets", () => {
    expect(polls).toHaveLength(241 * 4);
    const times = polls.map(({ line }) => line.at);
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });

  it("a decision at t reads nothing recorded after t: a planted future price changes no earlier exit", () => {
    const honest = replay({ polls, strategies, logger: silent });
    // A time with exits on both sides of it.
    const t = honest.exits.find((e) => e.at > (polls[0]?.line.at ?? 0))?.at ?? 0;
    expect(honest.exits.some((e) => e.at <= t)).toBe(true);
    // From the next poll on, every bid and mark at $0.99: every position still held is a take-profit.
    const planted = polls.map((poll) =>
      poll.line.at <= t
        ? poll
        : {
            ...poll,
            line: {
              ...poll.line,
              positions: poll.line.positions.map((p) => ({
                ...p,
                sellPriceUsd: "990000",
                markPriceUsd: "990000",
              })),
            },
          },
    );
    const future = replay({ polls: planted, strategies, logger: silent });
    const upTo = (exits: readonly ReplayExit[]) => exits.filter((e) => e.at <= t).map(decision);
    expect(upTo(future.exits)).toEqual(upTo(honest.exits));
    // The plant is seen once its time comes: the same replay after t is another story.
    const later = (exits: readonly ReplayExit[]) => exits.filter((e) => e.at > t).map(decision);
    expect(later(future.exits)).not.toEqual(later(honest.exits));
    expect(later(future.exits).every((e) => e.rule === "take-profit" && e.bid === 990_000n)).toBe(true);
  });

  it("follows its own fills: a position sold is gone from that wallet's later snapshots", () => {
    const result = replay({ polls, strategies, logger: silent });
    const sold = new Set(result.exits.map((e) => e.position));
    expect(sold.size).toBe(result.exits.length);
    // Without the replay's own state, a rule that fired would fire again on every later poll.
    expect(result.exits.length).toBeGreaterThan(0);
  });

  it("fills a sell as the sandbox does: the bid, its fees, the $5 smallest order", async () => {
    const sandbox = await startCheckedSandbox({
      port: 0,
      clock: new DrivenClock(),
      chain: false,
      rateLimit: false,
      seed: 3,
    });
    try {
      let compared = 0;
      for (const wallet of sandbox.wallets)
        for (const position of await positionsOf(sandbox, wallet)) {
          const record = sandbox.world.positions.find(
            (p) => sandbox.world.positionPubkey(p) === position.pubkey,
          );
          const fill = sellFill(position);
          if (!record || !fill.filled) continue;
          const plan = closePlan(sandbox.world, record, 0);
          expect({ gross: fill.gross, fees: fill.fees, net: fill.net }).toEqual({
            gross: BigInt(plan.grossMicro),
            fees: BigInt(plan.protocolFeeMicro + plan.venueFeeMicro),
            net: BigInt(plan.netMicro),
          });
          compared += 1;
        }
      expect(compared).toBeGreaterThan(10);
      const [any] = await positionsOf(sandbox, sandbox.wallets[0] ?? "");
      if (!any) throw new Error("wallet 0 holds nothing");
      // 10 contracts at $0.49: $4.90 is under the smallest order; at $0.50, $5.00 sells.
      const small = { ...any, contracts: "10", contractsMicro: "10000000" };
      expect(sellFill({ ...small, sellPriceUsd: "490000" })).toEqual({
        filled: false,
        why: "under the $5 smallest order",
      });
      expect(sellFill({ ...small, sellPriceUsd: "500000" })).toMatchObject({
        filled: true,
        gross: 5_000_000n,
      });
      expect(sellFill({ ...small, sellPriceUsd: null })).toEqual({ filled: false, why: "no bid" });
    } finally {
      await sandbox.close();
    }
  });
});
