import pino from "pino";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { ConfiguredStrategy } from "../../../../src/config/load-config.js";
import type { Intent } from "../../../../src/core/intent.js";
import { defineStrategy, type Strategy } from "../../../../src/core/strategy.js";
import { frozenCopy, runStrategies } from "../../../../src/keeper/pipeline/run-strategies.js";
import { autoClaim } from "../../../../strategies/auto-claim.js";
import { OTHER_WALLET, position, snapshot } from "../../../helpers/fixtures.js";

const logger = pino({ level: "silent" });
const winner = position({ claimable: true });
const configured = (strategy: Strategy<unknown>, config: unknown = {}): ConfiguredStrategy => ({
  name: strategy.name,
  strategy,
  config,
});
const custom = (name: string, evaluate: Strategy<unknown>["evaluate"]) =>
  defineStrategy<unknown>({
    name,
    contractVersion: 1,
    description: name,
    configSchema: z.unknown(),
    evaluate,
  });

function run(strategies: ConfiguredStrategy[], states = new Map()) {
  const errors: string[] = [];
  const report = runStrategies({
    snapshot: snapshot({ positions: [winner] }),
    strategies,
    states,
    now: new Date(0),
    logger,
    onStrategyError: (s) => errors.push(s),
  });
  return { report, errors };
}

describe("runStrategies", () => {
  const claimStrategy = configured(autoClaim as Strategy<unknown>, autoClaim.configSchema.parse({}));

  it.each([
    [
      "throws",
      () => {
        throw new Error("boom");
      },
      "boom",
    ],
    ["returns nothing", () => undefined as never, "must return"],
    [
      "mutates its snapshot",
      ({ snapshot: s }: { snapshot: { positions: unknown[] } }) => {
        s.positions.push(1);
        return { intents: [], state: {} };
      },
      "not extensible",
    ],
    [
      "returns an intent for another wallet",
      () => ({
        intents: [{ kind: "closeAll", key: "close-all-x", wallet: OTHER_WALLET, strategy: "bad" } as Intent],
        state: {},
      }),
      "not the snapshot's wallet",
    ],
    [
      "returns a malformed intent",
      () => ({ intents: [{ kind: "claim", key: "has:colon" } as unknown as Intent], state: {} }),
      "intents[0]",
    ],
    ["returns a state that is not an object", () => ({ intents: [], state: 3 as never }), "state object"],
    [
      "returns a notice whose code is not a word (a metric label)",
      () => ({ intents: [], state: {}, notices: [{ code: "Order X unmatched", message: "m" }] }),
      "notices[0].code",
    ],
  ])("isolates a strategy that %s; the others still run", (_label, evaluate, message) => {
    const { report, errors } = run([configured(custom("bad", evaluate as never)), claimStrategy]);
    expect(errors).toEqual(["bad"]);
    expect(report.errors[0]?.error).toContain(message);
    expect(report.intents.map((i) => i.key)).toEqual([`claim-${winner.pubkey}`]);
    expect(report.states.has("bad")).toBe(false);
  });

  it("keeps one intent per key when two strategies ask for the same effect", () => {
    const twin = configured(
      custom("twin", () => ({
        intents: [
          {
            kind: "claim",
            key: `claim-${winner.pubkey}`,
            wallet: snapshot().wallet,
            strategy: "twin",
            positionPubkey: winner.pubkey,
          },
        ],
        state: { seen: 1 },
      })),
    );
    const { report } = run([claimStrategy, twin]);
    expect(report.intents).toHaveLength(1);
    expect(report.states.get("twin")).toEqual({ seen: 1 });
  });

  it("hands each strategy its own state", () => {
    const counting = configured(
      custom("counting", ({ state }) => ({ intents: [], state: { n: Number(state.n ?? 0) + 1 } })),
    );
    const { report } = run([counting], new Map([["counting", { n: 41 }]]));
    expect(report.states.get("counting")).toEqual({ n: 42 });
  });
});

describe("runStrategies: notices", () => {
  it("logs and counts each notice of a strategy that ran cleanly", () => {
    const lines: Array<Record<string, unknown>> = [];
    const capture = pino({ level: "warn" }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const counted: Array<[string, string]> = [];
    const noticing = custom("noticing", () => ({
      intents: [],
      state: {},
      notices: [{ code: "dca_order_unmatched", message: "order X is not the plan's" }],
    }));
    const report = runStrategies({
      snapshot: snapshot(),
      strategies: [configured(noticing)],
      states: new Map(),
      now: new Date(0),
      logger: capture,
      onStrategyNotice: (strategy, code) => counted.push([strategy, code]),
    });
    expect(report.notices).toEqual([
      { strategy: "noticing", code: "dca_order_unmatched", message: "order X is not the plan's" },
    ]);
    expect(counted).toEqual([["noticing", "dca_order_unmatched"]]);
    expect(lines).toEqual([
      expect.objectContaining({
        msg: "strategy notice",
        strategy: "noticing",
        notice: "dca_order_unmatched",
        message: "order X is not the plan's",
      }),
    ]);
  });
});

describe("frozenCopy: what strategies get of a snapshot and a state", () => {
  it("copies JSON data whole, frozen all the way down, without touching the original", () => {
    const original = JSON.parse(
      '{"wallet":"w","positions":[{"pubkey":"p","n":1,"tags":["a",null],"meta":{"x":true}}],"empty":{}}',
    );
    const copy = frozenCopy(original);
    expect(copy).toEqual(original);
    expect(copy).not.toBe(original);
    for (const part of [
      copy,
      copy.positions,
      copy.positions[0],
      copy.positions[0].tags,
      copy.positions[0].meta,
    ])
      expect(Object.isFrozen(part)).toBe(true);
    expect(Object.isFrozen(original.positions[0])).toBe(false);
    original.positions[0].n = 2;
    expect(copy.positions[0].n).toBe(1);
  });

  it("keeps a __proto__ key from JSON as data, not as the copy's prototype", () => {
    const hostile = JSON.parse('{"__proto__":{"claimable":true},"pubkey":"p"}');
    const copy = frozenCopy(hostile) as Record<string, unknown>;
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(copy.claimable).toBeUndefined();
    expect(Object.keys(copy)).toEqual(["__proto__", "pubkey"]);
  });

  it("clones what is not plain data (a Date) as structuredClone does", () => {
    const copy = frozenCopy({ at: new Date(5) });
    expect(copy.at).toBeInstanceOf(Date);
    expect(copy.at.getTime()).toBe(5);
    expect(Object.isFrozen(copy)).toBe(true);
  });
});
