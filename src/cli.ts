import { Command } from "commander";
import { PermanentApiError } from "./api/index.js";
import { createCliContext } from "./cli/context.js";
import { reportError } from "./cli/errors.js";
import { registerOpsCommands } from "./cli/ops-commands.js";
import { keyRefusal } from "./cli/preflight.js";
import { registerProtectionCommands } from "./cli/protection-commands.js";
import { registerReadCommands } from "./cli/read-commands.js";
import { registerReplayCommand } from "./cli/replay-command.js";
import { registerSandboxRecordCommand } from "./cli/sandbox-record.js";
import { registerStartCommand } from "./cli/start-command.js";
import { registerSandboxCommand } from "./sandbox/main.js";

/**
 * The `keeper` command. Expected failures print one line and exit 1 (run time) or 2 (bad config or
 * arguments); no stack trace reaches the terminal.
 */
const program = new Command()
  .name("keeper")
  .description("unattended automation for a wallet on a prediction-market and trading service")
  .option("--config <file>", "config file (or KEEPER_CONFIG)")
  .showHelpAfterError("(keeper --help lists the commands)")
  .exitOverride();

const print = (line: string) => console.log(line);
const ctx = createCliContext(() => program.opts<{ config?: string }>().config ?? process.env.KEEPER_CONFIG);

// The demo embeds the sandbox: loaded only when it runs, so a keeper against a real service never holds it.
registerStartCommand(program, async () => (await import("./cli/demo.js")).runDemo(print));
registerSandboxCommand(program, print);
registerSandboxRecordCommand(program, print);
registerOpsCommands(program, ctx);
registerProtectionCommands(program, ctx);
registerReadCommands(program, ctx);
registerReplayCommand(program, ctx, print);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  process.exitCode = reportError(await namingRefusedKey(error));
}

/** A read the service refused for its key names where the key came from, as `keeper start` does. */
async function namingRefusedKey(error: unknown): Promise<unknown> {
  if (!(error instanceof PermanentApiError)) return error;
  const config = await ctx.config().catch(() => undefined);
  return (config && keyRefusal(error, config)) ?? error;
}
