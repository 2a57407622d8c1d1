/**
 * A claim's I/O floor, measured in the same run: what the parts a claim cannot do without (its BullMQ
 * jobs, its Redis commands, its HTTP requests) cost in CPU on their own, right now, on this machine.
 * This machine's speed moves by 2x or more between hours, so a claim's CPU in milliseconds compares
 * only within one sitting; its multiple of this floor compares across runs.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { forkBenchScript } from "./keeper-fork.js";
import type { BenchOptions } from "./options.js";

/**
 * What one claim does through its I/O, counted in earlier sessions (bench/README.md): two BullMQ
 * jobs (the build, the signing and its watch), about 18 Redis commands of Keeper's own (MONITOR, the
 * tenth session), about 5.5 HTTP requests (the build, the policy's two account reads and its
 * simulation, the send, a share of the batched status and height reads).
 */
export const CLAIM_IO = { jobs: 2, commands: 18, requests: 5.5 } as const;

/** CPU ms of one of each part, alone. */
export interface IoPartCosts {
  readonly jobMs: number;
  readonly commandMs: number;
  readonly requestMs: number;
}

/** The CPU ms of one claim's parts alone: CLAIM_IO priced at `parts`. */
export function ioFloorPerClaim(parts: IoPartCosts): number {
  return (
    CLAIM_IO.jobs * parts.jobMs + CLAIM_IO.commands * parts.commandMs + CLAIM_IO.requests * parts.requestMs
  );
}

/** Each part's median over the rounds (a round's figures are noisy on a shared machine). */
export function medianParts(rounds: readonly IoPartCosts[]): IoPartCosts {
  if (rounds.length === 0) throw new RangeError("the I/O floor needs at least one measured round");
  const median = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    const mid = Math.floor(sorted.length / 2);
    return sorted.length % 2 === 1
      ? (sorted[mid] as number)
      : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  };
  return {
    jobMs: median(rounds.map((r) => r.jobMs)),
    commandMs: median(rounds.map((r) => r.commandMs)),
    requestMs: median(rounds.map((r) => r.requestMs)),
  };
}

/** "1.02 ms a claim (a job 0.090 ms, a command 0.015, a request 0.096)" */
export function formatIoFloor(parts: IoPartCosts): string {
  return (
    `${ioFloorPerClaim(parts).toFixed(2)} ms a claim (a BullMQ job ${parts.jobMs.toFixed(3)} ms, ` +
    `a Redis command ${parts.commandMs.toFixed(3)} ms, an HTTP request ${parts.requestMs.toFixed(3)} ms)`
  );
}

/** The mean per-claim floor of the floors measured in a run; undefined without one. */
export function meanFloor(floors: readonly IoPartCosts[]): number | undefined {
  if (floors.length === 0) return undefined;
  return floors.reduce((sum, f) => sum + ioFloorPerClaim(f), 0) / floors.length;
}

/** "6.1x" : a claim's CPU as a multiple of its I/O floor (the mean of the floors measured). */
export function timesFloor(claimCpuMs: number, floors: readonly IoPartCosts[]): string | undefined {
  const floor = meanFloor(floors);
  return floor !== undefined && floor > 0 ? `${(claimCpuMs / floor).toFixed(1)}x` : undefined;
}

/** Messages of the floor's child process (Node IPC). */
export interface IoFloorRequest {
  readonly type: "measure";
  readonly redisUrl: string;
  readonly prefix: string;
  readonly httpUrl: string;
  readonly rounds: number;
}
export type IoFloorReply = { type: "rounds"; rounds: IoPartCosts[] } | { type: "failed"; message: string };

/** The answer the floor's HTTP requests get: about the size of a policy's read of eight accounts. */
const ANSWER = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  result: {
    context: { slot: 1 },
    value: Array.from({ length: 8 }, (_, i) => ({
      lamports: 2_039_280 + i,
      owner: "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA",
      data: ["A".repeat(220), "base64"],
      executable: false,
      rentEpoch: 0,
    })),
  },
});

function answeringServer(): Promise<Server> {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(ANSWER);
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

/**
 * Measures the floor in a process of its own, started like the keeper's (same runtime, same node
 * flags), the HTTP server here so that only the client's side is counted, as in the keeper. The
 * median of `rounds` rounds after one warm-up round.
 */
export async function measureIoFloor(
  options: Pick<BenchOptions, "keeperRuntime" | "keeperNodeFlags" | "redisUrl">,
  prefix: string,
  rounds = 5,
): Promise<IoPartCosts> {
  const server = await answeringServer();
  // Built or through tsx as the keeper runs; a test without a build falls back to the sources.
  const child = forkBenchScript("io-floor-process", options.keeperRuntime, options.keeperNodeFlags, {
    fallBackToSources: true,
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    const reply = await new Promise<IoFloorReply>((resolve, reject) => {
      timer = setTimeout(() => reject(new Error("the I/O floor took over two minutes")), 120_000);
      child.once("message", (message) => resolve(message as IoFloorReply));
      child.once("exit", (code) =>
        reject(new Error(`the I/O floor's process exited (${code}) before answering`)),
      );
      const { port } = server.address() as AddressInfo;
      child.send({
        type: "measure",
        redisUrl: options.redisUrl,
        prefix: `${prefix}:io-floor`,
        httpUrl: `http://127.0.0.1:${port}/`,
        rounds: rounds + 1,
      } satisfies IoFloorRequest);
    });
    if (reply.type === "failed") throw new Error(`the I/O floor: ${reply.message}`);
    return medianParts(reply.rounds.slice(1));
  } finally {
    clearTimeout(timer);
    if (child.exitCode === null) child.kill();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
