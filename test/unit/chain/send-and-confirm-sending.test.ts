import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it, vi } from "vitest";
import { sendOnce } from "../../../src/chain/send-and-confirm.js";
import { PermanentError, SubmitRefused, TransientError } from "../../../src/core/errors.js";
import {
  BYTES,
  FakeChain,
  inTurn,
  type Method,
  rpcError,
  SIGNATURE,
  status,
} from "./send-and-confirm-fake.js";

afterEach(() => {
  vi.restoreAllMocks();
});

const SEND_FAILED = "send failed; will rebroadcast";
const EXTRA_FAILED = "send to an extra RPC failed";

describe("sendAndConfirm: several RPC nodes (rpc.sendUrls)", () => {
  it("every node gets the same bytes on every send; statuses and heights are read from the main node only", async () => {
    const chain = new FakeChain();
    const extras = [chain.node("extra-0"), chain.node("extra-1")];
    chain.status = (read) => (read.sends >= 6 ? status("confirmed") : null);
    const outcome = await chain.run({ alsoSendTo: extras.map((extra) => extra.connection) });
    expect(outcome).toMatchObject({ outcome: "confirmed" });
    for (const node of ["main", "extra-0", "extra-1"]) expect(chain.sendTimes(node)).toEqual([0, 300]);
    for (const send of chain.sends) {
      expect(send).toMatchObject({ bytes: BYTES, options: { skipPreflight: true, maxRetries: 0 } });
    }
    for (const extra of extras) expect(extra.calls).toMatchObject({ status: 0, height: 0, blockhash: 0 });
    expect(chain.logs.text()).not.toContain("failed");
  });

  it("one extra node down does not stop the others; it is named by its place, at debug", async () => {
    const chain = new FakeChain();
    const down = chain.node("extra-1");
    const extras = [chain.node("extra-0"), down, chain.node("extra-2")];
    down.faults.send = () => rpcError("connect ECONNREFUSED");
    chain.status = (read) => (read.sends >= 1 ? status("confirmed") : null);
    const outcome = await chain.run({ alsoSendTo: extras.map((extra) => extra.connection) });
    expect(outcome).toMatchObject({ outcome: "confirmed" });
    expect(chain.sendTimes("main")).toEqual([0]);
    expect(chain.sendTimes("extra-0")).toEqual([0]);
    expect(chain.sendTimes("extra-2")).toEqual([0]);
    const failures = chain.logged(EXTRA_FAILED);
    expect(failures).toMatchObject([{ level: 20, sendUrl: 1, sends: 1, signature: SIGNATURE }]);
    expect(JSON.stringify(failures[0]?.err)).toContain("ECONNREFUSED");
    expect(chain.logged(SEND_FAILED)).toEqual([]);
  });

  it("the main node refusing is not a failed send when an extra node took it", async () => {
    const chain = new FakeChain();
    const extra = chain.node("extra-0");
    chain.main.faults.send = () => rpcError("Transaction simulation failed", -32602);
    chain.status = (read) => (read.sends >= 1 ? status("confirmed") : null);
    const outcome = await chain.run({ alsoSendTo: [extra.connection] });
    expect(outcome).toMatchObject({ outcome: "confirmed" });
    expect(chain.sendTimes("extra-0")).toEqual([0]);
    expect(chain.logged(EXTRA_FAILED)).toEqual([]);
    expect(chain.logged(SEND_FAILED)).toEqual([]);
  });

  it("every node refusing a send: logged at debug with the main node's error, then rebroadcast", async () => {
    const chain = new FakeChain();
    const extra = chain.node("extra-0");
    chain.main.faults.send = (n) => (n === 1 ? rpcError("main refused", -32602) : undefined);
    extra.faults.send = (n) => (n === 1 ? rpcError("extra refused", -32602) : undefined);
    chain.status = (read) => (read.sends >= 1 ? status("confirmed") : null);
    const outcome = await chain.run({ alsoSendTo: [extra.connection] });
    expect(outcome).toMatchObject({ outcome: "confirmed" });
    expect(chain.sendTimes("main")).toEqual([300]);
    const [failed] = chain.logged(SEND_FAILED);
    expect(failed).toMatchObject({ level: 20, sends: 1, signature: SIGNATURE });
    expect(JSON.stringify(failed?.err)).toContain("sendTransaction: RPC error -32602: main refused");
    expect(chain.logged(SEND_FAILED)).toHaveLength(1);
  });

  it("a send that fails on a passing error is tried again once", async () => {
    const chain = new FakeChain();
    chain.main.faults.send = (n) => (n <= 2 ? rpcError("socket hang up") : undefined);
    chain.status = (read) => (read.sends >= 1 ? status("confirmed") : null);
    const outcome = await chain.run();
    expect(outcome).toMatchObject({ outcome: "confirmed" });
    // Two tries for the first send (both lost), the rebroadcast's first try went through.
    expect(chain.main.calls.send).toBe(3);
    expect(chain.sendTimes()).toEqual([300]);
  });

  it("sendOnce: the bytes to every node once, nothing watched", async () => {
    const chain = new FakeChain();
    const extra = chain.node("extra-0");
    await sendOnce(chain.input({ alsoSendTo: [extra.connection] }));
    expect(chain.sends.map((send) => send.node)).toEqual(["main", "extra-0"]);
    expect(chain.main.calls.status).toBe(0);
  });

  it("sendOnce: a refused send is logged with the signature, not thrown", async () => {
    const chain = new FakeChain();
    chain.main.faults.send = () => rpcError("refused", -32602);
    await sendOnce(chain.input());
    expect(chain.logged(SEND_FAILED)).toMatchObject([{ signature: SIGNATURE, sends: 1 }]);
  });
});

