import { type OpsServer, startOpsServer } from "../ops/http.js";
import { redisReachable, redisWritable, rpcReachable } from "../ops/readiness-checks.js";
import { statusPagePlugin } from "../status/status-plugin.js";
import type { SharedInfrastructure } from "./shared-infrastructure.js";

/** What the ops server reads of the shared infrastructure. */
export type OpsServerDeps = Pick<
  SharedInfrastructure,
  "config" | "redis" | "keys" | "metrics" | "queues" | "logger" | "watchdog" | "polls" | "wallets"
>;

/** The ops server (/metrics, /healthz, /readyz) with the status page mounted on it. */
export function startKeeperOpsServer(shared: OpsServerDeps): Promise<OpsServer> {
  const { config, redis, keys, metrics, queues, logger } = shared;
  return startOpsServer({
    host: config.ops.host,
    port: config.ops.port,
    allowedHosts: config.ops.allowedHosts,
    metrics,
    logger,
    liveness: () => shared.watchdog.check(),
    checks: {
      redis: redisReachable(redis),
      redisWritable: redisWritable(redis, keys.readinessProbe),
      rpc: rpcReachable(config.rpc.url),
      lastPollFresh: () => shared.polls.freshness(config.ops.stalePollSeconds * 1000),
    },
    plugins: [
      statusPagePlugin(
        {
          deps: { config, redis, keys, wallets: shared.wallets },
          onOperatorAction: (action) => metrics.operatorActions.inc({ action }),
          onRefused: (reason) => metrics.opsRequestsRefused.inc({ reason }),
          ...(config.secrets.adminToken === undefined
            ? {}
            : {
                adminToken: config.secrets.adminToken,
                queues: queues.all(),
                queuesWritable: config.ops.queuesWritable,
              }),
        },
        logger,
      ),
    ],
    onHostRefused: () => metrics.opsRequestsRefused.inc({ reason: "host" }),
  });
}
