import { type Command, InvalidArgumentError } from "commander";
import { ConfigError } from "../core/errors.js";
import { HOST_NAME_RULE, isHostName } from "../ops/allowed-hosts.js";
import { SANDBOX_POOL_PROGRAM_ID } from "./chain/pool-program.js";
import { registerDriveCommands } from "./drive-commands.js";
import { ADMIN_PREFIX } from "./http/admin.js";
import { OPENAPI_PATH } from "./http/openapi-route.js";
import type { ResponseViolation } from "./http/response-check.js";
import type { RunningSandbox } from "./index.js";

/** What scripts may rely on when they start the sandbox without flags (issue 2). */
export const SANDBOX_DEFAULTS = {
  host: "127.0.0.1",
  port: 8787,
  chainPort: 8899,
  apiKey: "sandbox-key",
  seed: 1,
} as const;

/** The largest fleet `--wallets` serves: 11-14 s to start with its key files, 370-390 MB (docs/sandbox.md, "A fleet"). */
export const SANDBOX_MAX_WALLETS = 10_000;
/** The most `--events-per-category` makes: 1,400 events, about 2,800 markets. */
export const SANDBOX_MAX_EVENTS_PER_CATEGORY = 100;
/** Up to this many wallets the banner lists every one, and the written config is printed too. */
const LISTED_WALLETS_MAX = 20;

export interface SandboxCommandOptions {
  readonly port?: number;
  /** The local chain's RPC port (default 8899; with `port` 0, a free one). */
  readonly chainPort?: number;
  readonly apiKey?: string;
  readonly seed?: number;
  /** Wallets of the world (`--wallets`, default 4). */
  readonly wallets?: number;
  /** Events per category and provider (`--events-per-category`, default 4). */
  readonly eventsPerCategory?: number;
  /** Of the wallets past the first four, about this percent hold nothing (`--idle-wallet-pct`, default 0). */
  readonly idleWalletPct?: number;
  /** Where to write the wallets' key files and a ready config (`--keys-dir`). */
  readonly keysDir?: string;
  /** Host names answered besides loopback and IP addresses (`--allowed-host`, repeatable). */
  readonly allowedHosts?: readonly string[];
}

export interface SandboxCommandIo {
  /** Where the banner goes: the CLI passes its stdout writer (this module never prints on its own). */
  readonly print: (line: string) => void;
  /** Where SIGINT and SIGTERM come from; tests pass an emitter of their own. */
  readonly signals?: Pick<NodeJS.EventEmitter, "once" | "off">;
  /**
   * Where a warning goes: an answer of the sandbox that does not match its own `/openapi.json`
   * (default: stderr).
   */
  readonly warn?: (line: string) => void;
  /** Called once the sandbox is up, before waiting for a signal (tests read the URL from it). */
  readonly onStarted?: (sandbox: RunningSandbox) => void;
}

/** The lines `keeper sandbox` prints: what a person or a script needs to point Keeper at it. */
export function describeSandbox(sandbox: RunningSandbox): string[] {
  const lines = [
    `sandbox service  ${sandbox.url}`,
    `api key          ${sandbox.apiKey}`,
    `openapi          ${sandbox.url}${OPENAPI_PATH}`,
    `self-check       answers checked against ${OPENAPI_PATH}; counts at ${sandbox.url}${ADMIN_PREFIX}/response-check`,
  ];
  if (sandbox.chain !== undefined) lines.push(`chain rpc        ${sandbox.chain.url}`);
  const mints = ["usdc", "sol", "usdt", "keep", "wave", "bolt"].map(
    (key) => `${key.toUpperCase()} ${sandbox.tokenMints[key] ?? "?"}`,
  );
  lines.push(`token mints      ${mints.join(", ")}`);
  // Its swaps call the sandbox pool's program: a keeper pointed at it needs this signer key (see
  // docs/configuration.md). Claims pay mainnet USDC's mint, the default payout mint.
  // Its Forecast swaps are co-signed by its vault at execute: the signer accepts that key only if told.
  const vault = sandbox.chain?.assets.vault.publicKey.toBase58();
  const coSigner = vault === undefined ? "" : `, serviceSigners: [${vault}]`;
  lines.push(`keeper signer    { allowedPrograms: [${SANDBOX_POOL_PROGRAM_ID.toBase58()}]${coSigner} }`);
  lines.push(`wallets (${sandbox.wallets.length}):`);
  const listed = sandbox.wallets.length <= LISTED_WALLETS_MAX ? sandbox.wallets : sandbox.wallets.slice(0, 4);
  for (const wallet of listed) lines.push(`  ${wallet}`);
  const rest = sandbox.wallets.length - listed.length;
  if (rest > 0) lines.push(`  ... and ${rest} more (--keys-dir writes every one into keeper.yaml)`);
  return lines;
}

