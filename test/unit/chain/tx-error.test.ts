import { describe, expect, it } from "vitest";
import { describeTransactionError } from "../../../src/chain/tx-error.js";

// What an operator reads in the ledger and the logs for a failed transaction.
describe("describeTransactionError", () => {
  it.each([
    ["a bare name", "AccountInUse", "AccountInUse"],
    [
      "a custom error in hex",
      { InstructionError: [3, { Custom: 6001 }] },
      "instruction 3: custom program error 0x1771",
    ],
    ["a custom error 0", { InstructionError: [0, { Custom: 0 }] }, "instruction 0: custom program error 0x0"],
    [
      "a named instruction error",
      { InstructionError: [2, "InsufficientFunds"] },
      "instruction 2: InsufficientFunds",
    ],
    [
      "an instruction error with fields",
      { InstructionError: [1, { BorshIoError: "Unknown" }] },
      'instruction 1: {"BorshIoError":"Unknown"}',
    ],
    [
      "a custom code that is not a number",
      { InstructionError: [1, { Custom: "7" }] },
      'instruction 1: {"Custom":"7"}',
    ],
    ["an instruction error with no detail", { InstructionError: [4, null] }, "instruction 4: null"],
    ["an instruction error of one element", { InstructionError: [4] }, '{"InstructionError":[4]}'],
    [
      "an instruction error of three elements",
      { InstructionError: [4, "A", "B"] },
      '{"InstructionError":[4,"A","B"]}',
    ],
    ["an instruction error that is not a list", { InstructionError: "odd" }, '{"InstructionError":"odd"}'],
    ["another error with fields", { DuplicateInstruction: 2 }, '{"DuplicateInstruction":2}'],
    ["a number", 17, "17"],
    ["a bigint (no JSON form)", 10n, "10"],
    ["null", null, "null"],
    ["undefined", undefined, "undefined"],
  ])("%s", (_what, err, text) => {
    expect(describeTransactionError(err)).toBe(text);
  });
});
