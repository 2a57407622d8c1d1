import { CommanderError, InvalidArgumentError } from "commander";
import { ValidationError } from "../api/errors.js";
import { ConfigError, KeeperError, TransientError, UsageError } from "../core/errors.js";
import { redactUrl } from "../keeper/state/redis-connection.js";

export { UsageError };

/** Exit codes: 0 ok, 1 a failure at run time (unreachable service, Redis, RPC), 2 bad config or arguments. */
export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

/** A URL of a node or service, up to the first blank or quote. */
const URL_IN_TEXT = /\b(?:https?|wss?|rediss?):\/\/[^\s"'<>]+/gi;

/**
 * `text` with every service, RPC or Redis URL that holds more than scheme, host and port (a password,
 * a key in the path or the query) cut down to scheme://host:port.
 */
export function redactUrlsIn(text: string): string {
  return text.replace(URL_IN_TEXT, (found) => {
    // Punctuation after a URL ("at http://host/v1: fetch failed") belongs to the sentence.
    const url = found.replace(/[.,;:)\]]+$/, "");
    const rest = found.slice(url.length);
    return URL.canParse(url) && isBare(new URL(url)) ? found : `${redactUrl(url)}${rest}`;
  });
}

function isBare(url: URL): boolean {
  return (
    url.username === "" &&
    url.password === "" &&
    url.search === "" &&
    url.hash === "" &&
    (url.pathname === "/" || url.pathname === "")
  );
}

/**
 * Expected failures become one clear message and an exit code, never a stack trace. Unexpected ones
 * print their message too; KEEPER_DEBUG=1 adds the stack for a bug report. No line carries a URL's
 * secrets, whichever error it came from.
 */
export function reportError(
  error: unknown,
  writeLine: (line: string) => void = (l) => process.stderr.write(`${l}\n`),
): number {
  const write = (line: string) => writeLine(redactUrlsIn(line));
  // Commander prints its own parse errors before it throws; an InvalidArgumentError thrown by an
  // action (not by commander's parsing, which throws a plain CommanderError) has not been printed.
  if (error instanceof InvalidArgumentError) {
    write(`keeper: ${error.message}`);
    return EXIT.usage;
  }
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
