import { CommanderError, InvalidArgumentError } from "commander";
import { describe, expect, it } from "vitest";
import { EXIT, redactUrlsIn, reportError } from "../../../src/cli/errors.js";
import { ConfigError, TransientError } from "../../../src/core/errors.js";

/** What reportError writes for `error`, and the exit code it returns. */
function report(error: unknown): { lines: string[]; code: number } {
  const lines: string[] = [];
  const code = reportError(error, (line) => lines.push(line));
  return { lines, code };
}

describe("reportError", () => {
  it.each([
    [
      "a key in an RPC URL's path",
      new TransientError(
        "cannot reach the Solana RPC at http://rpc.example:8899/v2/RpcKeyInPath0123456789: fetch failed",
      ),
      "keeper: cannot reach the Solana RPC at http://rpc.example:8899: fetch failed",
    ],
    [
      "a key in a service URL's query",
      new TransientError("cannot reach the service at https://api.example/v1?api-key=ServiceKey0123456789."),
      "keeper: cannot reach the service at https://api.example.",
    ],
    [
      "a password in a Redis URL, in an unexpected error",
      new Error("connect to redis://default:RedisPassword0123456789@10.0.0.5:6379/0 failed"),
      "keeper: unexpected error: connect to redis://10.0.0.5:6379 failed",
    ],
    [
      "a URL that does not parse",
      new ConfigError(["redis.url: redis://:RedisPassword0123456789@[bad is no URL"]),
      "keeper: invalid configuration:\n  redis.url: (unparsable URL) is no URL",
    ],
  ])("cuts %s down to scheme, host and port", (_label, error, first) => {
    const { lines } = report(error);
    expect(lines[0]).toBe(first);
    expect(lines.join("\n")).not.toMatch(/RpcKeyInPath|ServiceKey|RedisPassword/);
  });

  it("leaves a URL with nothing to hide as it is", () => {
    expect(redactUrlsIn("cannot reach Redis at redis://127.0.0.1:1 (http://127.0.0.1:8787/)")).toBe(
      "cannot reach Redis at redis://127.0.0.1:1 (http://127.0.0.1:8787/)",
    );
  });

  it("prints an InvalidArgumentError an action threw (commander printed nothing) as a usage error", () => {
    const { lines, code } = report(
      new InvalidArgumentError("expected a breaker: one of daily_loss, stop_loss_streak"),
    );
    expect(code).toBe(EXIT.usage);
    expect(lines).toEqual(["keeper: expected a breaker: one of daily_loss, stop_loss_streak"]);
  });

  it("prints nothing more for an error commander already printed", () => {
    const { lines, code } = report(
      new CommanderError(1, "commander.unknownCommand", "error: unknown command"),
    );
    expect(code).toBe(EXIT.usage);
    expect(lines).toEqual([]);
  });
});
