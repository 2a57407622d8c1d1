import { describe, expect, it } from "vitest";
import {
  contractFields,
  contractsTimes,
  floorToHundredth,
  microContractsOf,
} from "../../../../src/sandbox/world/contract-units.js";

describe("contract counts in the sandbox world", () => {
  it.each([
    [2.5, 650_000, 1_625_000],
    // 0.07 × 650,000 is 45,500.000000000004 in floats: hundredths keep it exact.
    [0.07, 650_000, 45_500],
    [0.01, 333_333, 3_333],
    [171.5, 234_716, 40_253_794],
  ])("%s contracts at %s micro-USD are worth %s micro-USD, floored", (contracts, price, worth) => {
    expect(contractsTimes(contracts, price)).toBe(worth);
  });

  it.each([
    [7.692307, 7.69],
    [0.009, 0],
    [2.5, 2.5],
    [0.29, 0.29],
  ])("a fill of %s contracts is floored to a hundredth: %s", (contracts, floored) => {
    expect(floorToHundredth(contracts)).toBe(floored);
  });

  it.each([
    [2.5, { contracts: "2", contractsMicro: "2500000", contractsDecimal: "2.5" }],
    [0.4, { contracts: "0", contractsMicro: "400000", contractsDecimal: "0.4" }],
    [12, { contracts: "12", contractsMicro: "12000000", contractsDecimal: "12" }],
  ])("%s contracts go out floored, with the exact count beside", (contracts, fields) => {
    expect(contractFields(contracts)).toEqual(fields);
    expect(microContractsOf(contracts)).toBe(BigInt(fields.contractsMicro));
  });
});
