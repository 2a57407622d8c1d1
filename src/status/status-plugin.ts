import type { Logger } from "pino";
import type { OpsPlugin } from "../ops/http.js";
import { registerStatusRoutes, type StatusPageRoutesOptions } from "./status-routes.js";

/**
 * The status page as an ops-server plugin: the page at `/` and, with an operator token, the admin
 * routes and /queues. The application passes it in; the ops server never imports the status page.
 */
export function statusPagePlugin(
  options: Omit<StatusPageRoutesOptions, "logger">,
  logger: Logger,
): OpsPlugin {
  return {
    acceptsWrites: options.adminToken !== undefined,
    register: (app) => registerStatusRoutes(app, { ...options, logger }),
  };
}