/** A violation as the one warning line `keeper sandbox` prints. */
export function violationLine(violation: ResponseViolation): string {
  return `warning: ${violation.operation} answered ${violation.status} with a body that does not match ${OPENAPI_PATH}: ${violation.error}`;
}

/** Waits for the first of SIGINT or SIGTERM, then stops listening for both. */
function nextStopSignal(signals: Pick<NodeJS.EventEmitter, "once" | "off">): Promise<string> {
  return new Promise((resolve) => {
    const stop = (signal: string) => {
      signals.off("SIGINT", stop);
      signals.off("SIGTERM", stop);
      resolve(signal);
    };
    signals.once("SIGINT", stop);
    signals.once("SIGTERM", stop);
  });
}

/** Runs the sandbox on loopback until SIGINT or SIGTERM, then closes it; resolves once all is closed. */
export async function runSandboxCommand(options: SandboxCommandOptions, io: SandboxCommandIo): Promise<void> {
  const port = options.port ?? SANDBOX_DEFAULTS.port;
  const warn = io.warn ?? ((line: string) => process.stderr.write(`${line}\n`));
  // Loaded here, not at the top: the sandbox (LiteSVM, fastify, the world) is tens of MB that
  // `keeper start` against a real service never needs.
  const { startSandbox } = await import("./index.js");
  const sandbox = await startSandbox({
    host: SANDBOX_DEFAULTS.host,
    port,
    apiKey: options.apiKey ?? SANDBOX_DEFAULTS.apiKey,
    seed: options.seed ?? SANDBOX_DEFAULTS.seed,
    ...(options.wallets === undefined ? {} : { walletCount: options.wallets }),
    ...(options.eventsPerCategory === undefined ? {} : { eventsPerCategory: options.eventsPerCategory }),
    ...(options.idleWalletPct === undefined ? {} : { idleWalletPct: options.idleWalletPct }),
    clock: "wall",
    // Checked, logged and counted, never refused: a client still gets the answer (docs/sandbox.md).
    checkResponses: "log",
    onResponseViolation: (violation) => warn(violationLine(violation)),
    ...(options.allowedHosts === undefined ? {} : { allowedHosts: options.allowedHosts }),
    ...(options.chainPort === undefined ? {} : { chain: { port: options.chainPort } }),
  }).catch((error: unknown) => {
    // A taken port is the operator's to fix, not a crash: say which flag changes it.
    const { code, port: taken } = error as { code?: unknown; port?: unknown };
    if (code === "EADDRINUSE") {
      const flag = taken === port ? "--port" : "--chain-port";
      throw new ConfigError([
        `${flag}: ${String(taken ?? port)} is already in use on ${SANDBOX_DEFAULTS.host}`,
      ]);
    }
    throw error;
  });
  // Listen before printing anything: whoever reads the banner as "up" may stop it at once, and a
  // SIGTERM before the listener would kill the process instead of closing the sandbox.
  const stopSignal = nextStopSignal(io.signals ?? process);
  for (const line of describeSandbox(sandbox)) io.print(line);
  if (options.keysDir !== undefined) {
    const { writeSandboxKeyFiles } = await import("./key-files.js");
    const written = await writeSandboxKeyFiles(sandbox, options.keysDir).catch(async (error: unknown) => {
      await sandbox.close();
      if (error instanceof ConfigError) throw error;
      throw new ConfigError([`--keys-dir: cannot write to ${options.keysDir}: ${(error as Error).message}`]);
    });
    io.print(`key files        ${written.dir} (wallet-<i>.json, api-key; mode 0600)`);
    if (written.looseDirMode !== undefined)
      io.print(
        `warning          ${written.dir} is open to others (mode ${written.looseDirMode.toString(8)}): chmod 700 it`,
      );
    io.print(`# ${written.configFile}: npx keeper start --config ${written.configFile}`);
    // A fleet's config is thousands of lines of wallets: it is in the file, not on the terminal.
    if (sandbox.wallets.length <= LISTED_WALLETS_MAX)
      for (const line of written.configYaml.trimEnd().split("\n")) io.print(line);
    else io.print(`# (${sandbox.wallets.length} wallets: the config is not printed)`);
  }
  io.onStarted?.(sandbox);
  const signal = await stopSignal;
  io.print(`${signal}: stopping the sandbox`);
  await sandbox.close();
}

