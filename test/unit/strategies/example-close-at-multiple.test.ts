import { describe, expect, it } from "vitest";
import { formatIssues } from "../../../src/config/format-issues.js";
import { intentSchema } from "../../../src/core/intent.js";
import type { Position } from "../../../src/core/schemas/prediction.js";
import type { InFlightIntent } from "../../../src/core/snapshot.js";
import { closeAtMultiple } from "../../../strategies/examples/close-at-multiple.js";
import { inFlight, marketMetadata, position, snapshot } from "../../helpers/fixtures.js";

// The fixture position cost $6.00 (totalCostUsd) and is worth $7.00.
const now = new Date(1_700_000_200_000);

function run(config: Record<string, unknown>, p: Position, inFlightIntents: InFlightIntent[] = []) {
  return closeAtMultiple.evaluate({
    snapshot: snapshot({ positions: [p], inFlight: inFlightIntents }),
    state: {},
    // The mark basis, as the example had it before the realizable basis (its tests: below).
    config: closeAtMultiple.configSchema.parse({ priceBasis: "mark", ...config }),
    now,
  }).intents;
}

describe("example strategy close-at-multiple", () => {
  it.each<[string, Record<string, unknown>, Partial<Position>, boolean]>([
    ["worth less than double: nothing", {}, {}, false],
    ["worth exactly double: close", {}, { valueUsd: "12000000" }, true],
    ["a lower multiple reached", { multiple: 1.1 }, {}, true],
    ["a multiple just missed", { multiple: 1.166667 }, {}, false],
    ["cheaper than minCostUsd: nothing", { multiple: 1.1, minCostUsd: 6.01 }, {}, false],
    ["open orders: nothing", { multiple: 1.1 }, { openOrders: 1 }, false],
    ["claimable: nothing (auto-claim's)", { multiple: 1.1 }, { claimable: true }, false],
    [
      "market closed: nothing",
      { multiple: 1.1 },
      { marketMetadata: marketMetadata({ status: "closed" }) },
      false,
    ],
  ])("%s", (_label, config, overrides, closes) => {
    const p = position(overrides);
    const intents = run(config, p);
    expect(intents).toEqual(
      closes
        ? [
            {
              kind: "close",
              key: `close-${p.pubkey}`,
              wallet: p.ownerPubkey,
              strategy: "close-at-multiple",
              positionPubkey: p.pubkey,
              costBasisMicroUsd: "6000000",
              reason: expect.stringMatching(/^close-at-multiple: value \d+ >= [\d.]+ x cost 6000000/),
            },
          ]
        : [],
    );
    for (const intent of intents) intentSchema.parse(intent);
  });

  it("leaves a position another strategy is already closing", () => {
    const p = position({ valueUsd: "12000000" });
    expect(run({}, p, [inFlight(`close-${p.pubkey}`, "close", { positionPubkey: p.pubkey })])).toEqual([]);
    expect(run({}, p, [inFlight("close-all-x", "closeAll")])).toEqual([]);
  });

  it.each<[Record<string, unknown>, string]>([
    [{ multiple: 1 }, "multiple: expected a multiple above 1 and at most 100, such as 2"],
    [{ multiple: "2" }, "multiple: expected a multiple above 1 and at most 100, such as 2"],
    [{ minCostUsd: -1 }, "minCostUsd: expected dollars >= 0"],
    [{ mutliple: 2 }, "mutliple: unknown key"],
  ])("refuses %j", (config, problem) => {
    const parsed = closeAtMultiple.configSchema.safeParse(config);
    expect(parsed.success).toBe(false);
    if (!parsed.success) expect(formatIssues(parsed.error)).toEqual([problem]);
  });
});

describe("example strategy close-at-multiple: its priceThresholds hook", () => {
  // The fixture's average price is $0.60 a contract.
  it.each<[string, Record<string, unknown>, Partial<Position>, { above: string } | undefined]>([
    ["the default, double: $1.20, above what a contract pays, none", {}, {}, undefined],
    ["1.25: at 1.25 x 0.60", { multiple: 1.25 }, {}, { above: "750000" }],
    ["1.5: at 1.5 x 0.60", { multiple: 1.5 }, {}, { above: "900000" }],
    ["1.1: at 1.1 x 0.60", { multiple: 1.1 }, {}, { above: "660000" }],
    ["exactly $1 is still a price", { multiple: 2 }, { avgPriceUsd: "500000" }, { above: "1000000" }],
    ["above $1: never reached, none", { multiple: 2 }, { avgPriceUsd: "500001" }, undefined],
    ["open orders: none", { multiple: 1.1 }, { openOrders: 1 }, undefined],
    ["claimable: none", { multiple: 1.1 }, { claimable: true }, undefined],
    ["cheaper than minCostUsd: none", { multiple: 1.1, minCostUsd: 6.01 }, {}, undefined],
    ["market closed: none", {}, { marketMetadata: marketMetadata({ status: "closed" }) }, undefined],
  ])("%s", (_label, config, overrides, expected) => {
    const parsed = closeAtMultiple.configSchema.parse(config);
    expect(closeAtMultiple.priceThresholds?.(parsed, position(overrides))).toEqual(expected);
  });
});
