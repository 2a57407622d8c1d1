/**
 * Idle-load benchmark: what a fleet with empty wallets costs at rest, with the idle sweep
 * (`schedules.idleSweepMultiple`) at the keeper's default and, as the baseline in the same run, off
 * (every wallet every sweep). Same sandbox world, same plan, one keeper after the other.
 * `npm run bench:idle -- --help` for the flags; bench/README.md for the figures.
 */
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import { KEEPER_NODE_FLAGS } from "../src/cli/node-flags.js";
import { type RunningSandbox, startSandbox } from "../src/sandbox/index.js";
import { forkKeeper, sandboxEndpoints } from "./keeper-fork.js";
import { cronEvery } from "./options.js";
import type { FromKeeper, RequestEvent, ToKeeper } from "./protocol.js";
import { deletePrefix } from "./redis-prefix.js";
import { ServedRequests } from "./served-requests.js";
import { settleBacklog, TAKE_PROFIT_USD } from "./world-sample.js";

const USAGE = `usage: npm run bench:idle -- [options]
  --wallets N            sandbox wallets (default 1000)
  --idle-pct P           about this percent of them hold nothing (default 50)
  --rps R                the plan, requests a second over a 60 s window (default 100)
  --interval S           schedules.pollPositions, seconds (default 30)
  --orders-interval S    schedules.pollOrders, seconds (default 60)
  --multiple M           the idle sweep's multiple measured against 1 (default 4, the keeper's own)
  --minutes M            the time measured, after a warm-up of both intervals (default 4)
  --redis URL            Redis (default redis://127.0.0.1:6379; keys under a unique prefix, removed)`;

interface IdleOptions {
  wallets: number;
  idlePct: number;
  rps: number;
  interval: number;
  ordersInterval: number;
  multiple: number;
  minutes: number;
  redisUrl: string;
}

interface LoadFigures {
  requestsPerMinute: number;
  /** Requests a minute naming an idle wallet, and a busy one. */
  idlePerMinute: number;
  busyPerMinute: number;
  throttled: number;
}

const log = (line: string) => console.log(line);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function parseOptions(argv: string[]): IdleOptions | undefined {
  const text = { type: "string" } as const;
  const { values } = parseArgs({
    args: argv,
    options: {
      wallets: text,
      "idle-pct": text,
      rps: text,
      interval: text,
      "orders-interval": text,
      multiple: text,
      minutes: text,
      redis: text,
      help: { type: "boolean" },
    },
  });
  if (values.help) return undefined;
  type NumberFlag = Exclude<keyof typeof values, "help" | "redis">;
  const number = (name: NumberFlag, fallback: number, min: number, max: number): number => {
    const raw = values[name];
    const n = raw === undefined ? fallback : Number(raw);
    if (!Number.isFinite(n) || n < min || n > max)
      throw new Error(`--${name}: expected a number from ${min} to ${max}, got ${String(raw)}`);
    return n;
  };
  return {
    wallets: Math.round(number("wallets", 1000, 10, 100_000)),
    idlePct: number("idle-pct", 50, 0, 100),
    rps: number("rps", 100, 1, 1_000),
    interval: Math.round(number("interval", 30, 10, 3_600)),
    ordersInterval: Math.round(number("orders-interval", 60, 10, 3_600)),
    multiple: Math.round(number("multiple", 4, 2, 100)),
    minutes: number("minutes", 4, 1, 60),
    redisUrl: values.redis ?? "redis://127.0.0.1:6379",
  };
}

