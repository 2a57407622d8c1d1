import { redisAnswers, redisServerInstalled, startPrivateRedis } from "../../src/cli/private-redis.js";
import { REDIS_URL } from "../helpers/redis.js";

/**
 * The suite needs a real Redis. Where none answers at REDIS_URL (a fresh machine), one is started for
 * the run, in memory only, and stopped after it, the same way the demo does; without redis-server
 * the run stops at once with one line saying how to get it.
 */
export default async function setup(): Promise<(() => void) | undefined> {
  if (await redisAnswers({ url: REDIS_URL })) return undefined;
  if (!redisServerInstalled())
    throw new Error(
      `no Redis answers at ${REDIS_URL} and redis-server is not installed (apt-get install redis-server)`,
    );
  const child = await startPrivateRedis({ url: REDIS_URL });
  process.stdout.write(`tests: started a private redis-server at ${REDIS_URL} for this run\n`);
  return () => {
    child.kill();
  };
}
