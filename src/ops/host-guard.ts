import type { FastifyInstance } from "fastify";
import type { Logger } from "pino";
import type { HostAllowList } from "./allowed-hosts.js";

/**
 * Refuses, before any route runs, a request whose Host the server does not answer to: a page whose
 * name was rebound to this machine would otherwise read the status page and /metrics as its own.
 * 421 (Misdirected Request): the client reached a server that is not the one it named.
 */
export function registerHostGuard(
  app: FastifyInstance,
  allowList: HostAllowList,
  logger: Logger,
  onRefused?: () => void,
): void {
  app.addHook("onRequest", async (request, reply) => {
    if (allowList.allows(request.headers.host)) return undefined;
    logger.warn(
      { path: request.url.split("?")[0], from: request.ip, host: String(request.headers.host).slice(0, 100) },
      "ops request for another host name refused",
    );
    onRefused?.();
    return reply.code(421).send({
      ok: false,
      detail: "refused: this server does not answer to that Host name (add it to ops.allowedHosts)",
    });
  });
}
