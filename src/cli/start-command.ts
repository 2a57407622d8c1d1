import { type Command, Option } from "commander";
import { createApiClient } from "../api/index.js";
import { apiKeyFor } from "../config/api-key.js";
import { loadConfig } from "../config/load-config.js";
import { ALL_ROLES, type Role, startKeeper } from "../keeper/keeper.js";
import { connectRedis } from "../keeper/redis-connection.js";
import { createLogger } from "../ops/logger.js";
import { SecretScrubber } from "../ops/secret-scrubber.js";
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
      const config = await loadConfig({ file });
      // Defence in depth: any line that still carries a secret is scrubbed before it is written.
      const scrubber = new SecretScrubber(
        [config.secrets.apiKey, config.secrets.webhookUrl].filter((s): s is string => s !== undefined),
      );
      const logger = createLogger({ level: config.ops.logLevel, scrubber });
      const roles = new Set<Role>(opts.role ? [opts.role] : ALL_ROLES);
      (await connectRedis(config.redis.url)).disconnect();
      if (roles.has("worker"))
        await checkServiceReachable(
          createApiClient({
            baseUrl: config.service.baseUrl,
            apiKey: apiKeyFor(config),
            retries: 1,
            timeoutMs: 5_000,
          }),
          config,
        );
      if (roles.has("signer") && config.mode === "live") await checkRpcReachable(config);
      const keeper = await startKeeper({ config, roles, logger });
      const signal = await untilSignal();
      logger.info({ signal }, "shutting down: finishing in-flight jobs");
      await keeper.stop();
      logger.info("stopped");
    });
}
