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
    config: closeAtMultiple.configSchema.parse(config),
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
