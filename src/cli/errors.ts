import { CommanderError } from "commander";
import { ValidationError } from "../api/errors.js";
import { ConfigError, KeeperError, TransientError, UsageError } from "../core/errors.js";

export { UsageError };

/** Exit codes: 0 ok, 1 a failure at run time (unreachable service, Redis, RPC), 2 bad config or arguments. */
export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

/**
 * Expected failures become one clear message and an exit code, never a stack trace. Unexpected ones
 * print their message too; KEEPER_DEBUG=1 adds the stack for a bug report.
 */
export function reportError(
  error: unknown,
  write: (line: string) => void = (l) => process.stderr.write(`${l}\n`),
): number {
  if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
  // Input the client refused before sending came from the command line: a usage error.
  if (error instanceof ValidationError && error.phase === "request") {
    write(`keeper: ${error.message}`);
    return EXIT.usage;
  }
  if (error instanceof ConfigError || error instanceof UsageError) {
    write(`keeper: ${error.message}`);
    return EXIT.usage;
  }
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof TransientError || error instanceof KeeperError) {
    write(`keeper: ${message}`);
    return EXIT.failure;
  }
  write(`keeper: unexpected error: ${message}`);
  if (process.env.KEEPER_DEBUG === "1" && error instanceof Error && error.stack) write(error.stack);
  else write("keeper: (set KEEPER_DEBUG=1 to see where)");
  return EXIT.failure;
}
