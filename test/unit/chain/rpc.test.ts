import { SolanaJSONRPCError } from "@solana/web3.js";
import { afterEach, describe, expect, it, vi } from "vitest";
import { classifyRpcError, rpcCall, rpcErrorCode } from "../../../src/chain/rpc.js";
import { PermanentError, TransientError } from "../../../src/core/errors.js";

const jsonRpcError = (code: number, message = "node says no") => new SolanaJSONRPCError({ code, message });

describe("rpcErrorCode", () => {
  it.each([
    { what: "a web3.js JSON-RPC error", error: jsonRpcError(-32602), code: -32602 },
    {
      what: "any error object with a numeric code",
      error: Object.assign(new Error("x"), { code: 429 }),
      code: 429,
    },
    { what: "a plain object with a numeric code", error: { code: -32601 }, code: -32601 },
    {
      what: "a string code (Node's ECONNRESET)",
      error: Object.assign(new Error("x"), { code: "ECONNRESET" }),
      code: undefined,
    },
    { what: "no code", error: new Error("x"), code: undefined },
    { what: "null", error: null, code: undefined },
    { what: "undefined", error: undefined, code: undefined },
  ])("$what: $code", ({ error, code }) => {
    expect(rpcErrorCode(error)).toBe(code);
  });
});

describe("classifyRpcError", () => {
  it.each([-32600, -32601, -32602, -32003, -32013, -32015])("JSON-RPC code %i is permanent", (code) => {
    const error = jsonRpcError(code, "bad request");
    const classified = classifyRpcError(error, "getBalance");
    expect(classified).toBeInstanceOf(PermanentError);
    // The operator reads which call failed, the node's code and its words.
    expect(classified.message).toBe(`getBalance: RPC error ${code}: bad request`);
    expect(classified.cause).toBe(error);
  });

  it.each([
    {
      what: "a rate limit",
      error: Object.assign(new Error("429 Too Many Requests"), { code: 429 }),
      text: "429 Too Many Requests",
    },
    { what: "node behind (-32005)", error: jsonRpcError(-32005, "node is behind"), text: "node is behind" },
    { what: "a network failure", error: new TypeError("fetch failed"), text: "fetch failed" },
    { what: "a thrown string", error: "socket hang up", text: "socket hang up" },
  ])("$what is transient", ({ error, text }) => {
    const classified = classifyRpcError(error, "getSlot");
    expect(classified).toBeInstanceOf(TransientError);
    expect(classified.message).toBe(`getSlot: ${text}`);
    expect(classified.cause).toBe(error);
  });

  it("keeps an error that is already classified as it is", () => {
    const transient = new TransientError("already said");
    const permanent = new PermanentError("already said");
    expect(classifyRpcError(transient, "getSlot")).toBe(transient);
    expect(classifyRpcError(permanent, "getSlot")).toBe(permanent);
    expect(permanent.message).toBe("already said");
  });
});

