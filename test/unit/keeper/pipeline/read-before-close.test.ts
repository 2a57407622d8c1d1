import pino from "pino";
import { describe, expect, it } from "vitest";
import type { Intent } from "../../../../src/core/intent.js";
import type { Position } from "../../../../src/core/schemas/prediction.js";
import { defineStrategy, type Strategy } from "../../../../src/core/strategy.js";
import {
  closeStillDue,
  type ReadBeforeCloseDeps,
} from "../../../../src/keeper/pipeline/read-before-close.js";
import { fakePubkey, marketMetadata, position, WALLET } from "../../../helpers/fixtures.js";

const P = fakePubkey("Read");
const close: Extract<Intent, { kind: "close" }> = {
  kind: "close",
  key: `close-${P}`,
  wallet: WALLET,
  strategy: "mine",
  positionPubkey: P,
  exitRule: "my-rule",
};

/** A strategy whose closeStillDue answers `answer` (or throws it, when it is an Error). */
function withHook(answer: unknown, seen: unknown[] = []): Strategy {
  return defineStrategy<unknown>({
    name: "mine",
    contractVersion: 1,
    description: "test",
    configSchema: { parse: (v: unknown) => v } as never,
    evaluate: ({ state }) => ({ intents: [], state }),
    closeStillDue(input) {
      seen.push(input);
      if (answer instanceof Error) throw answer;
      return answer as never;
    },
  });
}

function deps(read: Position | undefined, strategy?: Strategy, errors: string[] = []): ReadBeforeCloseDeps {
  return {
    readPosition: async () => read,
    strategies: strategy ? [{ name: "mine", strategy, config: { threshold: 1 } }] : [],
    loadState: async () => ({ peak: 7 }),
    now: () => new Date(1_700_000_200_000),
    logger: pino({ level: "silent" }),
    onStrategyError: (name) => errors.push(name),
  };
}

describe("read before selling: closeStillDue", () => {
  it.each<[string, Position | undefined, string, RegExp]>([
    ["gone (404)", undefined, "not_found", /no longer knows/],
    ["claimed", position({ pubkey: P, claimed: true }), "not_open", /claimed/],
    ["claimable", position({ pubkey: P, claimable: true }), "not_open", /claimed, not sold/],
    [
      "its market closed",
      position({ pubkey: P, marketMetadata: marketMetadata({ status: "closed" }) }),
      "not_open",
      /market is closed/,
    ],
    [
      "nothing left",
      position({ pubkey: P, contracts: "0", contractsMicro: "0", sizeUsd: "0" }),
      "not_open",
      /no contracts/,
    ],
    [
      "another wallet's",
      position({ pubkey: P, ownerPubkey: fakePubkey("Other") }),
      "not_open",
      /another wallet/,
    ],
  ])(
    "drops a close whose position is %s, without asking the strategy",
    async (_label, read, reason, detail) => {
      const seen: unknown[] = [];
      expect(await closeStillDue(close, deps(read, withHook({ isDue: true, reason: "x" }, seen)))).toEqual({
        isDue: false,
        reason,
        detail: expect.stringMatching(detail),
      });
      expect(seen).toEqual([]);
    },
  );

  it("asks the strategy with the fresh position, its config and state, and the rule that fired", async () => {
    const seen: unknown[] = [];
    const read = position({ pubkey: P, sellPriceUsd: "100000" });
    const verdict = await closeStillDue(
      close,
      deps(read, withHook({ isDue: false, reason: "gone below" }, seen)),
    );
    expect(verdict).toEqual({ isDue: false, reason: "rule_not_met", detail: "gone below" });
    expect(seen).toEqual([
      {
        config: { threshold: 1 },
        position: read,
        state: { peak: 7 },
        exitRule: "my-rule",
        nowSeconds: 1_700_000_200,
      },
    ]);
  });

  it.each<[string, Strategy | undefined, string[]]>([
    ["a strategy without the hook (or no longer configured)", undefined, []],
    ["a hook that throws (counted)", withHook(new Error("boom")), ["mine"]],
    ["a hook that answers something else (counted)", withHook({ due: "yes" }), ["mine"]],
  ])("keeps the close due for %s", async (_label, strategy, expectedErrors) => {
    const errors: string[] = [];
    expect(await closeStillDue(close, deps(position({ pubkey: P }), strategy, errors))).toEqual({
      isDue: true,
    });
    expect(errors).toEqual(expectedErrors);
  });
});
