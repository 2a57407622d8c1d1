import { afterEach, describe, expect, it, vi } from "vitest";
import { capLastValidBlockHeight } from "../../../src/chain/blockhash-lifetime.js";
import { TransientError } from "../../../src/core/errors.js";
import {
  BLOCKHASH,
  BYTES,
  FakeChain,
  inTurn,
  LAST_VALID,
  rpcError,
  SIGNATURE,
  START_HEIGHT,
  status,
} from "./send-and-confirm-fake.js";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("sendAndConfirm: outcomes", () => {
  it("confirmed at the first status read: sent once as signed, with the slot and the time it took", async () => {
    const chain = new FakeChain();
    chain.status = () => status("confirmed", { slot: 77 });
    const outcome = await chain.run();
    expect(outcome).toEqual({ outcome: "confirmed", signature: SIGNATURE, slot: 77, confirmationMs: 100 });
    expect(chain.sends).toEqual([
      { node: "main", at: 0, bytes: BYTES, options: { skipPreflight: true, maxRetries: 0 } },
    ]);
    expect(chain.main.calls.status).toBe(1);
    // Nothing went wrong: nothing to say.
    expect(chain.logs.records()).toEqual([]);
  });

  it("reports the time from the start to the status that confirmed it", async () => {
    const chain = new FakeChain();
    chain.now = 5_000;
    chain.stepMs = 70;
    chain.status = inTurn(null, status("processed"), status("confirmed"));
    const outcome = await chain.run();
    expect(outcome).toMatchObject({ outcome: "confirmed", confirmationMs: 210 });
  });

  // Which status is enough for which wanted commitment. Old nodes leave confirmationStatus out:
  // `confirmations: null` then means rooted (finalized), a number means not rooted yet.
  it.each([
    { wanted: undefined, statuses: [status("processed"), status("confirmed")], at: 2 },
    { wanted: undefined, statuses: [status("finalized")], at: 1 },
    { wanted: "confirmed", statuses: [status("processed"), status("processed"), status("confirmed")], at: 3 },
    { wanted: "finalized", statuses: [status("confirmed"), status("finalized")], at: 2 },
    { wanted: "processed", statuses: [status("processed")], at: 1 },
    { wanted: "processed", statuses: [status(undefined, { confirmations: 2 })], at: 1 },
    { wanted: "confirmed", statuses: [status(undefined, { confirmations: 5 }), status("confirmed")], at: 2 },
    {
      wanted: "finalized",
      statuses: [status(undefined, { confirmations: 30 }), status(undefined, { confirmations: null })],
      at: 2,
    },
  ] as const)("wanted $wanted: confirmed at status read $at", async ({ wanted, statuses, at }) => {
    const chain = new FakeChain();
    chain.status = inTurn(...statuses);
    const outcome = await chain.run(wanted ? { commitment: wanted } : {});
    expect(outcome).toMatchObject({ outcome: "confirmed", signature: SIGNATURE });
    expect(chain.main.calls.status).toBe(at);
  });

  it("an error on chain is a failure with the error described, even before the wanted commitment", async () => {
    const chain = new FakeChain();
    chain.status = inTurn(null, status("processed", { err: { InstructionError: [0, { Custom: 1 }] } }));
    const outcome = await chain.run({ commitment: "finalized" });
    expect(outcome).toEqual({
      outcome: "failed",
      signature: SIGNATURE,
      error: "instruction 0: custom program error 0x1",
    });
    expect(chain.main.calls.status).toBe(2);
  });

  it("dropped: expired once past the height, the node refuses the blockhash and a history search finds nothing", async () => {
    const chain = new FakeChain();
    const outcome = await chain.run({ rebroadcastIntervalMs: 1_000 });
    expect(outcome).toEqual({ outcome: "expired", signature: SIGNATURE });
    // The node was asked about the blockhash only once the height had passed, and said no the first time.
    expect(chain.blockhashChecks).toEqual([
      { blockhash: BLOCKHASH, commitment: "processed", height: LAST_VALID + 1 },
    ]);
    // Only the last status read searched the history, after the node's answer.
    expect(chain.statusReads.filter((read) => read.history)).toEqual([chain.statusReads.at(-1)]);
    expect(chain.statusReads.at(-1)?.history).toBe(true);
    // Rebroadcast all along: the first send and then one a second.
    const sent = chain.sendTimes();
    expect(sent[0]).toBe(0);
    expect(sent.length).toBe(Math.floor((chain.now - 100) / 1_000) + 1);
    const [expired] = chain.logged("transaction expired");
    expect(expired).toMatchObject({
      signature: SIGNATURE,
      height: LAST_VALID + 1,
      lastValidBlockHeight: LAST_VALID,
      sends: sent.length,
    });
  });

  it("does not expire at the last valid height itself, only past it", async () => {
    const chain = new FakeChain();
    chain.height = LAST_VALID;
    chain.heightStep = 0;
    chain.status = inTurn(null, null, null, status("confirmed"));
    const outcome = await chain.run({ checkBlockhashWithRpc: false });
    expect(outcome).toMatchObject({ outcome: "confirmed" });
  });

  it("past the height, a blockhash the node still accepts keeps the wait going: the transaction lands", async () => {
    const chain = new FakeChain();
    chain.blockhashValid = (height) => height <= LAST_VALID + 5;
    chain.status = (read) => (read.height >= LAST_VALID + 4 ? status("confirmed") : null);
    const outcome = await chain.run();
    expect(outcome).toMatchObject({ outcome: "confirmed" });
    expect(chain.blockhashChecks.map((check) => check.height)).toEqual([
      LAST_VALID + 1,
      LAST_VALID + 2,
      LAST_VALID + 3,
      LAST_VALID + 4,
    ]);
    expect(chain.statusReads.some((read) => read.history)).toBe(false);
  });

  it("a node that does not know the blockhash yet (behind the service's) cannot expire it before the height", async () => {
    const chain = new FakeChain();
    chain.blockhashValid = () => false;
    chain.status = (read) => (read.n >= 20 ? status("confirmed") : null);
    const outcome = await chain.run();
    expect(outcome).toMatchObject({ outcome: "confirmed" });
    expect(chain.main.calls.status).toBe(20);
    expect(chain.blockhashChecks).toEqual([]);
  });

  it("without the blockhash check, expired as soon as the height passes and a history search finds nothing", async () => {
    const chain = new FakeChain();
    chain.blockhashValid = () => true;
    const outcome = await chain.run({ checkBlockhashWithRpc: false });
    expect(outcome).toEqual({ outcome: "expired", signature: SIGNATURE });
    expect(chain.blockhashChecks).toEqual([]);
    expect(chain.height).toBe(LAST_VALID + 1);
  });

  it("a node without isBlockhashValid (method not found): the height decides", async () => {
    const chain = new FakeChain();
    chain.main.faults.blockhash = () => rpcError("Method not found", -32601);
    const outcome = await chain.run();
    expect(outcome).toEqual({ outcome: "expired", signature: SIGNATURE });
    expect(chain.main.calls.blockhash).toBe(1);
    expect(chain.height).toBe(LAST_VALID + 1);
  });

  it("isBlockhashValid failing for good on a passing error is thrown, not taken for expiry", async () => {
    const chain = new FakeChain();
    chain.main.faults.blockhash = () => rpcError("socket hang up");
    const error = await chain.run().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TransientError);
    expect((error as Error).message).toContain("isBlockhashValid");
    expect(chain.main.calls.blockhash).toBe(3);
  });

  it.each([
    { found: status("confirmed", { slot: 99 }), outcome: { outcome: "confirmed", slot: 99 } },
    {
      found: status("confirmed", { err: "InsufficientFundsForFee" }),
      outcome: { outcome: "failed", error: "InsufficientFundsForFee" },
    },
  ])("the last history search finds it ($outcome.outcome): that is the outcome, not expired", async (row) => {
    const chain = new FakeChain();
    // The node's recent statuses forgot it; its history did not.
    chain.status = (read) => (read.history ? row.found : null);
    const outcome = await chain.run();
    expect(outcome).toMatchObject({ ...row.outcome, signature: SIGNATURE });
    expect(chain.statusReads.filter((read) => read.history).length).toBe(1);
  });

  it("the history search finds it only processed: the wait goes on until it confirms", async () => {
    const chain = new FakeChain();
    let historyReads = 0;
    chain.status = (read) => {
      if (!read.history) return null;
      historyReads += 1;
      return historyReads === 1 ? status("processed") : status("confirmed", { slot: 5 });
    };
    const outcome = await chain.run();
    expect(outcome).toMatchObject({ outcome: "confirmed", slot: 5 });
    expect(historyReads).toBe(2);
  });

  it("a service's far-off lastValidBlockHeight, capped as the signer does, expires within a blockhash's life", async () => {
    const chain = new FakeChain();
    const lastValidBlockHeight = capLastValidBlockHeight(START_HEIGHT + 100_000, START_HEIGHT);
    chain.blockhashValid = (height) => height <= lastValidBlockHeight;
    const outcome = await chain.run({ lastValidBlockHeight });
    expect(outcome).toMatchObject({ outcome: "expired" });
    expect(chain.height).toBeLessThanOrEqual(START_HEIGHT + 152);
  });

  it.each([
    { wanted: undefined, asked: "confirmed" },
    { wanted: "confirmed", asked: "confirmed" },
    // A processed height runs ahead: the expiry would come before the chain agrees.
    { wanted: "processed", asked: "confirmed" },
    { wanted: "finalized", asked: "finalized" },
  ] as const)("the height is read at $asked when $wanted is wanted", async ({ wanted, asked }) => {
    const chain = new FakeChain();
    chain.status = inTurn(null, null, status("finalized"));
    await chain.run(wanted ? { commitment: wanted } : {});
    expect(chain.heightReads).toEqual([asked, asked]);
  });

  it("wanting processed, a processed height already past does not expire it", async () => {
    const chain = new FakeChain();
    chain.height = LAST_VALID;
    chain.heightStep = 0;
    chain.status = inTurn(null, null, status("processed"));
    const outcome = await chain.run({ commitment: "processed", checkBlockhashWithRpc: false });
    expect(outcome).toMatchObject({ outcome: "confirmed" });
  });
});

