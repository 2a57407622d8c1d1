import { PublicKey } from "@solana/web3.js";
import type { FastifyBaseLogger } from "fastify";
import { putCatalogueOnChain } from "./chain/catalogue-mints.js";
import { type RunningLocalChain, startLocalChain } from "./chain/index.js";
import { createSandboxDriver } from "./drive/drive.js";
import { FaultController, type FaultSettings } from "./http/faults.js";
import type { RateLimitPlan } from "./http/rate-limit.js";
import { ResponseCheck, type ResponseViolation } from "./http/response-check.js";
import { buildSandboxServer, type SandboxServer, type ServedRequest } from "./server.js";
import { type Clock, DrivenClock, WallClock } from "./world/clock.js";
import { createWorldHandlers } from "./world/handlers.js";
import { ServiceClaims } from "./world/service-claims.js";
import { createWorld, type World } from "./world/world.js";

export interface StartSandboxOptions {
  /** Seed of the world; default 1. */
  readonly seed?: number;
  /** HTTP port; default 8787, 0 picks a free one. */
  readonly port?: number;
  /** Default 127.0.0.1: the sandbox is for this machine. */
  readonly host?: string;
  /** Host names answered besides loopback, `host` and IP addresses; any other Host gets 421. */
  readonly allowedHosts?: readonly string[];
  /** Default `sandbox-key`. */
  readonly apiKey?: string;
  /** `"wall"` follows real time (demos); a DrivenClock moves only when the test says. Default: driven. */
  readonly clock?: "wall" | DrivenClock;
  readonly walletCount?: number;
  /** Events per category and provider (default 4: 56 events, about 110 markets). */
  readonly eventsPerCategory?: number;
  /** Of the wallets beyond the first four, about this percent hold nothing (default 0). */
  readonly idleWalletPct?: number;
  /** Default: 150 requests a second over 60 s (the largest live plan); `false`: no limit. */
  readonly rateLimit?: RateLimitPlan | false;
  readonly faults?: FaultSettings;
  readonly logger?: FastifyBaseLogger;
  /**
   * The local chain beside the service (default: on; its port is 8899, or a free one when `port` is 0).
   * `false` runs the world on an offline stand-in that checks signatures but moves no tokens.
   */
  readonly chain?:
    | {
        readonly port?: number;
        readonly slotMs?: number;
        /**
         * How long the execute endpoints wait for a transaction to land before answering `Failed`
         * (`Timeout`); default 30 s. As on the live service, the transaction may still land afterwards.
         */
        readonly executeTimeoutMs?: number;
      }
    | false;
  /** What the sandbox wallets hold on the chain at start (see `WalletFunding`). */
  readonly walletFunding?: WalletFunding;
  /**
   * Every sandbox checks its own responses against the OpenAPI document (`/openapi.json`): each one
   * that does not match is logged (a warning naming the operation and the first error) and counted
   * (`GET /__sandbox/response-check`). `true` also makes `close()` throw listing them (tests);
   * `"log"` (the default) only logs and counts; `false` turns the check off (a benchmark's baseline).
   */
  readonly checkResponses?: boolean | "log";
  /** Where a violation is told; default: `logger.warn`, or one line on stderr without a logger. */
  readonly onResponseViolation?: (violation: ResponseViolation) => void;
  /** Told of every answered request to the service's routes (the benchmarks count a keeper's requests so). */
  readonly onServed?: (served: ServedRequest) => void;
}

/**
 * Every wallet gets `sol` (whole SOL, for fees and SOL inputs) and `usdcRaw`; the first `tokenWallets`
 * wallets also get `tokensRaw` (raw units by catalogue key; `sol` there is wrapped SOL), so orders and
 * swaps with other inputs can be placed without funding thousands of wallets with every token.
 */
export interface WalletFunding {
  readonly sol: number;
  readonly usdcRaw: bigint;
  /** Default: 1 wrapped SOL, 500 USDT, 2,000 KEEP, 100 WAVE, 200 BOLT (about $2,500). */
  readonly tokensRaw?: Readonly<Record<string, bigint>>;
  /** Default: the first 100 wallets (all of them when there are fewer). */
  readonly tokenWallets?: number;
}

export const DEFAULT_WALLET_FUNDING: WalletFunding = {
  sol: 10,
  usdcRaw: 1_000_000_000n,
  tokensRaw: {
    sol: 1_000_000_000n,
    usdt: 500_000_000n,
    keep: 2_000_000_000n,
    wave: 10_000_000_000n,
    bolt: 200_000_000n,
  },
  tokenWallets: 100,
};

export interface RunningSandbox {
  readonly url: string;
  readonly apiKey: string;
  readonly world: World;
  readonly clock: Clock;
  /** Public keys of the sandbox wallets, in index order (their keypairs: `world.walletKeypair(i)`). */
  readonly wallets: readonly string[];
  readonly faults: FaultController;
  /** The plan the service enforces per API key (`false`: none). */
  readonly rateLimit: RateLimitPlan | false;
  readonly server: SandboxServer;
  /** The local chain, when one runs beside the service. */
  readonly chain?: RunningLocalChain;
  /** The USDC-like mint payouts are made in (on the chain when one runs). */
  readonly usdcMint: string;
  /** Mint of every catalogue token by catalogue key (`usdc`, `sol`, `keep`, ...): real mints on the chain. */
  readonly tokenMints: Readonly<Record<string, string>>;
  /** The check of responses against the OpenAPI document, unless `checkResponses` is false. */
  readonly responseCheck?: ResponseCheck;
  /** The service's automatic claim of winners a day after settlement (`sweep()` runs it now). */
  readonly serviceClaims: ServiceClaims;
  /**
   * Stops the service and the chain; with `checkResponses: true`, throws then if a checked response
   * did not match the document.
   */
  close(): Promise<void>;
}

