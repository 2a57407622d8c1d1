import type { ChildProcess } from "node:child_process";
import { isLoopback, type KeeperConfig, KeeperSecrets, loadConfig } from "../config/load-config.js";
import { TransientError } from "../core/errors.js";
import { formatUsd } from "../core/money.js";
import { ALL_ROLES, type RunningKeeper, startKeeper } from "../keeper/keeper.js";
import { connectRedis } from "../keeper/redis-connection.js";
import { createLogger } from "../ops/logger.js";
import { startSandbox } from "../sandbox/index.js";
import { Wallets } from "../signer/keys.js";
import { demoRedisPrefix } from "./context.js";
import { redisAnswers, redisServerInstalled, startPrivateRedis } from "./private-redis.js";
import { untilSignal } from "./start-command.js";

const DEMO_POLL = "*/5 * * * * *";
const RESOLVE_EVERY_MS = 20_000;
const SUMMARY_EVERY_MS = 5_000;

/**
 * `npm start` with no config: the sandbox service, the local chain and a keeper with the sandbox
 * wallets, all in this process, printing a live summary. Markets holding the wallets' positions
 * resolve every few seconds so there is something to claim.
 */
export async function runDemo(print: (line: string) => void): Promise<void> {
  const base = await loadConfig({});
  let privateRedis: ChildProcess | undefined;
  if (!(await redisAnswers(base.redis.url))) {
    if (!isLocalRedis(base.redis.url) || !redisServerInstalled())
      throw new TransientError(
        `no Redis answers at ${base.redis.url}: install one (apt-get install redis-server, or docker run -p 6379:6379 redis) or set KEEPER_REDIS_URL`,
      );
    privateRedis = await startPrivateRedis(base.redis.url);
    print(
      `demo: no Redis answered at ${base.redis.url}; started a private in-memory redis-server there (it stops with the demo)`,
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
  await wipeDemoState(base.redis.url, prefix);
  const config: KeeperConfig = {
    ...base,
    redis: { ...base.redis, prefix },
    wallets: sandbox.wallets.map((pubkey, i) => ({ pubkey, label: `sandbox wallet ${i}` })),
    schedules: { ...base.schedules, pollPositions: DEMO_POLL },
    // The sandbox's USDC is a mint of its own, not mainnet's; it settles a swap's output after the swap.
    signer: {
      ...base.signer,
      rebroadcastIntervalMs: 1_000,
      payoutMints: [sandbox.usdcMint],
      settledLater: ["close", "swap"],
    },
    // The demo talks to its own sandbox, whose key is the sandbox's: a KEEPER_API_KEY meant for
    // another service would be refused by it on every request.
    secrets: new KeeperSecrets(undefined, base.secrets.webhookUrl),
  };
  const logger = createLogger({
    level: process.env.KEEPER_LOG_LEVEL === undefined ? "warn" : base.ops.logLevel,
  });
  const keeper = await startKeeper({ config, roles: new Set(ALL_ROLES), logger, wallets });
  print(
    `demo: sandbox service ${sandbox.url} (API key ${sandbox.apiKey}), chain ${sandbox.chain?.url ?? "(none)"}`,
  );
  print(
    `demo: keeper ${config.mode}, ${sandbox.wallets.length} wallets, polling every 5 s; metrics ${keeper.ops?.url ?? "off"}/metrics`,
  );
  print("demo: `npx keeper status` and `npx keeper ledger` show its state; Ctrl-C stops it");

  const resolver = setInterval(() => resolveOneMarket(sandbox, print), RESOLVE_EVERY_MS);
  const summary = setInterval(() => {
    void printSummary(keeper, print).catch(() => undefined);
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

function isLocalRedis(url: string): boolean {
  return isLoopback(url.replace(/^rediss?:/, "http:"));
}

type Sandbox = Awaited<ReturnType<typeof startSandbox>>;

/** Resolves the first still-open market that one of the sandbox wallets holds. */
function resolveOneMarket(sandbox: Sandbox, print: (line: string) => void): void {
  const { world } = sandbox;
  for (let i = 0; i < sandbox.wallets.length; i += 1) {
    for (const position of world.positionsOfWallet(i)) {
      const market = world.marketOf(position);
      if (world.marketState(market).status !== "open") continue;
      const result = (market.index + i) % 2 === 0 ? "yes" : "no";
      world.resolveMarket(market.marketId, result);
      print(`demo: market ${market.marketId} resolved ${result.toUpperCase()}`);
      return;
    }
  }
}

async function wipeDemoState(redisUrl: string, prefix: string): Promise<void> {
  const redis = await connectRedis(redisUrl);
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
  const confirmed = rows.filter((r) => r.kind === "claim" && r.status === "confirmed");
  const usd = confirmed.reduce((sum, r) => sum + BigInt(r.amountMicroUsd ?? "0"), 0n);
  const inFlight = rows.filter(
    (r) => !["confirmed", "failed", "refused", "dry-run"].includes(r.status),
  ).length;
  const failed = rows.filter((r) => r.status === "failed" || r.status === "refused").length;
  print(
    `demo: ${pollCount ?? 0} polls, ${rows.length} intents, ${inFlight} in flight, ${confirmed.length} claims confirmed ($${formatUsd(usd)}), ${failed} failed or refused`,
  );
}
