import { describe, expect, it } from "vitest";
import { PermanentApiError, TransientApiError } from "../../../../src/api/errors.js";
import {
  claimNotNeeded,
  isNoClaimRequired,
  isNotSettledYet,
} from "../../../../src/keeper/pipeline/action-worker.js";

const answer = (code: string | undefined, message: string) =>
  new PermanentApiError(
    {
      status: 400,
      code,
      endpoint: "claimPosition",
      area: "prediction",
      requestId: undefined,
      param: undefined,
    },
    message,
  );

/** "No claim required" ends a claim as settled; every other refusal stays a failure. */
describe("isNoClaimRequired", () => {
  it.each([
    ["the sandbox's code", answer("no_claim_required", "no claim is required"), true],
    ["the other spelling of the code", answer("claim_not_required", "x"), true],
    ["no code, the message says so", answer(undefined, "No claim required for this market"), true],
    ["another code, the message says it is not needed", answer("bad_request", "Claim is not needed"), true],
    ["not settled yet is not this", answer("market_not_settled", "market is not settled yet"), false],
    ["a losing position is not this", answer("not_claimable", "position is not claimable"), false],
    ["already claimed is not this", answer("already_claimed", "position is already claimed"), false],
    [
      "a transient error never is",
      new TransientApiError(
        {
          status: 503,
          code: "no_claim_required",
          endpoint: "claimPosition",
          area: "prediction",
          requestId: undefined,
          param: undefined,
        },
        "no claim required",
      ),
      false,
    ],
    ["a plain error never is", new Error("no claim required"), false],
  ])("%s", (_label, error, expected) => {
    expect(isNoClaimRequired(error)).toBe(expected);
    if (expected) expect(isNotSettledYet(error)).toBe(false);
  });
});

/** Why a refused claim is nothing to claim (ends settled); every other answer is not this. */
describe("claimNotNeeded", () => {
  it.each([
    ["no claim required", answer("no_claim_required", "no claim is required"), "no claim required"],
    ["already claimed", answer("already_claimed", "position is already claimed"), "already claimed"],
    ["not settled yet", answer("market_not_settled", "market is not settled yet"), undefined],
    ["a losing position", answer("not_claimable", "position is not claimable"), undefined],
    ["a plain error with the words", new Error("already_claimed"), undefined],
  ])("%s", (_label, error, expected) => {
    expect(claimNotNeeded(error)).toBe(expected);
  });
});
