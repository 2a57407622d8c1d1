import { readdir } from "node:fs/promises";
import { type Command, InvalidArgumentError } from "commander";
import { collectUnique, createApiClient, iteratePositions } from "../api/index.js";
import { UsageError } from "../core/errors.js";
import { takeSnapshot } from "../keeper/reads/snapshot.js";
import { recordLineOf } from "../keeper/replay/recording.js";
import { makeDirectory } from "../ops/make-directory.js";
import { RecordWriter } from "../ops/record-writer.js";
import { isoTime } from "./output.js";

export interface SandboxRecordOptions {
  readonly out: string;
  /** Minutes of the world's time to record (its prices take a step a minute). */
  readonly minutes: number;
  /** Seconds of world time between two polls of every wallet. */
  readonly everySeconds: number;
  readonly seed: number;
  readonly wallets?: number;
}

/**
 * `keeper sandbox record`: a recording of the sandbox's world for `keeper replay`, made as a keeper
 * makes one. A sandbox on a driven clock starts in this process (no chain: nothing is signed); every
 * `everySeconds` of world time each wallet's snapshot is taken by the keeper's own `takeSnapshot`
 * over the service's HTTP API and written by the same `RecordWriter` as `record.dir`. World time
 * runs as fast as the reads go, so hours of markets (closes, resolutions) take seconds.
 */
export async function recordSandbox(
  options: SandboxRecordOptions,
  print: (line: string) => void,
): Promise<void> {
  // Checked before the sandbox starts: a directory it cannot write is the command line's fault.
  await makeDirectory(options.out, 0o700).catch((error: Error) => {
    throw new UsageError(`--out: cannot write to ${options.out}: ${error.message}`);
  });
  const existing = await readdir(options.out);
  if (existing.some((name) => name.endsWith(".jsonl.gz")))
    throw new UsageError(`--out: ${options.out} already holds a recording; give a new or empty directory`);
  const { startSandbox } = await import("../sandbox/index.js");
  const { DrivenClock } = await import("../sandbox/world/clock.js");
  const clock = new DrivenClock();
  const sandbox = await startSandbox({
    port: 0,
    seed: options.seed,
    clock,
    chain: false,
    rateLimit: false,
    ...(options.wallets === undefined ? {} : { walletCount: options.wallets }),
  });
  let failed = 0;
  const writer = new RecordWriter({
    dir: options.out,
    onOutcome: (outcome) => {
      if (outcome !== "written") failed += 1;
    },
    onError: (file, message) => print(`warning: ${file}: ${message}`),
  });
  try {
    const api = createApiClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey });
    const source = {
      positions: (wallet: string) =>
        collectUnique(iteratePositions(api, { ownerPubkey: wallet }), (p) => p.pubkey),
      pendingOrders: async () => [],
    };
    const start = clock.nowSeconds();
    let polls = 0;
    for (let at = start; at <= start + options.minutes * 60; at = clock.advance(options.everySeconds)) {
      for (const wallet of sandbox.wallets) {
        const snapshot = await takeSnapshot({
          wallet,
          withOrders: false,
          source,
          inFlight: [],
          nowSeconds: at,
        });
        writer.write(recordLineOf(snapshot));
        polls += 1;
      }
      // One step's lines on disk before the next: memory stays flat however long the recording.
      await writer.flush();
    }
    if (failed > 0) throw new UsageError(`--out: ${failed} lines could not be written to ${options.out}`);
    print(
      `recorded ${polls} polls of ${sandbox.wallets.length} wallets (seed ${options.seed}), ${isoTime(start)} to ${isoTime(clock.nowSeconds() - options.everySeconds)}, in ${options.out}`,
    );
    print(`replay it: npx keeper replay --from ${options.out} --config FILE`);
  } finally {
    await sandbox.close();
  }
}

const integerIn =
  (min: number, max: number) =>
  (value: string): number => {
    const parsed = Number(value);
    if (!/^\d+$/.test(value) || parsed < min || parsed > max)
      throw new InvalidArgumentError(`must be an integer from ${min} to ${max}`);
    return parsed;
  };

/** A recording polls every wallet each step: beyond this many it is a benchmark, not a quick start. */
const MAX_RECORDED_WALLETS = 100;

/** Adds `record` under the `sandbox` command (registered by src/sandbox/main.ts). */
export function registerSandboxRecordCommand(program: Command, print: (line: string) => void): void {
  const sandbox = program.commands.find((command) => command.name() === "sandbox");
  if (sandbox === undefined) throw new Error("the sandbox command is registered first");
  sandbox
    .command("record")
    .description("write a recording of the sandbox world for keeper replay (world time runs fast)")
    .requiredOption("--out <dir>", "where to write it (a new or empty directory)")
    .option("--minutes <n>", "minutes of world time to record (default 240)", integerIn(1, 7 * 24 * 60), 240)
    .option(
      "--every <seconds>",
      "seconds between two polls of every wallet (default 60)",
      integerIn(1, 3_600),
      60,
    )
    // --seed and --wallets are the sandbox command's own (`keeper sandbox record --seed 3` sets them).
    .action(async (opts: { out: string; minutes: number; every: number }) => {
      const world = sandbox.opts<{ seed: number; wallets?: number }>();
      if (world.wallets !== undefined && world.wallets > MAX_RECORDED_WALLETS)
        throw new UsageError(`--wallets: at most ${MAX_RECORDED_WALLETS} for a recording`);
      await recordSandbox(
        {
          out: opts.out,
          minutes: opts.minutes,
          everySeconds: opts.every,
          seed: world.seed,
          ...(world.wallets === undefined ? {} : { wallets: world.wallets }),
        },
        print,
      );
    });
}