export const DEFAULT_RATE_LIMIT: RateLimitPlan = {
  requestsPerSecond: 150,
  windowSeconds: 60,
  retryAfter: true,
};

function fundWallets(
  chain: RunningLocalChain,
  world: World,
  tokenMints: Readonly<Record<string, string>>,
  funding: WalletFunding = DEFAULT_WALLET_FUNDING,
): void {
  const owners = world.wallets().map((wallet) => new PublicKey(wallet));
  chain.assets.fundWallets(owners, { sol: funding.sol, usdc: funding.usdcRaw });
  const tokens = new Map<string, bigint>();
  for (const [key, raw] of Object.entries(funding.tokensRaw ?? DEFAULT_WALLET_FUNDING.tokensRaw ?? {})) {
    const mint = tokenMints[key];
    if (mint === undefined) throw new RangeError(`walletFunding.tokensRaw: no catalogue token "${key}"`);
    tokens.set(mint, raw);
  }
  const tokenWallets = funding.tokenWallets ?? DEFAULT_WALLET_FUNDING.tokenWallets ?? 0;
  chain.assets.fundWallets(owners.slice(0, tokenWallets), { tokens });
}

/** A violation as a warning: to the sandbox's logger, or one line on stderr when it has none. */
function warnViolation(logger: FastifyBaseLogger | undefined): (violation: ResponseViolation) => void {
  const message = "sandbox response does not match /openapi.json";
  return (violation) => {
    const { operation, status, error } = violation;
    // `rule`, not `error`: loggers serialize an `error` field as an Error.
    if (logger !== undefined) logger.warn({ operation, status, rule: error }, message);
    else process.stderr.write(`sandbox: warning: ${operation} ${status}: ${message}: ${error}\n`);
  };
}

/** Starts the world and the service in front of it; `close()` stops all of it. */
export async function startSandbox(options: StartSandboxOptions = {}): Promise<RunningSandbox> {
  const seed = options.seed ?? 1;
  const apiKey = options.apiKey ?? "sandbox-key";
  const clock = options.clock === "wall" ? new WallClock() : (options.clock ?? new DrivenClock());
  const chain =
    options.chain === false
      ? undefined
      : await startLocalChain({
          seed,
          port: options.chain?.port ?? (options.port === 0 ? 0 : 8899),
          ...(options.chain?.slotMs === undefined ? {} : { slotMs: options.chain.slotMs }),
          ...(options.chain?.executeTimeoutMs === undefined
            ? {}
            : { txFactory: { submitTimeoutMs: options.chain.executeTimeoutMs } }),
        });
  const catalogue = chain === undefined ? undefined : putCatalogueOnChain(chain.assets, chain.port);
  const world = createWorld({
    seed,
    clock,
    ...(options.walletCount === undefined ? {} : { walletCount: options.walletCount }),
    ...(options.eventsPerCategory === undefined ? {} : { eventsPerCategory: options.eventsPerCategory }),
    ...(options.idleWalletPct === undefined ? {} : { idleWalletPct: options.idleWalletPct }),
    ...(catalogue === undefined ? {} : { tokenMints: catalogue.tokenMints }),
  });
  if (chain && catalogue) fundWallets(chain, world, catalogue.tokenMints, options.walletFunding);
  const checkMode = options.checkResponses ?? "log";
  const responseCheck =
    checkMode === false
      ? undefined
      : new ResponseCheck({ onViolation: options.onResponseViolation ?? warnViolation(options.logger) });
  // One controller for the HTTP faults and the world's hostile behaviour (`redirectFunds`).
  const faults = new FaultController({ seed, ...options.faults }, seed);
  const worldHandlers = createWorldHandlers(world, chain?.port, faults);
  // The service's own keepers: winners unclaimed a day after settlement are claimed for free.
  const serviceClaims = new ServiceClaims(world, worldHandlers.chain, options.logger);
  const stopServiceClaims = serviceClaims.start();
  const rateLimit = options.rateLimit ?? DEFAULT_RATE_LIMIT;
  const server = buildSandboxServer({
    handlers: worldHandlers.handlers,
    apiKeys: [apiKey],
    rateLimit,
    faults,
    ...(options.logger === undefined ? {} : { logger: options.logger }),
    ...(responseCheck === undefined ? {} : { responseCheck }),
    driver: createSandboxDriver(world, chain, serviceClaims),
    boundHost: options.host ?? "127.0.0.1",
    ...(options.allowedHosts === undefined ? {} : { allowedHosts: options.allowedHosts }),
    ...(options.onServed === undefined ? {} : { onServed: options.onServed }),
  });
  let url: string;
  try {
    url = await server.listen({ port: options.port ?? 8787, host: options.host ?? "127.0.0.1" });
  } catch (error) {
    stopServiceClaims();
    await chain?.close();
    throw error;
  }
  return {
    url,
    apiKey,
    world,
    clock,
    wallets: world.wallets(),
    faults: server.faults,
    rateLimit,
    server,
    ...(chain ? { chain } : {}),
    usdcMint: chain ? chain.assets.usdcMint.toBase58() : (world.tokens.byKey("usdc")?.mint ?? ""),
    tokenMints: Object.fromEntries(world.tokens.tokens.map((t) => [t.key, t.mint])),
    ...(responseCheck === undefined ? {} : { responseCheck }),
    serviceClaims,
    async close() {
      stopServiceClaims();
      await server.close();
      await chain?.close();
      if (checkMode === true) responseCheck?.assertNoViolations();
    },
  };
}