const integerIn =
  (min: number, max: number) =>
  (value: string): number => {
    const parsed = Number(value);
    if (!/^-?\d+$/.test(value) || !Number.isSafeInteger(parsed) || parsed < min || parsed > max)
      throw new InvalidArgumentError(`must be an integer from ${min} to ${max}`);
    return parsed;
  };

/** Repeatable: each `--allowed-host` adds one name to the list. */
const hostNames = (value: string, previous: string[] = []): string[] => {
  if (!isHostName(value)) throw new InvalidArgumentError(HOST_NAME_RULE);
  return [...previous, value];
};

const nonEmpty = (value: string): string => {
  if (value.trim().length === 0) throw new InvalidArgumentError("must not be empty");
  return value;
};

/**
 * Adds `sandbox` to a commander program; the CLI decides where printing goes. `io` carries the rest of
 * `SandboxCommandIo` (tests pass their own signal emitter and read the started sandbox).
 */
export function registerSandboxCommand(
  program: Command,
  print: (line: string) => void,
  io: Omit<SandboxCommandIo, "print"> = {},
): void {
  const sandbox = program
    .command("sandbox")
    .description("run the sandbox service and local chain on loopback")
    .option(
      "--port <port>",
      "HTTP port of the service (0 picks a free one)",
      integerIn(0, 65_535),
      SANDBOX_DEFAULTS.port,
    )
    .option(
      "--chain-port <port>",
      `RPC port of the local chain (default ${SANDBOX_DEFAULTS.chainPort}; a free one when --port is 0)`,
      integerIn(0, 65_535),
    )
    .option("--api-key <key>", "API key the service accepts", nonEmpty, SANDBOX_DEFAULTS.apiKey)
    .option("--seed <seed>", "seed of the simulated world", integerIn(0, 2 ** 32 - 1), SANDBOX_DEFAULTS.seed)
    .option(
      "--wallets <n>",
      `wallets of the world (default 4, at most ${SANDBOX_MAX_WALLETS})`,
      integerIn(1, SANDBOX_MAX_WALLETS),
    )
    .option(
      "--events-per-category <n>",
      `events per category and provider (default 4, at most ${SANDBOX_MAX_EVENTS_PER_CATEGORY})`,
      integerIn(1, SANDBOX_MAX_EVENTS_PER_CATEGORY),
    )
    .option(
      "--idle-wallet-pct <n>",
      "of the wallets past the first four, about this percent hold nothing (default 0): a fleet's empty wallets",
      integerIn(0, 100),
    )
    .option("--keys-dir <dir>", "write the wallets' key files and a ready keeper.yaml there", nonEmpty)
    .option(
      "--allowed-host <name>",
      "a Host name to answer besides localhost and IP addresses (repeatable); others get 421",
      hostNames,
    )
    .action(
      async (opts: {
        port: number;
        chainPort?: number;
        apiKey: string;
        seed: number;
        wallets?: number;
        eventsPerCategory?: number;
        idleWalletPct?: number;
        keysDir?: string;
        allowedHost?: string[];
      }) => {
        const { allowedHost, ...rest } = opts;
        await runSandboxCommand(
          { ...rest, ...(allowedHost === undefined ? {} : { allowedHosts: allowedHost }) },
          { ...io, print },
        );
      },
    );
  registerDriveCommands(sandbox, print);
}
