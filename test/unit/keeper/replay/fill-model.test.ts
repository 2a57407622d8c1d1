import { describe, expect, it } from "vitest";
import { claimPayout, heldValue, resultOf } from "../../../../src/keeper/replay/fill-model.js";
import { position } from "../../../helpers/fixtures.js";

/** 12.5 contracts of YES, bought for $6, bid $0.69. */
const held = (market: { status?: string; result?: string | null }, isYes = true) =>
  position({
    isYes,
    contracts: "12",
    contractsMicro: "12500000",
    marketMetadata: { ...position().marketMetadata, ...market },
  });

describe("fill model: claims and what holding was worth", () => {
  it("a claim pays $1 a contract of the winning side, nothing on the losing one or before a result", () => {
    expect(claimPayout(held({ status: "closed", result: "yes" }))).toBe(12_500_000n);
    expect(claimPayout(held({ status: "closed", result: "yes" }, false))).toBe(0n);
    expect(claimPayout(held({ status: "closed", result: "no" }, false))).toBe(12_500_000n);
    expect(claimPayout(held({ status: "closed", result: null }))).toBe(0n);
  });

  it("held to the end: the result when recorded, the cost back when cancelled, else the last bid less fees", () => {
    expect(heldValue(held({ status: "closed", result: "yes" }))).toEqual({
      value: 12_500_000n,
      basis: "resolved won",
    });
    expect(heldValue(held({ status: "closed", result: "no" }))).toEqual({
      value: 0n,
      basis: "resolved lost",
    });
    expect(heldValue(held({ status: "cancelled", result: null }))).toEqual({
      value: 6_000_000n,
      basis: "cancelled (refund at cost)",
    });
    // 12.5 x $0.69 = $8.625; fees floor($0.043125) + floor($0.08625) = $0.043125 + $0.08625.
    expect(heldValue(held({ status: "open", result: null }))).toEqual({
      value: 8_625_000n - 43_125n - 86_250n,
      basis: "unresolved, last bid",
    });
    expect(heldValue({ ...held({ status: "closed", result: null }), sellPriceUsd: null })).toEqual({
      value: 0n,
      basis: "unresolved, no bid at the end",
    });
    expect(resultOf(held({ status: "closed", result: null }))).toBeUndefined();
  });
});
