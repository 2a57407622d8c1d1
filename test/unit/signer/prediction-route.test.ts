import { describe, expect, it } from "vitest";
import {
  NetworkError,
  PermanentApiError,
  TimeoutError,
  TransientApiError,
  ValidationError,
} from "../../../src/api/errors.js";
import { SubmitRefused } from "../../../src/core/errors.js";
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

  const details = (status: number) => ({
    status,
    code: "x",
    endpoint: "executePrediction",
    area: "prediction" as const,
    requestId: undefined,
    param: undefined,
  });

  // Only a refusal of the request itself proves the signed bytes never left through the endpoint; an
  // answer it could not read, a lost one or a status the api does not document may follow a broadcast.
  it.each([
    { thrown: new PermanentApiError(details(400), "context_mismatch"), refused: true },
    { thrown: new PermanentApiError(details(401), "invalid key"), refused: true },
    { thrown: new PermanentApiError(details(403), "not allowed"), refused: true },
    {
      thrown: new ValidationError("executePrediction", "request", [{ field: "x", rule: "y" }]),
      refused: true,
    },
    {
      thrown: new ValidationError("executePrediction", "response", [{ field: "status", rule: "y" }]),
      refused: false,
    },
    { thrown: new PermanentApiError(details(409), "conflict"), refused: false },
    { thrown: new TransientApiError(details(503), "unavailable"), refused: false },
    { thrown: new NetworkError("executePrediction", "maybe-sent", "socket hang up"), refused: false },
    { thrown: new TimeoutError("executePrediction", 10_000), refused: false },
  ])("$thrown.message: a refusal before sending $refused", async ({ thrown, refused }) => {
    const submit = predictionExecuteSubmit(async () => {
      throw thrown;
    }, route);
    const error = await submit("eA==").catch((caught: unknown) => caught);
    expect(error instanceof SubmitRefused).toBe(refused);
    if (refused) expect(error).toMatchObject({ message: thrown.message, cause: thrown });
    else expect(error).toBe(thrown);
  });
});
