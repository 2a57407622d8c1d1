import { describe, expect, it } from "vitest";
import { capLastValidBlockHeight } from "../../../src/chain/blockhash-lifetime.js";

describe("capLastValidBlockHeight", () => {
  it("keeps the service's height when a blockhash could live that long", () => {
    expect(capLastValidBlockHeight(1_150, 1_000)).toBe(1_150);
    expect(capLastValidBlockHeight(1_151, 1_000)).toBe(1_151);
    // Lower than the node's height (already passed): kept, the node's answer decides from there.
    expect(capLastValidBlockHeight(900, 1_000)).toBe(900);
  });

  it("caps a height beyond the node's height + 151", () => {
    expect(capLastValidBlockHeight(1_152, 1_000)).toBe(1_151);
    expect(capLastValidBlockHeight(101_150, 1_000)).toBe(1_151);
    expect(capLastValidBlockHeight(Number.MAX_SAFE_INTEGER, 0)).toBe(151);
  });
});
