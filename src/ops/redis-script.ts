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
  return (redis: Redis, ...keysThenArgs: ScriptArg[]): Promise<Result> => {
    const client = redis as unknown as Record<string, ScriptCommand | undefined>;
    if (client[name] === undefined) redis.defineCommand(name, { numberOfKeys, lua });
    const command = client[name] as ScriptCommand;
    return command.apply(redis, keysThenArgs) as Promise<Result>;
  };
}
