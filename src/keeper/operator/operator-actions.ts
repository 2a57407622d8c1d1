import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import type { KeeperConfig } from "../../config/load-config.js";
import { RedisAttemptStore } from "../../signer/attempt-store.js";
import { QUEUES, type RedisKeys } from "../names.js";
import { type ActionJobData, jobOptions } from "../queues/queues.js";
import { Ledger } from "../state/ledger.js";
import { PauseSwitch } from "./pause.js";
import { Protections } from "./protections.js";
import { type RetryResult, retryIntent } from "./retry-intent.js";

/** What an operator can do to a running keeper: `keeper pause|resume|retry` and the status page's buttons. */
export interface OperatorDeps {
  config: KeeperConfig;
  redis: Redis;
  keys: RedisKeys;
}

export async function pauseKeeper(deps: OperatorDeps, reason: string, nowSeconds: number): Promise<void> {
  await new PauseSwitch(deps.redis, deps.keys).pause(reason, nowSeconds);
}

/** Lifts a pause and resets every circuit breaker (what tripped them no longer counts). */
export async function resumeKeeper(deps: OperatorDeps, nowSeconds: number): Promise<void> {
  await new PauseSwitch(deps.redis, deps.keys).resume();
  await new Protections(deps.redis, deps.keys, deps.config.protections).reset(nowSeconds);
}

/** Admits a refused or failed intent again (see retryIntent). */
export async function retryKeeperIntent(deps: OperatorDeps, key: string): Promise<RetryResult> {
  const actions = new Queue<ActionJobData>(QUEUES.actions, {
    connection: deps.redis,
    prefix: deps.keys.queuePrefix(QUEUES.actions),
    defaultJobOptions: jobOptions(deps.config, QUEUES.actions),
  });
  try {
    return await retryIntent(
      {
        ledger: new Ledger(deps.redis, deps.keys),
        attempts: new RedisAttemptStore(deps.redis, deps.keys.attemptsPrefix),
        actions,
      },
      key,
    );
  } finally {
    await actions.close();
  }
}

/** A retry that did not happen, as one sentence (the CLI's error, the page's answer). */
export function retryRefusal(key: string, result: Exclude<RetryResult, { outcome: "retried" }>): string {
  switch (result.outcome) {
    case "unknown":
      return `retry: no intent ${key} in the ledger (keeper ledger lists them)`;
    case "not_retryable":
      return `retry: ${key} is ${result.status}; only a refused or failed intent can be retried (nothing changed)`;
    case "confirmed_on_record":
      return `retry: the signer recorded a confirmed transaction of ${key}: it is done (nothing changed)`;
  }
}