describe("sendAndConfirm: rebroadcasts", () => {
  it("rebroadcasts the same bytes each time the interval passes while nothing is seen, and lands", async () => {
    const chain = new FakeChain();
    chain.status = (read) => (read.sends >= 3 ? status("confirmed") : null);
    const outcome = await chain.run({ rebroadcastIntervalMs: 200 });
    expect(outcome).toMatchObject({ outcome: "confirmed" });
    // Polls every 100 ms of the test's clock: a rebroadcast at the first poll the interval has passed.
    expect(chain.sendTimes()).toEqual([0, 200, 400]);
    for (const send of chain.sends) expect(send.bytes).toEqual(BYTES);
  });

  it("rebroadcasts every 2 s by default", async () => {
    const chain = new FakeChain();
    chain.status = (read) => (read.sends >= 2 ? status("confirmed") : null);
    const outcome = await chain.run({
      rebroadcastIntervalMs: undefined,
      lastValidBlockHeight: LAST_VALID + 100,
    });
    expect(outcome).toMatchObject({ outcome: "confirmed" });
    expect(chain.sendTimes()).toEqual([0, 2_000]);
  });

  it("no rebroadcast while the node sees the transaction, however short the interval", async () => {
    const chain = new FakeChain();
    chain.status = inTurn(
      null,
      null,
      status("processed"),
      status("processed"),
      status("processed"),
      status("confirmed"),
    );
    const outcome = await chain.run({ rebroadcastIntervalMs: 0 });
    expect(outcome).toMatchObject({ outcome: "confirmed" });
    expect(chain.sendTimes()).toEqual([0, 100, 200]);
  });

  it("no rebroadcast before the interval has passed", async () => {
    const chain = new FakeChain();
    const outcome = await chain.run({ rebroadcastIntervalMs: 60_000 });
    expect(outcome).toMatchObject({ outcome: "expired" });
    expect(chain.now).toBeLessThan(60_000);
    expect(chain.sendTimes()).toEqual([0]);
  });

  it("already sent (by the signer): no send at first, the first rebroadcast once the interval has passed", async () => {
    const chain = new FakeChain();
    chain.status = (read) => (read.sends >= 1 ? status("confirmed") : null);
    const submit = vi.fn(async () => ({ signature: SIGNATURE }));
    const outcome = await chain.run({ alreadySent: true, submit });
    expect(outcome).toMatchObject({ outcome: "confirmed" });
    // The rebroadcast goes to the RPC: the execute endpoint had the first send.
    expect(chain.sendTimes()).toEqual([300]);
    expect(submit).not.toHaveBeenCalled();
  });

  it("already sent and seen at once: nothing sent at all", async () => {
    const chain = new FakeChain();
    chain.status = inTurn(status("processed"), status("processed"), status("confirmed"));
    const outcome = await chain.run({ alreadySent: true, rebroadcastIntervalMs: 0 });
    expect(outcome).toMatchObject({ outcome: "confirmed" });
    expect(chain.sends).toEqual([]);
  });

  it("polls every 400 ms by default", async () => {
    const chain = new FakeChain();
    chain.status = inTurn(null, status("confirmed"));
    const started = Date.now();
    const outcome = await chain.run({ pollIntervalMs: undefined });
    expect(outcome).toMatchObject({ outcome: "confirmed" });
    // A lower bound only: a busy machine makes the wait longer, never shorter.
    expect(Date.now() - started).toBeGreaterThanOrEqual(390);
  });
});
