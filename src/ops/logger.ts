import { hostname } from "node:os";
import { type DestinationStream, type Logger, type LoggerOptions, pino } from "pino";
import { prettyFactory } from "pino-pretty";
import { errorSerializer } from "./error-serializer.js";
import { REDACTED, type SecretScrubber } from "./secret-scrubber.js";

export type { Logger } from "pino";
export type LogLevel = "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";

/** Property names that hold secrets wherever they appear in a logged object. */
export const SECRET_FIELDS = [
  "apiKey",
  "api_key",
  "x-api-key",
  "authorization",
  "secretKey",
  "secret_key",
  "privateKey",
  "private_key",
  "keypair",
  "secret",
  "seed",
  "mnemonic",
  "password",
  "webhookUrl",
  "webhook_url",
] as const;

/** pino wildcards match one level each, so each field is listed at the top and a few levels down. */
const REDACT_DEPTH = 4;

function buildRedactPaths(): string[] {
  const paths: string[] = [];
  for (const field of SECRET_FIELDS) {
    // Names that are not identifiers (`x-api-key`) need bracket notation: `*.headers["x-api-key"]`.
    const isIdentifier = /^[A-Za-z_$][\w$]*$/.test(field);
    for (let depth = 0; depth < REDACT_DEPTH; depth++) {
      const wildcards = Array.from({ length: depth }, () => "*").join(".");
      if (isIdentifier) paths.push(wildcards === "" ? field : `${wildcards}.${field}`);
      else paths.push(`${wildcards}["${field}"]`);
    }
  }
  return paths;
}

/** Every redaction path, configured once here for every logger Keeper creates. */
export const REDACT_PATHS: readonly string[] = buildRedactPaths();

/** How lines are written: `pretty` readable lines, `json` one JSON object a line, `auto` by the terminal. */
export type LogFormat = "auto" | "json" | "pretty";

/** Whether a format writes readable lines: `auto` does when stdout is a terminal (a person reads it). */
export function isPrettyFormat(format: LogFormat, isTerminal: boolean): boolean {
  return format === "pretty" || (format === "auto" && isTerminal);
}

export interface CreateLoggerOptions {
  level: LogLevel;
  /** Human-readable output; defaults to `format`, and that to whether stdout is a terminal. */
  pretty?: boolean;
  /** ops.logFormat; `auto` when omitted. Ignored when `pretty` is given. */
  format?: LogFormat;
  /** Where lines go; stdout when omitted. */
  destination?: DestinationStream;
  /** Fields on every line, in addition to pid and hostname. */
  base?: Record<string, unknown>;
  /** Scrubs known secret strings from every line before it reaches the destination. */
  scrubber?: SecretScrubber;
}

export function createLogger(options: CreateLoggerOptions): Logger {
  const pretty = options.pretty ?? isPrettyFormat(options.format ?? "auto", process.stdout.isTTY === true);
  const loggerOptions: LoggerOptions = {
    level: options.level,
    base: { pid: process.pid, hostname: hostname(), ...options.base },
    timestamp: pino.stdTimeFunctions.isoTime,
    // Level names, not numbers: log aggregators and people both read them.
    formatters: { level: (label) => ({ level: label }) },
    redact: { paths: [...REDACT_PATHS], censor: REDACTED },
    serializers: { err: errorSerializer, error: errorSerializer },
  };
  return pino(loggerOptions, buildDestination(pretty, options));
}

function buildDestination(pretty: boolean, options: CreateLoggerOptions): DestinationStream {
  const sink = options.destination ?? pino.destination({ dest: 1, sync: false });
  // pino-pretty formats in-process (not as a transport worker) so the scrubber and a test destination
  // see exactly what is printed.
  const formatted = pretty ? prettyDestination(sink, options.destination === undefined) : sink;
  // The scrubber sits in front of the formatter: it sees the JSON line, the form the secrets were added in.
  return options.scrubber ? options.scrubber.wrap(formatted) : formatted;
}

function prettyDestination(sink: DestinationStream, colorize: boolean): DestinationStream {
  const format = prettyFactory({ colorize, translateTime: "SYS:HH:MM:ss.l", ignore: "pid,hostname" });
  return { write: (line: string) => sink.write(format(line)) };
}

/** The context a child logger carries; every field is optional and only the given ones are set. */
export interface LogContext {
  wallet?: string;
  intent?: string;
  job?: string;
  strategy?: string;
}

export function childLogger(logger: Logger, context: LogContext): Logger {
  const bindings: Record<string, string> = {};
  for (const [name, value] of Object.entries(context)) if (typeof value === "string") bindings[name] = value;
  return logger.child(bindings);
}
