import { type Command, Option } from "commander";
import { createApiClient } from "../api/index.js";
import { ALL_ROLES, type Role, startKeeper } from "../app/start-keeper.js";
import { apiKeyFor } from "../config/api-key.js";
import { loadConfig } from "../config/load-config.js";
import { connectRedis, redisTargetOf } from "../keeper/state/redis-connection.js";
import { createLogger } from "../ops/logger.js";
import { keySourcesOf, loadWallets, refuseKeyVariables } from "../signer/keys.js";
import { scrubberFor } from "./config-scrubber.js";
import { missingNodeFlags } from "./node-flags.js";
import { checkRpcReachable, checkServiceReachable } from "./preflight.js";

/** Resolves when SIGINT or SIGTERM arrives. */
export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      resolve(signal);
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
  });
}

export function registerStartCommand(program: Command, runDemo: () => Promise<void>): void {
  program
    .command("start")
    .description("run the keeper (with no config: the embedded demo on the sandbox)")
    .option("--config <file>", "config file (or KEEPER_CONFIG)")
    .addOption(new Option("--role <role>", "run one role only").choices(ALL_ROLES))
    .action(async (_opts: unknown, command: Command) => {
      // `--config` may be given before or after `start`; commander keeps it on whichever it parsed.
      const opts = command.optsWithGlobals<{ config?: string; role?: Role }>();
      const file = opts.config ?? process.env.KEEPER_CONFIG;
      if (!file) {
        await runDemo();
        return;
      }
      const roles = new Set<Role>(opts.role ? [opts.role] : ALL_ROLES);
      // User strategy code runs only where strategies are evaluated (the worker), and only once the
      // keys are loaded and their variables gone: the config is first checked without importing it.
      const checked = await loadConfig({ file, strategyModules: "check", requireWallets: true });
      const loadsKeys = roles.has("signer") && checked.mode === "live";
      if (!loadsKeys)
        refuseKeyVariables(
          checked.wallets,
          checked.mode === "live" ? `role ${[...roles].join(", ")}` : "dry-run",
        );
      // Defence in depth: any line that still carries a secret is scrubbed before it is written.
      const scrubber = scrubberFor(checked);
      const logger = createLogger({ level: checked.ops.logLevel, format: checked.ops.logFormat, scrubber });
      const missing = missingNodeFlags();
      if (missing.length > 0)
        logger.warn(
          { missing },
          "node was started without Keeper's flags: its memory may grow to about twice as much, and a claim burst after a quiet spell costs more CPU (docs/operations.md#memory)",
        );
      (await connectRedis(redisTargetOf(checked))).disconnect();
      if (roles.has("worker"))
        await checkServiceReachable(
          createApiClient({
            baseUrl: checked.service.baseUrl,
            apiKey: apiKeyFor(checked),
            retries: 1,
            timeoutMs: 5_000,
          }),
          checked,
        );
      if (roles.has("signer") && checked.mode === "live") await checkRpcReachable(checked);
      const wallets = loadsKeys
        ? await loadWallets(keySourcesOf(checked.wallets), { logger, scrubber })
        : undefined;
      const config = roles.has("worker") ? await loadConfig({ file }) : checked;
      const keeper = await startKeeper({ config, roles, logger, ...(wallets ? { wallets } : {}) });
      const signal = await untilSignal();
      logger.info({ signal }, "shutting down: finishing in-flight jobs");
      await keeper.stop();
      logger.info("stopped");
    });
}
