import { describe, expect, it } from "vitest";
import {
  contractsMicroOf,
  contractsValueMicroUsd,
  formatContracts,
  holdsContracts,
} from "../../../src/core/contracts.js";

describe("exact contract counts", () => {
  it("reads contractsMicro before the floored contracts", () => {
    expect(contractsMicroOf({ contracts: "2", contractsMicro: "2500000" })).toBe(2_500_000n);
    expect(contractsMicroOf({ contracts: "3" })).toBe(3_000_000n);
  });

  it("keeps counts beyond 2^53 exact", () => {
    expect(contractsMicroOf({ contracts: "9007199254", contractsMicro: "9007199254740993123" })).toBe(
      9_007_199_254_740_993_123n,
    );
  });

  it("sees a fraction of a contract the floored field hides", () => {
    expect(holdsContracts({ contracts: "0", contractsMicro: "400000" })).toBe(true);
    expect(holdsContracts({ contracts: "0", contractsMicro: "0" })).toBe(false);
  });

  it("values contracts at a price in micro-USD, floored", () => {
    expect(contractsValueMicroUsd(2_500_000n, 650_000n)).toBe(1_625_000n);
    expect(contractsValueMicroUsd(1n, 650_000n)).toBe(0n);
  });

  it("formats counts for people", () => {
    expect(formatContracts(2_500_000n)).toBe("2.5");
    expect(formatContracts(10_000n)).toBe("0.01");
    expect(formatContracts(3_000_000n)).toBe("3");
  });
});