describe("sendAndConfirm: the execute endpoint (submit)", () => {
  const base64 = Buffer.from(BYTES).toString("base64");

  it("takes the first send as base64; rebroadcasts go to the RPC", async () => {
    const chain = new FakeChain();
    const submit = vi.fn(async () => ({ signature: SIGNATURE, status: "Success" }));
    chain.status = () => (chain.sendTimes("main").length >= 2 ? status("confirmed") : null);
    const outcome = await chain.run({ submit, alsoSendTo: [chain.node("extra-0").connection] });
    expect(outcome).toMatchObject({ outcome: "confirmed" });
    expect(submit.mock.calls).toEqual([[base64]]);
    expect(chain.sendTimes("main")).toEqual([300, 600]);
    expect(chain.sendTimes("extra-0")).toEqual([300, 600]);
    expect(chain.logs.records().filter((record) => Number(record.level) >= 40)).toEqual([]);
  });

  it("a failed rebroadcast to the RPC is not the endpoint's failure: logged at debug", async () => {
    const chain = new FakeChain();
    chain.main.faults.send = (n) => (n === 1 ? rpcError("node refused", -32602) : undefined);
    chain.status = () => (chain.sendTimes().length >= 1 ? status("confirmed") : null);
    const outcome = await chain.run({ submit: async () => ({ signature: SIGNATURE }) });
    expect(outcome).toMatchObject({ outcome: "confirmed" });
    expect(chain.logged(SEND_FAILED)).toMatchObject([{ level: 20, sends: 2 }]);
    expect(chain.logs.records().filter((record) => Number(record.level) >= 40)).toEqual([]);
    expect(chain.sendTimes()).toEqual([600]);
  });

  it("sendOnce with an execute endpoint sends through it only", async () => {
    const chain = new FakeChain();
    const submit = vi.fn(async () => ({ signature: SIGNATURE }));
    await sendOnce(chain.input({ submit }));
    expect(submit.mock.calls).toEqual([[base64]]);
    expect(chain.sends).toEqual([]);
  });

  it("another signature reported: warned, and ours is the one tracked", async () => {
    const chain = new FakeChain();
    const submit = vi.fn(async () => ({ signature: "someOtherSignature" }));
    chain.status = () => status("confirmed");
    const outcome = await chain.run({ submit });
    expect(outcome).toMatchObject({ outcome: "confirmed", signature: SIGNATURE });
    expect(chain.logged("execute endpoint reported another signature; tracking ours")).toMatchObject([
      { level: 40, reported: "someOtherSignature", signature: SIGNATURE },
    ]);
  });

  it.each([
    { answer: { status: "Failed", error: "slippage" }, warned: [{ level: 40, error: "slippage" }] },
    { answer: { status: "Failed", error: null }, warned: [{ level: 40 }] },
    { answer: { status: "Success", error: "ignored" }, warned: [] },
  ])(
    "reported $answer.status: warned $warned.length time(s); the chain decides",
    async ({ answer, warned }) => {
      const chain = new FakeChain();
      chain.status = () => status("confirmed");
      const outcome = await chain.run({ submit: async () => ({ signature: SIGNATURE, ...answer }) });
      expect(outcome).toMatchObject({ outcome: "confirmed" });
      const logged = chain.logged("execute endpoint reported the transaction failed");
      expect(logged).toMatchObject(warned);
      if (answer.error === null) expect(logged[0]).not.toHaveProperty("error");
    },
  );

  it.each([
    { thrown: new PermanentError("answer outside its schema"), level: 50 },
    { thrown: new TransientError("execute endpoint: 503"), level: 40 },
  ])("the endpoint throwing ($thrown.name) is logged at level $level; the chain decides", async (row) => {
    const chain = new FakeChain();
    chain.status = (read) => (read.sends >= 1 ? status("confirmed") : null);
    const outcome = await chain.run({
      submit: async () => {
        throw row.thrown;
      },
    });
    expect(outcome).toMatchObject({ outcome: "confirmed" });
    const logged = chain.logged(
      "execute endpoint failed or answered outside its schema; tracking the signature on the chain",
    );
    expect(logged).toMatchObject([{ level: row.level, signature: SIGNATURE }]);
    expect(JSON.stringify(logged[0]?.err)).toContain(row.thrown.message);
    expect(chain.logged(SEND_FAILED)).toEqual([]);
    expect(chain.sendTimes()).toEqual([300]);
  });
});

