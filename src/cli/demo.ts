import type { ChildProcess } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { ALL_ROLES, type RunningKeeper, startKeeper } from "../app/start-keeper.js";
import { isLoopback, type KeeperConfig, KeeperSecrets, loadConfig } from "../config/load-config.js";
import { TransientError } from "../core/errors.js";
import { formatUsd } from "../core/money.js";
import {
  connectRedis,
  type RedisTarget,
  redactUrl,
  redisTargetOf,
} from "../keeper/state/redis-connection.js";
import { createLogger } from "../ops/logger.js";
import { SANDBOX_POOL_PROGRAM_ID } from "../sandbox/chain/pool-program.js";
import { startSandbox } from "../sandbox/index.js";
import { Wallets } from "../signer/keys.js";
import { scrubberFor } from "./config-scrubber.js";
import { demoRedisPrefix } from "./context.js";
import { openThroughService } from "./demo-opens.js";
import {
  chooseExitTargets,
  completeDueRecurringOrders,
  demoStrategies,
  type ExitTarget,
  forecastOpen,
  forecastTarget,
  holdAtCost,
  moveToTarget,
  positionOfTarget,
  smallClaimOpen,
} from "./demo-scenario.js";
import { DemoStory, type OpenedPosition } from "./demo-story.js";
import { redisAnswers, redisServerInstalled, startPrivateRedis } from "./private-redis.js";
import { untilSignal } from "./start-command.js";

const DEMO_POLL = "*/5 * * * * *";
const RESOLVE_EVERY_MS = 20_000;
const SUMMARY_EVERY_MS = 5_000;

/**
 * `npm start` with no config: the sandbox service, the local chain and a keeper with the sandbox
 * wallets, all in this process, printing a live summary. Markets holding the wallets' positions
 * resolve every few seconds so there is something to claim; three positions' prices move past a
 * take-profit and a stop-loss (one a Forecast position the demo opened, sold through the service's
 * execute endpoint); a small winner it opened is left to the service's free claim, which the demo lets
 * come due a day later on the sandbox's clock; a DCA plan runs through recurring orders (the demo
 * completes each round's order when its last order is due, as the service would) and a limit order is
 * placed.
 */