describe("rpcCall", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A call that fails `failures` times with `error`, then answers "ok"; counts its calls. */
  function flaky(failures: number, error: unknown = new Error("connection reset")) {
    const state = { calls: 0 };
    const call = async () => {
      state.calls += 1;
      if (state.calls <= failures) throw error;
      return "ok";
    };
    return { state, call };
  }

  it("answers the call's value", async () => {
    await expect(rpcCall("getSlot", async () => 42)).resolves.toBe(42);
  });

  it("retries a transient failure and answers once the call succeeds", async () => {
    const { state, call } = flaky(2);
    await expect(rpcCall("getSlot", call, { minTimeoutMs: 1, maxTimeoutMs: 1 })).resolves.toBe("ok");
    expect(state.calls).toBe(3);
  });

  it("gives up after the retries asked for, with the classified last error", async () => {
    const { state, call } = flaky(10);
    const error = await rpcCall("getSlot", call, { retries: 2, minTimeoutMs: 1, maxTimeoutMs: 1 }).catch(
      (e: unknown) => e,
    );
    expect(state.calls).toBe(3);
    expect(error).toBeInstanceOf(TransientError);
    expect((error as Error).message).toBe("getSlot: connection reset");
  });

  it("does not retry a permanent failure and throws it classified", async () => {
    const cause = jsonRpcError(-32602, "invalid params");
    const { state, call } = flaky(10, cause);
    const error = await rpcCall("getBalance", call, { minTimeoutMs: 1, maxTimeoutMs: 1 }).catch(
      (e: unknown) => e,
    );
    expect(state.calls).toBe(1);
    expect(error).toBeInstanceOf(PermanentError);
    expect((error as Error).message).toBe("getBalance: RPC error -32602: invalid params");
    expect((error as Error).cause).toBe(cause);
  });

  it("stops retrying once its signal is aborted", async () => {
    const controller = new AbortController();
    const state = { calls: 0 };
    const call = async () => {
      state.calls += 1;
      controller.abort(new Error("shutting down"));
      throw new Error("connection reset");
    };
    const error = await rpcCall("getSlot", call, { signal: controller.signal, minTimeoutMs: 1 }).catch(
      (e: unknown) => e,
    );
    expect(state.calls).toBe(1);
    expect(error).toBeInstanceOf(TransientError);
    expect((error as Error).message).toBe("getSlot: shutting down");
  });

  it("does not hold the process open while it waits to retry (a shutdown need not wait for a backoff)", async () => {
    const setTimeoutSpy = vi.spyOn(globalThis, "setTimeout");
    try {
      const controller = new AbortController();
      const outcome = rpcCall(
        "getSlot",
        async () => {
          throw new Error("connection reset");
        },
        { minTimeoutMs: 60_000, maxTimeoutMs: 60_000, signal: controller.signal },
      ).catch((e: unknown) => e);
      const backoff = await vi.waitFor(() => {
        const index = setTimeoutSpy.mock.calls.findIndex((call) => call[1] === 60_000);
        expect(index).toBeGreaterThanOrEqual(0);
        return setTimeoutSpy.mock.results[index]?.value as NodeJS.Timeout;
      });
      expect(backoff.hasRef()).toBe(false);
      controller.abort(new Error("stop"));
      expect(await outcome).toBeInstanceOf(TransientError);
    } finally {
      setTimeoutSpy.mockRestore();
    }
  });

  it("by default retries four times, waiting 200 ms then doubling up to 2 s", async () => {
    vi.useFakeTimers();
    const { state, call } = flaky(100);
    const outcome = rpcCall("getSlot", call).catch((e: unknown) => e);
    const callsAfter = async (ms: number) => {
      await vi.advanceTimersByTimeAsync(ms);
      return state.calls;
    };
    expect(await callsAfter(0)).toBe(1);
    expect(await callsAfter(199)).toBe(1);
    expect(await callsAfter(1)).toBe(2);
    expect(await callsAfter(399)).toBe(2);
    expect(await callsAfter(1)).toBe(3);
    expect(await callsAfter(800)).toBe(4);
    expect(await callsAfter(1_600)).toBe(5);
    expect(await outcome).toBeInstanceOf(TransientError);
    expect(state.calls).toBe(5);
  });

  it("caps the backoff at 2 s by default", async () => {
    vi.useFakeTimers();
    const { state, call } = flaky(100);
    const outcome = rpcCall("getSlot", call, { retries: 6 }).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(200 + 400 + 800 + 1_600);
    expect(state.calls).toBe(5);
    // The fifth wait would be 3.2 s without the cap.
    await vi.advanceTimersByTimeAsync(1_999);
    expect(state.calls).toBe(5);
    await vi.advanceTimersByTimeAsync(1);
    expect(state.calls).toBe(6);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(state.calls).toBe(7);
    expect(await outcome).toBeInstanceOf(TransientError);
  });
});
