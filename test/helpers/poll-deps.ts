import pino from "pino";
import type { ConfiguredStrategy } from "../../src/config/load-config.js";
import type { Position } from "../../src/core/schemas/prediction.js";
import { QUEUES } from "../../src/keeper/names.js";
import { PauseSwitch } from "../../src/keeper/operator/pause.js";
import type { PollDeps } from "../../src/keeper/pipeline/poll-worker.js";
import type { ActionJobData } from "../../src/keeper/queues/queues.js";
import { StrategyStateStore } from "../../src/keeper/state/strategy-state.js";
import { exitRules } from "../../strategies/exit-rules/index.js";
import type { LedgerAndQueues } from "./ledger-queues.js";

/** exit-rules with a take-profit no price reaches: a poll that runs a strategy and asks for nothing. */
export const quietExitRules: ConfiguredStrategy[] = [
  {
    name: "exit-rules",
    strategy: exitRules as ConfiguredStrategy["strategy"],
    config: exitRules.configSchema.parse({ takeProfitPct: 10_000 }),
  },
];

/**
 * What processPoll needs, on a test's Redis: live mode, a service that lists `positions` and no
 * pending orders, the test's ledger, keys and actions queue, silent logs. `fields` add to or replace
 * any of it (strategies always come from the test).
 */
export function testPollDeps(
  redis: LedgerAndQueues,
  positions: Position[],
  fields: Pick<PollDeps, "strategies"> & Partial<PollDeps>,
): PollDeps {
  return {
    mode: "live",
    source: { positions: async () => positions, pendingOrders: async () => [] },
    ledger: redis.ledger,
    states: new StrategyStateStore(redis.redis, redis.keys),
    pause: new PauseSwitch(redis.redis, redis.keys),
    redis: redis.redis,
    keys: redis.keys,
    actions: redis.queue<ActionJobData>(QUEUES.actions),
    logger: pino({ level: "silent" }),
    ...fields,
  };
}
