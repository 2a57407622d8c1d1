import type { Redis } from "ioredis";

type ScriptArg = string | number;
type ScriptCommand = (...args: ScriptArg[]) => Promise<unknown>;

/**
 * A Lua script Keeper runs on every poll or claim, sent by its SHA1 through ioredis's defineCommand
 * (EVALSHA; the text only when the server does not know it yet: after a restart, or on a cluster node
 * that never ran it). EVAL would write the whole text, up to a kilobyte, with every call.
 *
 * `name` must be unique in Keeper (it becomes a method of the client). Call it with the keys first,
 * `numberOfKeys` of them, then the arguments.
 */
export function redisScript<Result>(name: string, numberOfKeys: number, lua: string) {
  const defined = (redis: Redis): ScriptCommand => {
    const client = redis as unknown as Record<string, ScriptCommand | undefined>;
    if (client[name] === undefined) redis.defineCommand(name, { numberOfKeys, lua });
    return client[name] as ScriptCommand;
  };
  const run = (redis: Redis, ...keysThenArgs: ScriptArg[]): Promise<Result> =>
    defined(redis).apply(redis, keysThenArgs) as Promise<Result>;
  /**
   * One run per argument list, in one pipeline: one write and one round trip for all of them. The
   * answers come in order, an error in the place of its run. On a cluster every run's keys must share
   * one slot (a concern's hash tag).
   */
  const many = async (redis: Redis, calls: readonly ScriptArg[][]): Promise<Array<Result | Error>> => {
    defined(redis);
    // A pipeline takes the client's scripts as they are when it is made: defined first.
    const pipeline = redis.pipeline();
    const queue = (pipeline as unknown as Record<string, ScriptCommand>)[name] as ScriptCommand;
    for (const keysThenArgs of calls) queue.apply(pipeline, keysThenArgs);
    const answers = (await pipeline.exec()) ?? [];
    return answers.map(([error, value]) => error ?? (value as Result));
  };
  return Object.assign(run, { many });
}