describe("sendOnce: what the execute endpoint's answer proves", () => {
  // Only a refusal of the request proves the bytes never left; whatever else it says may follow a broadcast.
  it.each([
    {
      what: "a refusal",
      submit: reject(new SubmitRefused("HTTP 400 context_mismatch")),
      report: { refused: true },
    },
    {
      what: "an answer outside its schema",
      submit: reject(new PermanentError("status: bad")),
      report: undefined,
    },
    { what: "a lost call", submit: reject(new TransientError("503")), report: undefined },
    {
      what: "Failed",
      submit: async () => ({ signature: "", status: "Failed", error: "Timeout" }),
      report: { status: "Failed", error: "Timeout" },
    },
  ])("$what reports $report", async ({ submit, report }) => {
    const chain = new FakeChain();
    const answer = await sendOnce(chain.input({ submit }));
    if (report === undefined) expect(answer).toBeUndefined();
    else expect(answer).toMatchObject(report);
    expect(answer?.refused === true).toBe(report?.refused === true);
  });

  it("Failed with no signature is not another signature", async () => {
    const chain = new FakeChain();
    await sendOnce(chain.input({ submit: async () => ({ signature: "", status: "Failed", error: null }) }));
    expect(chain.logged("execute endpoint reported another signature; tracking ours")).toEqual([]);
  });

  it("a resend answered Failed again is said at debug: once at warn per transaction", async () => {
    const chain = new FakeChain();
    let calls = 0;
    chain.status = () => (calls >= 3 ? status("confirmed") : null);
    const failed = async () => {
      calls += 1;
      return { signature: SIGNATURE, status: "Failed", error: "Timeout" };
    };
    const outcome = await chain.run({ submit: failed, resubmit: failed });
    expect(outcome).toMatchObject({ outcome: "confirmed" });
    expect(chain.logged("execute endpoint reported the transaction failed")).toMatchObject([
      { level: 40, sends: 1 },
      { level: 20, sends: 2 },
      { level: 20, sends: 3 },
    ]);
  });
});

function reject(error: Error) {
  return async (): Promise<{ signature: string }> => {
    throw error;
  };
}

describe("sendAndConfirm: RPC errors and stopping", () => {
  it.each(["status", "height"] as const)(
    "a passing RPC error reading the %s is retried, not an outcome",
    async (method) => {
      const chain = new FakeChain();
      chain.main.faults[method] = (n) => (n <= 2 ? rpcError("503 Service Unavailable") : undefined);
      chain.status = inTurn(null, status("confirmed"));
      const outcome = await chain.run();
      expect(outcome).toMatchObject({ outcome: "confirmed" });
      expect(chain.main.calls[method]).toBe(3);
    },
  );

  it.each([
    { method: "status", named: "getSignatureStatuses" },
    { method: "height", named: "getBlockHeight" },
  ] as const)(
    "a $named error no retry fixes is thrown, named (the caller resumes), not a failure",
    async (row) => {
      const chain = new FakeChain();
      chain.main.faults[row.method] = () => rpcError("Invalid params", -32602);
      const error = await chain.run().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(PermanentError);
      expect((error as Error).message).toContain(`${row.named}: RPC error -32602`);
      expect(chain.main.calls[row.method]).toBe(1);
    },
  );

  // The stop comes while the call keeps failing on a passing error: the retries end with it.
  it.each([{ method: "status" }, { method: "height" }, { method: "blockhash" }, { method: "send" }] as {
    method: Method;
  }[])("a stop while the $method call is being retried ends the wait", async ({ method }) => {
    const chain = new FakeChain();
    const stop = new AbortController();
    chain.height = method === "blockhash" ? 2_000 : chain.height;
    chain.main.faults[method] = () => {
      stop.abort(new Error("stopping"));
      return rpcError("socket hang up");
    };
    await expect(chain.run({ signal: stop.signal })).rejects.toThrow();
    expect(chain.main.calls[method]).toBe(1);
  });

  it("a stop during the pause between polls ends the wait at once", async () => {
    const chain = new FakeChain();
    const stop = new AbortController();
    const running = chain.run({ signal: stop.signal, pollIntervalMs: 120_000 }).then(
      (outcome) => outcome,
      (error: unknown) => error,
    );
    while (chain.main.calls.height === 0) await sleep(1);
    await sleep(5);
    stop.abort(new Error("stopping"));
    const ended = await Promise.race([running, sleep(20_000).then(() => "still waiting")]);
    expect(ended).toBeInstanceOf(Error);
    expect(chain.main.calls.status).toBe(1);
  });
});
