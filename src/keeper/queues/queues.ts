import { type ConnectionOptions, type JobsOptions, Queue } from "bullmq";
import type { KeeperConfig } from "../../config/load-config.js";
import { QUEUES, type QueueName } from "../names.js";

export type WatchTrigger = "resolved" | "price" | "time";

/** Of two triggers of one poll, the one its latency is filed under: a result, then a price, then a time. */
export function weightierTrigger(a: WatchTrigger, b: WatchTrigger): WatchTrigger {
  const order: readonly WatchTrigger[] = ["resolved", "price", "time"];
  return order.indexOf(a) <= order.indexOf(b) ? a : b;
}

export interface PollJobData {
  wallet: string;
  kind: "positions" | "orders";
  tick: number;
  /** Set on a poll the market watcher asked for: why, and when it saw the change (epoch ms). */
  target?: { trigger: WatchTrigger; seenAtMs: number; marketIds: string[] };
}
export interface ActionJobData {
  intentKey: string;
  /** Which build of the current try this is: 1, then 2.. after an expired transaction. */
  build: number;
}
export interface SignJobData {
  intentKey: string;
  build: number;
}
/** Watch the intent's recorded attempt (sent by the sign job of this build) to its outcome. */
export interface ConfirmJobData {
  intentKey: string;
  build: number;
}

export interface KeeperQueues {
  poll: Queue<PollJobData>;
  actions: Queue<ActionJobData>;
  sign: Queue<SignJobData>;
  confirm: Queue<ConfirmJobData>;
  all(): Array<Queue>;
  close(): Promise<void>;
}

/** Job options per queue: explicit attempts, backoff and retention, never BullMQ's unbounded defaults. */
export function jobOptions(config: KeeperConfig, queue: QueueName): JobsOptions {
  const q = config.queues;
  return {
    // A poll that fails is simply superseded by the next tick; builds and signs retry.
    attempts: queue === QUEUES.poll ? 1 : q.attempts,
    backoff: { type: "exponential", delay: q.backoffMs, jitter: 0.5 },
    removeOnComplete: { count: q.removeOnComplete },
    removeOnFail: { count: q.removeOnFail },
  };
}

/**
 * `prefix`: one for every queue, or each queue's own (RedisKeys.queuePrefix: a hash tag on a cluster).
 * `onError`: told of each queue's connection errors. Every queue has a listener: BullMQ prints an
 * unheard error with its stack to stderr, outside the logger and its scrubber, on every reconnect
 * of a Redis outage. The workers and the client already log the outage, so the default hears it only.
 */
export function createQueues(
  connection: ConnectionOptions,
  prefix: string | ((queue: QueueName) => string),
  config: KeeperConfig,
  onError: (queue: QueueName, error: Error) => void = () => {},
): KeeperQueues {
  const prefixOf = typeof prefix === "string" ? () => prefix : prefix;
  const make = <T>(name: QueueName) => {
    const queue = new Queue<T>(name, {
      connection,
      prefix: prefixOf(name),
      defaultJobOptions: jobOptions(config, name),
    });
    queue.on("error", (error) => onError(name, error));
    return queue;
  };
  const poll = make<PollJobData>(QUEUES.poll);
  const actions = make<ActionJobData>(QUEUES.actions);
  const sign = make<SignJobData>(QUEUES.sign);
  const confirm = make<ConfirmJobData>(QUEUES.confirm);
  return {
    poll,
    actions,
    sign,
    confirm,
    all: () => [poll, actions, sign, confirm] as Queue[],
    async close() {
      await Promise.allSettled([poll.close(), actions.close(), sign.close(), confirm.close()]);
    },
  };
}
