import type { Logger as CronLogger } from "node-cron";
import type { Logger } from "pino";

/**
 * node-cron's own messages, through Keeper's logger instead of plain lines on the console. A cycle
 * that outlasts its period has its next tick skipped by design (`noOverlap`): routine at a small plan,
 * where a watcher cycle waits for the budget, so it is debug; a missed execution (a blocked event loop)
 * stays a warning.
 */
export function cronLogger(logger: Logger, task: string): CronLogger {
  const log = logger.child({ cron: task });
  const errorText = (message: string | Error, err?: Error) =>
    err === undefined
      ? String(message instanceof Error ? message.message : message)
      : `${message}: ${err.message}`;
  return {
    info: (message) => log.debug(message),
    warn: (message) => (/overlap/i.test(message) ? log.debug(message) : log.warn(message)),
    error: (message, err) => log.error(errorText(message, err)),
    debug: (message, err) => log.debug(errorText(message, err)),
  };
}