/** One keeper on the world until the warm-up is over, then its requests over `minutes`. */
async function measure(
  options: IdleOptions,
  sandbox: RunningSandbox,
  served: ServedRequests,
  idleWallets: ReadonlySet<number>,
  multiple: number,
): Promise<LoadFigures> {
  const prefix = `bench-idle-${Date.now().toString(36)}-${randomBytes(3).toString("hex")}`;
  const events: RequestEvent[] = [];
  let failure: string | undefined;
  let ready = false;
  served.start();
  const child = forkKeeper("dist", undefined, KEEPER_NODE_FLAGS);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.on("message", (message: FromKeeper) => {
    if (message.type === "ready") ready = true;
    else if (message.type === "progress") events.push(...served.take());
    else if (message.type === "stopped") events.push(...served.stop());
    else if (message.type === "failed") failure = message.error;
  });
  child.send({
    type: "start",
    ...sandboxEndpoints(sandbox),
    redisUrl: options.redisUrl,
    prefix,
    requestsPerSecond: options.rps,
    windowSeconds: 60,
    pollCron: cronEvery(options.interval),
    ordersCron: cronEvery(options.ordersInterval),
    idleSweepMultiple: multiple,
    watcher: true,
    takeProfitPriceUsd: TAKE_PROFIT_USD,
    concurrency: undefined,
    pollConcurrency: undefined,
    seed: 1,
    walletCount: options.wallets,
    logFile: join(tmpdir(), `${prefix}-keeper.log`),
    logLevel: "warn",
  } satisfies ToKeeper);
  try {
    for (let waited = 0; !ready; waited += 250) {
      if (failure || waited > 180_000) throw new Error(`the keeper did not start: ${failure ?? "timeout"}`);
      await sleep(250);
    }
    // Every wallet seen by a positions poll and an orders poll: only then is a wallet known idle.
    const warmUpS = options.interval + options.ordersInterval + 10;
    log(`  multiple ${multiple}: warming up for ${warmUpS} s, then measuring ${options.minutes} min`);
    await sleep(warmUpS * 1000);
    const from = Date.now();
    await sleep(options.minutes * 60_000);
    const to = Date.now();
    await sleep(1_500); // the last progress report of the window
    if (failure) throw new Error(`the keeper failed: ${failure}`);
    const inWindow = events.filter(([at]) => at >= from && at < to);
    const perMinute = (n: number) => (n * 60_000) / (to - from);
    return {
      requestsPerMinute: perMinute(inWindow.length),
      idlePerMinute: perMinute(inWindow.filter(([, , wallet]) => idleWallets.has(wallet)).length),
      busyPerMinute: perMinute(inWindow.filter(([, , w]) => w >= 0 && !idleWallets.has(w)).length),
      throttled: inWindow.filter(([, , , status]) => status === 429).length,
    };
  } finally {
    child.send({ type: "stop" } satisfies ToKeeper);
    await Promise.race([exited, sleep(60_000)]);
    const redis = new Redis(options.redisUrl);
    await deletePrefix(redis, prefix);
    redis.disconnect();
  }
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  if (!options) {
    log(USAGE);
    return 0;
  }
  const served = new ServedRequests();
  const sandbox = await startSandbox({
    port: 0,
    onServed: served.onServed,
    seed: 1,
    walletCount: options.wallets,
    eventsPerCategory: 7,
    idleWalletPct: options.idlePct,
    rateLimit: { requestsPerSecond: options.rps, windowSeconds: 60, retryAfter: true },
    chain: { port: 0 },
  });
  served.walletsAre(sandbox.wallets);
  try {
    settleBacklog(sandbox.world);
    const busy = new Set(sandbox.world.positions.map((p) => p.ownerIndex));
    const idle = new Set<number>();
    for (let w = 0; w < options.wallets; w++) if (!busy.has(w)) idle.add(w);
    log(
      `== idle load · ${options.wallets} wallets (${idle.size} hold nothing) · ${options.rps} req/s · ` +
        `positions every ${options.interval} s, orders every ${options.ordersInterval} s ==`,
    );
    const baseline = await measure(options, sandbox, served, idle, 1);
    const adaptive = await measure(options, sandbox, served, idle, options.multiple);
    const row = (name: string, a: number, b: number) =>
      `${name.padEnd(34)}${a.toFixed(0).padStart(10)}${b.toFixed(0).padStart(14)}${(b / a).toFixed(2).padStart(10)}×`;
    log(
      `${"".padEnd(34)}${"multiple 1".padStart(10)}${`multiple ${options.multiple}`.padStart(14)}${"ratio".padStart(11)}`,
    );
    log(row("requests a minute", baseline.requestsPerMinute, adaptive.requestsPerMinute));
    log(row("  of idle wallets", baseline.idlePerMinute, adaptive.idlePerMinute));
    log(row("  of busy wallets", baseline.busyPerMinute, adaptive.busyPerMinute));
    log(`429s: ${baseline.throttled} / ${adaptive.throttled}`);
    return 0;
  } finally {
    await sandbox.close();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`benchmark failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
