import type { Command } from "commander";
import pino from "pino";
import { builtInStrategies } from "../../strategies/index.js";
import { UsageError } from "../core/errors.js";
import { replay } from "../keeper/replay/engine.js";
import { gridPoints, parseGrid, strategyAt } from "../keeper/replay/grid.js";
import { readRecording } from "../keeper/replay/read-recording.js";
import type { CliContext } from "./context.js";
import { formatJson } from "./output.js";
import { exitTotals, formatGrid, formatReplay } from "./replay-report.js";

interface ReplayOptions {
  from: string;
  wallet?: string[];
  grid?: string[];
  json?: boolean;
}

/**
 * `keeper replay --from DIR [--grid key=v,v ...] [--json]`: the configured strategies (`--config`)
 * over a recording (`record.dir`, or `keeper sandbox record`), with the fill model of
 * `keeper/replay/fill-model.ts`. Reads files only: no service, no Redis, no chain.
 */
export function registerReplayCommand(
  program: Command,
  ctx: CliContext,
  print: (text: string) => void,
): void {
  program
    .command("replay")
    .description("run the configured strategies over a recording and print what each rule would have done")
    .requiredOption("--from <dir>", "the recording's directory (record.dir, or keeper sandbox record --out)")
    .option(
      "--grid <settings...>",
      "exit-rules settings to compare, one key=v1,v2,... each (e.g. takeProfitPct=10,20,30 stopLossPct=5,10)",
    )
    .option(
      "--wallet <pubkey>",
      "replay only this wallet's polls (repeatable)",
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option("--json", "print JSON")
    .action(async (opts: ReplayOptions) => {
      // Checked before any file is read: a bad grid is the command line's fault, said first.
      const axes = opts.grid === undefined ? undefined : parseGrid(opts.grid);
      const config = await ctx.config();
      const polls = await readRecording(opts.from, opts.wallet ? { wallets: new Set(opts.wallet) } : {});
      if (polls.length === 0 && opts.wallet)
        throw new UsageError(`--wallet: no poll of ${opts.wallet.join(", ")} in ${opts.from}`);
      // Strategies log through their engine; a replay prints its report and nothing else.
      const logger = pino({ level: "silent" });
      if (axes === undefined) {
        const result = replay({ polls, strategies: config.strategies, logger });
        print(opts.json ? formatJson(result) : formatReplay(result, opts.from));
        return;
      }
      const points = gridPoints(axes);
      const strategies = points.map((point) => strategyAt(point, config.strategies, builtInStrategies));
      const rows = points.map((point, i) => ({
        point,
        result: replay({ polls, strategies: [strategies[i] as (typeof strategies)[number]], logger }),
      }));
      print(
        opts.json
          ? formatJson(
              rows.map(({ point, result }) => ({
                settings: Object.fromEntries(point),
                ...exitTotals(result.exits),
                exits: result.exits,
              })),
            )
          : formatGrid(rows, opts.from),
      );
    });
}
