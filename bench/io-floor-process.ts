/**
 * The I/O floor's process (bench/io-floor.ts): on the benchmark's request, times the CPU of no-op
 * BullMQ jobs, plain Redis commands and HTTP POSTs on kept-alive connections, each 16 at a time as
 * the keeper runs them, and answers each round's cost of one of each.
 */
import { Agent, request } from "node:http";
import { Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import type { IoFloorReply, IoFloorRequest, IoPartCosts } from "./io-floor.js";

const AT_ONCE = 16;
/** A round is about 200 claims' worth of each part: long enough to dwarf a timer tick, short enough. */
const JOBS = 400;
const COMMANDS = 3_600;
const REQUESTS = 1_100;

/** Runs `task(i)` for i < count, `AT_ONCE` at a time; answers the CPU ms it took, this process in all. */
async function cpuOf(count: number, task: (i: number) => Promise<unknown>): Promise<number> {
  const before = process.cpuUsage();
  let next = 0;
  const lane = async () => {
    while (next < count) await task(next++);
  };
  await Promise.all(Array.from({ length: AT_ONCE }, lane));
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

function post(agent: Agent, url: URL, body: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: "POST", agent, headers: { "content-type": "application/json" } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          JSON.parse(Buffer.concat(chunks).toString("utf8"));
          resolve();
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

async function measure(ask: IoFloorRequest): Promise<IoPartCosts[]> {
  // No reconnecting: an unreachable Redis fails the measure at once instead of hanging it.
  const redis = new Redis(ask.redisUrl, {
    maxRetriesPerRequest: null,
    lazyConnect: true,
    retryStrategy: () => null,
  });
  // The connect's rejection says what failed; the client's error event would repeat it unhandled.
  redis.on("error", () => undefined);
  await redis.connect();
  const hash = `${ask.prefix}:hash`;
  await redis.hset(hash, { wallet: "W".repeat(44), state: "built", attempts: "1", at: String(Date.now()) });
  const queue = new Queue("floor", { connection: redis, prefix: ask.prefix });
  let done = 0;
  const waiting = new Map<number, () => void>();
  const worker = new Worker("floor", async () => undefined, {
    connection: redis.duplicate(),
    prefix: ask.prefix,
    concurrency: AT_ONCE,
  });
  worker.on("completed", (job) => {
    done += 1;
    waiting.get(Number(job.data.n))?.();
  });
  const agent = new Agent({ keepAlive: true, maxSockets: AT_ONCE });
  const url = new URL(ask.httpUrl);
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "getMultipleAccounts", params: [["x"]] });
  const rounds: IoPartCosts[] = [];
  try {
    for (let round = 0; round < ask.rounds; round++) {
      const jobCpu = await cpuOf(JOBS, async (i) => {
        const n = round * JOBS + i;
        const finished = new Promise<void>((resolve) => waiting.set(n, resolve));
        await queue.add("noop", { n }, { removeOnComplete: true });
        await finished;
        waiting.delete(n);
      });
      const commandCpu = await cpuOf(COMMANDS, () => redis.hgetall(hash));
      const requestCpu = await cpuOf(REQUESTS, () => post(agent, url, body));
      rounds.push({
        jobMs: jobCpu / JOBS,
        commandMs: commandCpu / COMMANDS,
        requestMs: requestCpu / REQUESTS,
      });
    }
    if (done < JOBS * ask.rounds) throw new Error(`only ${done} of ${JOBS * ask.rounds} jobs completed`);
    return rounds;
  } finally {
    agent.destroy();
    await worker.close();
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    await redis.del(hash);
    redis.disconnect();
  }
}

process.once("message", (message: IoFloorRequest) => {
  measure(message).then(
    (rounds) => process.send?.({ type: "rounds", rounds } satisfies IoFloorReply, () => process.exit(0)),
    (error: unknown) =>
      process.send?.(
        {
          type: "failed",
          message: error instanceof Error ? error.message : String(error),
        } satisfies IoFloorReply,
        () => process.exit(1),
      ),
  );
});