export async function runDemo(print: (line: string) => void): Promise<void> {
  const base = await loadConfig({});
  let privateRedis: ChildProcess | undefined;
  const redisTarget = redisTargetOf(base);
  // The URL may hold a password: messages show only its scheme, host and port.
  const redisAt = redactUrl(base.redis.url);
  if (!(await redisAnswers(redisTarget))) {
    if (!isLocalRedis(base.redis.url) || !redisServerInstalled())
      throw new TransientError(
        `no Redis answers at ${redisAt}: install one (apt-get install redis-server, or docker run -p 6379:6379 redis) or set KEEPER_REDIS_URL`,
      );
    privateRedis = await startPrivateRedis(redisTarget);
    print(
      `demo: no Redis answered at ${redisAt}; started a private in-memory redis-server there (it stops with the demo)`,
    );
  }
  const servicePort = Number(new URL(base.service.baseUrl).port || 8787);
  const rpcPort = Number(new URL(base.rpc.url).port || 8899);
  const sandbox = await startSandbox({ clock: "wall", port: servicePort, chain: { port: rpcPort } }).catch(
    (error: unknown) => {
      privateRedis?.kill();
      if ((error as { code?: unknown }).code === "EADDRINUSE")
        throw new TransientError(
          `port ${servicePort} or ${rpcPort} on 127.0.0.1 is taken: is a demo or \`keeper sandbox\` already running?`,
        );
      throw error;
    },
  );
  const wallets = Wallets.fromSecretKeys(
    sandbox.wallets.map((_, i) => sandbox.world.walletKeypair(i).secretKey),
  );
  const prefix = demoRedisPrefix();
  await wipeDemoState(redisTarget, prefix);
  const { targets, forecast, small, opened } = await openDemoPositions(sandbox).catch(
    async (error: unknown) => {
      await sandbox.close();
      privateRedis?.kill();
      throw error;
    },
  );
  const config: KeeperConfig = {
    ...base,
    redis: { ...base.redis, prefix },
    wallets: sandbox.wallets.map((pubkey, i) => ({ pubkey, label: `sandbox wallet ${i}` })),
    schedules: { ...base.schedules, pollPositions: DEMO_POLL },
    strategies: await loadStrategies(demoStrategies(targets, sandbox.world.now())),
    // The sandbox pool's program pays a swap's output in the swap's own transaction (claims pay
    // mainnet USDC's mint, the default payout mint).
    signer: {
      ...base.signer,
      rebroadcastIntervalMs: 1_000,
      allowedPrograms: [...base.signer.allowedPrograms, SANDBOX_POOL_PROGRAM_ID.toBase58()],
      // Forecast swaps are co-signed by the sandbox's vault at its execute endpoint.
      serviceSigners: [
        ...base.signer.serviceSigners,
        ...(sandbox.chain === undefined ? [] : [sandbox.chain.assets.vault.publicKey.toBase58()]),
      ],
    },
    // The demo talks to its own sandbox, whose key is the sandbox's: a KEEPER_API_KEY meant for
    // another service would be refused by it on every request.
    secrets: new KeeperSecrets(undefined, base.secrets.webhookUrl, undefined, base.secrets.redisPassword),
  };
  const logger = createLogger({
    level: process.env.KEEPER_LOG_LEVEL === undefined ? "warn" : base.ops.logLevel,
    format: base.ops.logFormat,
    scrubber: scrubberFor(config),
  });
  const keeper = await startKeeper({ config, roles: new Set(ALL_ROLES), logger, wallets });
  print(
    `demo: sandbox service ${sandbox.url} (API key ${sandbox.apiKey}), chain ${sandbox.chain?.url ?? "(none)"}`,
  );
  print(
    `demo: keeper ${config.mode}, ${sandbox.wallets.length} wallets, polling every 5 s; metrics ${keeper.ops?.url ?? "off"}/metrics`,
  );
  if (keeper.ops !== undefined) print(`demo: status page ${keeper.ops.url}/`);
  print(
    "demo: strategies auto-claim, exit-rules (two take-profits, one on Forecast, and a stop-loss), dca (USDC to SOL), limit-orders (sell SOL at 250)",
  );
  print(opened);
  print("demo: `npx keeper status` and `npx keeper ledger` show its state; Ctrl-C stops it");

  const startedAt = Date.now();
  const moved = new Set<ExitTarget>();
  const skip = new Set([...targets.map((t) => t.marketId), small.marketId]);
  const exitPositions = targets.map((t) => positionOfTarget(sandbox.world, t));
  const story = new DemoStory(sandbox, keeper, forecast, small, exitPositions, print);
  const resolver = setInterval(() => resolveOneMarket(sandbox, skip, print), RESOLVE_EVERY_MS);
  const summary = setInterval(() => {
    for (const target of targets)
      if (!moved.has(target) && Date.now() - startedAt >= target.moveAfterMs) {
        moved.add(target);
        if (moveToTarget(sandbox.world, target))
          print(
            `demo: market ${target.marketId} YES price moved to $${(target.yesPriceMicro / 1e6).toFixed(2)}: sandbox wallet ${target.walletIndex}'s ${target.forecast ? "Forecast " : ""}${target.isYes ? "YES" : "NO"} position passes its ${target.rule}`,
          );
      }
    for (const order of completeDueRecurringOrders(sandbox.world))
      print(`demo: recurring order ${order} completed (its DCA round is over)`);
    // A step or a summary that failed to read is told on the next tick.
    void story
      .step()
      .catch(() => undefined)
      .then(() => printSummary(keeper, print))
      .catch(() => undefined);
  }, SUMMARY_EVERY_MS);
  try {
    await untilSignal();
    print("demo: stopping");
  } finally {
    clearInterval(resolver);
    clearInterval(summary);
    await keeper.stop();
    await sandbox.close();
    privateRedis?.kill();
  }
}

/**
 * What the demo opens through the service before the keeper starts, as any client would: a Forecast
 * position the exit rules will sell, and half a contract on a market it resolves at once for it, a
 * winner worth less than a claim's fee. Prices of the exit targets are held at cost until moved.
 */
