import { Keypair } from "@solana/web3.js";
import pino from "pino";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createApiClient } from "../../../../src/api/index.js";
import { type KeeperConfig, loadConfig } from "../../../../src/config/load-config.js";
import { QUEUES } from "../../../../src/keeper/names.js";
import { PauseSwitch } from "../../../../src/keeper/operator/pause.js";
import { processPoll } from "../../../../src/keeper/pipeline/poll-worker.js";
import type { KeeperQueues, PollJobData } from "../../../../src/keeper/queues/queues.js";
import { serviceSnapshotSource } from "../../../../src/keeper/reads/service-snapshot-source.js";
import { type PollSkipReason, Scheduler } from "../../../../src/keeper/watch/scheduler.js";
import type { RunningSandbox } from "../../../../src/sandbox/index.js";
import { startCheckedSandbox } from "../../../helpers/checked-sandbox.js";
import { type LedgerAndQueues, ledgerAndQueues } from "../../../helpers/ledger-queues.js";
import { testPollDeps } from "../../../helpers/poll-deps.js";

const IDLE_WALLETS = 12;
const SWEEPS = 8;
const START = Date.UTC(2026, 10, 27, 12, 0, 0);

/**
 * A fleet of 4 busy wallets (the sandbox's, each holding positions and orders) and 12 idle ones (wallets
 * the service knows nothing of: no position, no order), swept once a minute for eight minutes after one
 * orders poll, against the sandbox over HTTP and Redis. The service's requests are counted as they go.
 */
describe("adaptive sweep: idle wallets swept once in idleSweepMultiple sweeps", () => {
  let sandbox: RunningSandbox;
  let ctx: LedgerAndQueues;
  let busy: string[];
  const idle = Array.from({ length: IDLE_WALLETS }, () => Keypair.generate().publicKey.toBase58());

  beforeAll(async () => {
    sandbox = await startCheckedSandbox({ port: 0, chain: false, rateLimit: false });
    busy = sandbox.wallets.slice(0, 4);
  });
  afterAll(async () => {
    await sandbox?.close();
  });
  beforeEach(async () => {
    ctx = await ledgerAndQueues("adaptive-sweep");
  });
  afterEach(async () => {
    await ctx.cleanup();
  });

  /** Runs the fleet for SWEEPS minutes; the service requests of those sweeps, and polls per wallet. */
  async function run(idleSweepMultiple: number) {
    const base = await loadConfig({ env: {} });
    const config: KeeperConfig = { ...base, schedules: { ...base.schedules, idleSweepMultiple } };
    let requests = 0;
    const client = createApiClient({
      baseUrl: sandbox.url,
      apiKey: sandbox.apiKey,
      hooks: {
        onRequest: () => {
          requests += 1;
        },
      },
    });
    const logger = pino({ level: "silent" });
    const source = serviceSnapshotSource(client, {
      strategies: [],
      pageSize: 100,
      connection: undefined as never,
      logger,
      orderLists: client,
    });
    const poll = ctx.queue<PollJobData>(QUEUES.poll);
    const skips: PollSkipReason[] = [];
    const wallets = [...busy, ...idle];
    const scheduler = new Scheduler({
      config,
      wallets,
      queues: { poll } as KeeperQueues,
      redis: ctx.redis,
      keys: ctx.keys,
      pause: new PauseSwitch(ctx.redis, ctx.keys),
      logger,
      onSkipped: (reason) => skips.push(reason),
    });
    const polls = new Map<string, number>();
    // One tick, then every poll it queued, run to the end at the tick's time (as a worker would).
    const sweep = async (kind: "pollPositions" | "pollOrders", at: number) => {
      await scheduler.tick(kind, new Date(at));
      const jobs = await poll.getJobs(["prioritized", "waiting"]);
      for (const job of jobs) {
        const deps = testPollDeps(ctx, [], { strategies: [], source, now: () => new Date(at) });
        await processPoll(job, deps);
        await job.remove();
        if (kind === "pollPositions") polls.set(job.data.wallet, (polls.get(job.data.wallet) ?? 0) + 1);
      }
    };
    // The orders poll lists every wallet's orders (idle needs "no pending order" seen), then a first
    // sweep at start; what is counted is the eight sweeps after them.
    await sweep("pollOrders", START);
    await sweep("pollPositions", START + 1_000);
    polls.clear();
    requests = 0;
    for (let minute = 1; minute <= SWEEPS; minute++)
      await sweep("pollPositions", START + 1_000 + minute * 60_000);
    return { requests, polls, idleSkips: skips.filter((s) => s === "idle").length };
  }

  it("idle wallets cost a quarter of the requests at rest; busy wallets are polled at every sweep", async () => {
    const everySweep = await run(1);
    await ctx.cleanup();
    ctx = await ledgerAndQueues("adaptive-sweep");
    const adaptive = await run(4);

    // Every wallet is polled at each of the eight sweeps without it.
    for (const w of [...busy, ...idle]) expect(everySweep.polls.get(w)).toBe(SWEEPS);
    expect(everySweep.idleSkips).toBe(0);
    // With it: the busy wallets still at every sweep (same reaction), the idle ones at one in four.
    for (const w of busy) expect(adaptive.polls.get(w)).toBe(SWEEPS);
    for (const w of idle) expect(adaptive.polls.get(w)).toBe(SWEEPS / 4);
    expect(adaptive.idleSkips).toBe(IDLE_WALLETS * (SWEEPS - SWEEPS / 4));
    // An idle wallet's poll is one request (an empty page of positions): the requests fall by that much.
    expect(everySweep.requests - adaptive.requests).toBe(IDLE_WALLETS * (SWEEPS - SWEEPS / 4));
    expect(adaptive.requests).toBeLessThan(everySweep.requests);
  });
});
