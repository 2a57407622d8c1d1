import { describe, expect, it } from "vitest";
import { simulationError } from "../../../src/chain/policy.js";
import { PolicyRefusal, StaleTransaction, TransientError } from "../../../src/core/errors.js";

/**
 * A simulation error is a refusal only when it says what the transaction does is wrong. One that says
 * the node could not run it now (stale blockhash, busy cluster, a fee payer short of the fee) is
 * rebuilt or retried: recording it as refused would lose a claim or a stop-loss for good.
 */
describe("simulationError", () => {
  it.each([
    ["BlockhashNotFound", StaleTransaction],
    ["AccountInUse", TransientError],
    ["AccountNotFound", TransientError],
    ["InsufficientFundsForFee", TransientError],
    ["WouldExceedMaxBlockCostLimit", TransientError],
    ["ClusterMaintenance", TransientError],
    ["AlreadyProcessed", TransientError],
    ["ProgramCacheHitMaxLimit", TransientError],
    ["ResanitizationNeeded", TransientError],
    ["WouldExceedAccountDataBlockLimit", TransientError],
    ["WouldExceedAccountDataTotalLimit", TransientError],
    ["WouldExceedMaxAccountCostLimit", TransientError],
    ["WouldExceedMaxVoteCostLimit", TransientError],
    [{ InstructionError: [0, { Custom: 6 }] }, PolicyRefusal],
    [{ InstructionError: [1, "InvalidAccountData"] }, PolicyRefusal],
    [{ InsufficientFundsForRent: { account_index: 2 } }, PolicyRefusal],
    ["InvalidAccountForFee", PolicyRefusal],
  ] as const)("%j → %o", (err, kind) => {
    const error = simulationError(err, ["Program log: one", "Program log: two"]);
    expect(error).toBeInstanceOf(kind);
    expect(error.message).toContain(JSON.stringify(err));
  });

  it("a refusal names simulation_failed and carries the last log lines", () => {
    const error = simulationError({ InstructionError: [0, { Custom: 1 }] }, ["a", "b", "c", "d", "e", "f"]);
    expect(error).toMatchObject({ reason: "simulation_failed" });
    expect((error as PolicyRefusal).detail).toMatch(/logs: b \| c \| d \| e \| f$/);
  });

  it.each([
    ["no logs", undefined],
    ["null logs", null],
    ["empty logs", []],
  ] as const)("a refusal with %s carries the error alone", (_, logs) => {
    const error = simulationError({ InstructionError: [0, { Custom: 1 }] }, logs);
    expect((error as PolicyRefusal).detail).toBe('{"InstructionError":[0,{"Custom":1}]}');
  });
});