async function openDemoPositions(sandbox: Sandbox) {
  const { world } = sandbox;
  const wallets = sandbox.wallets.length;
  const targets = chooseExitTargets(world, wallets);
  const forecastOrder = forecastOpen(world, wallets);
  const forecastPubkey = await openThroughService(sandbox, forecastOrder);
  targets.push(forecastTarget(world, forecastOrder, forecastPubkey));
  holdAtCost(world, targets);
  const smallOrder = smallClaimOpen(world, wallets, new Set(targets.map((t) => t.marketId)));
  const smallPubkey = await openThroughService(sandbox, smallOrder);
  world.resolveMarket(smallOrder.marketId, smallOrder.isYes ? "yes" : "no");
  const contracts = world.findPosition(forecastPubkey)?.contracts ?? 0;
  const line = `demo: opened through the service's execute endpoint: sandbox wallet ${forecastOrder.walletIndex}'s Forecast position on ${forecastOrder.marketId} (${contracts} contracts YES), and sandbox wallet ${smallOrder.walletIndex}'s ${smallOrder.contractsDecimal} contract on ${smallOrder.marketId}, resolved YES at once (a $${Number(smallOrder.contractsDecimal).toFixed(2)} winner)`;
  const position = (order: typeof forecastOrder, pubkey: string): OpenedPosition => ({
    walletIndex: order.walletIndex,
    marketId: order.marketId,
    pubkey,
  });
  return {
    targets,
    forecast: position(forecastOrder, forecastPubkey),
    small: position(smallOrder, smallPubkey),
    opened: line,
  };
}

function isLocalRedis(url: string): boolean {
  return isLoopback(url.replace(/^rediss?:/, "http:"));
}

type Sandbox = Awaited<ReturnType<typeof startSandbox>>;

/** The demo's strategies, checked and loaded as a config file's would be. */
async function loadStrategies(strategies: unknown[]): Promise<KeeperConfig["strategies"]> {
  const dir = await mkdtemp(join(tmpdir(), "keeper-demo-"));
  try {
    const file = join(dir, "strategies.yaml");
    await writeFile(file, stringify({ strategies }));
    return (await loadConfig({ file })).strategies;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Resolves the first still-open market that one of the sandbox wallets holds (not an exit target's). */
function resolveOneMarket(sandbox: Sandbox, skip: ReadonlySet<string>, print: (line: string) => void): void {
  const { world } = sandbox;
  for (let i = 0; i < sandbox.wallets.length; i += 1) {
    for (const position of world.positionsOfWallet(i)) {
      const market = world.marketOf(position);
      if (world.marketState(market).status !== "open" || skip.has(market.marketId)) continue;
      const result = (market.index + i) % 2 === 0 ? "yes" : "no";
      world.resolveMarket(market.marketId, result);
      print(`demo: market ${market.marketId} resolved ${result.toUpperCase()}`);
      return;
    }
  }
}

async function wipeDemoState(target: RedisTarget, prefix: string): Promise<void> {
  const redis = await connectRedis(target);
  try {
    for (const pattern of [`${prefix}:*`, `${prefix}-*`]) {
      let cursor = "0";
      do {
        const [next, keys] = await redis.scan(cursor, "MATCH", pattern, "COUNT", 1000);
        cursor = next;
        if (keys.length > 0) await redis.del(...keys);
      } while (cursor !== "0");
    }
  } finally {
    redis.disconnect();
  }
}

async function printSummary(keeper: RunningKeeper, print: (line: string) => void) {
  const rows = await keeper.ledger.list({ limit: 10_000 });
  const pollCount = (await keeper.metrics.pollDuration.get()).values.find((v) =>
    v.metricName?.endsWith("_count"),
  )?.value;
  const confirmedOf = (kind: string) => rows.filter((r) => r.kind === kind && r.status === "confirmed");
  const confirmed = confirmedOf("claim");
  const left = rows.filter((r) => r.status === "left_to_service").length;
  const usd = confirmed.reduce((sum, r) => sum + BigInt(r.amountMicroUsd ?? "0"), 0n);
  const inFlight = rows.filter(
    (r) => !["confirmed", "failed", "refused", "dry-run", "settled", "left_to_service"].includes(r.status),
  ).length;
  const failed = rows.filter((r) => r.status === "failed" || r.status === "refused").length;
  print(
    `demo: ${pollCount ?? 0} polls, ${rows.length} intents, ${inFlight} in flight, ${confirmed.length} claims confirmed ($${formatUsd(usd)}), ${left} left to the service, ${confirmedOf("close").length} exits, ${confirmedOf("createRecurring").length} DCA rounds, ${confirmedOf("createTrigger").length} orders, ${failed} failed or refused`,
  );
}
