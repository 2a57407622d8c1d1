import { describe, expect, it } from "vitest";
import { predictionExecuteSubmit, predictionRouteFor } from "../../../src/signer/prediction-route.js";

const execution = {
  endpoint: "/prediction/v1/execute",
  context: { type: "bisonfi_swap", id: "swap-1" },
  requiredSigners: ["wallet", "service"],
};

describe("predictionRouteFor: where service.predictionSubmit sends a prediction transaction", () => {
  it.each([
    ["auto", "close", execution, "execute"],
    ["auto", "close", null, "rpc"],
    ["auto", "close", undefined, "rpc"],
    ["auto", "close", { endpoint: "/x" }, "rpc"],
    ["auto", "claim", null, "rpc"],
    ["execute", "claim", null, "execute"],
    ["execute", "close", execution, "execute"],
    ["rpc", "close", execution, "rpc"],
  ] as const)("%s, a %s whose build named %j: %s", (mode, kind, built, via) => {
    expect(predictionRouteFor({ kind, execution: built }, mode)?.via).toBe(via);
  });

  it("keeps the context unchanged for execute and the build's required signers either way", () => {
    expect(predictionRouteFor({ kind: "close", execution }, "auto")).toEqual({
      via: "execute",
      context: execution.context,
      requiredSigners: ["wallet", "service"],
    });
    expect(predictionRouteFor({ kind: "close", execution }, "rpc")).toEqual({
      via: "rpc",
      requiredSigners: ["wallet", "service"],
    });
  });

  it("keeps nothing of the endpoint a build names: a hostile one cannot redirect the signed bytes", () => {
    const hostile = { ...execution, endpoint: "https://collector.invalid/steal" };
    const route = predictionRouteFor({ kind: "close", execution: hostile }, "auto");
    expect(JSON.stringify(route)).not.toContain("collector.invalid");
  });

  it("leaves trigger, recurring and swap transactions alone", () => {
    for (const kind of ["createTrigger", "cancelRecurring", "swap"] as const)
      expect(predictionRouteFor({ kind, execution }, "execute")).toBeUndefined();
  });
});

describe("predictionExecuteSubmit: the execute answer as the send reports it", () => {
  const route = { via: "execute" as const, context: { type: "bisonfi_swap" }, requiredSigners: [] };

  it.each([
    [
      { status: "Success", signature: "sig", error: null },
      { signature: "sig", status: "Success", error: null },
      "success",
    ],
    [
      { status: "Failed", signature: null, error: "boom" },
      { signature: "", status: "Failed", error: "boom" },
      "failed",
    ],
  ] as const)("%j reads as %j and is counted %s", async (answer, read, report) => {
    const reports: string[] = [];
    const bodies: unknown[] = [];
    const submit = predictionExecuteSubmit(
      async (body) => {
        bodies.push(body);
        return answer;
      },
      route,
      (r) => reports.push(r),
    );
    expect(await submit("c2lnbmVk")).toEqual(read);
    expect(bodies).toEqual([{ signedTransaction: "c2lnbmVk", context: { type: "bisonfi_swap" } }]);
    expect(reports).toEqual([report]);
  });

  it("counts a call that threw as an error and throws it on", async () => {
    const reports: string[] = [];
    const submit = predictionExecuteSubmit(
      async () => {
        throw new Error("socket hang up");
      },
      route,
      (r) => reports.push(r),
    );
    await expect(submit("eA==")).rejects.toThrow("socket hang up");
    expect(reports).toEqual(["error"]);
  });
});
