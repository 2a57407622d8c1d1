import { validate as isValidCron } from "node-cron";
import { z } from "zod";
import { defaultStrategyNames } from "../../strategies/index.js";
import { WINDOW_SHARE } from "../api/sliding-window.js";
import { DEFAULT_PAYOUT_MINTS, SETTLED_LATER_KINDS } from "../chain/inflow-rules.js";
import { pubkey } from "../core/schemas/common.js";
import { HOST_NAME_RULE, isHostName } from "../ops/allowed-hosts.js";

/** The percent of the plan the sweep may use while the market watcher runs (`watcher.sweepSharePct`). */
export const DEFAULT_SWEEP_SHARE_PCT = 80;

/** Names that hold secrets: refused in the YAML, accepted only from the environment or files. */
export const SECRET_KEYS = ["apiKey", "secretKey", "privateKey", "webhookUrl", "key", "keypair"] as const;

const cron = z.string().refine((e) => isValidCron(e), "expected a cron expression (5 or 6 fields)");
const port = z.number().int().min(0, "expected a port 0 to 65535").max(65_535, "expected a port 0 to 65535");
/** 5 %: the default slippage of a close-all's sells (see protections.closeAllSlippageBps). */
export const DEFAULT_CLOSE_ALL_SLIPPAGE_BPS = 500;
const DOLLARS_RULE = "expected dollars above 0";
const dollars = z.number({ error: DOLLARS_RULE }).positive(DOLLARS_RULE);
const SECONDS_RULE = "expected a whole number of seconds between 1 and 31536000";
const seconds = z
  .number({ error: SECONDS_RULE })
  .int(SECONDS_RULE)
  .min(1, SECONDS_RULE)
  .max(31_536_000, SECONDS_RULE);
const url = z.url({ protocol: /^https?$/, error: "expected an http(s) URL" });
/** One seed node of a Redis Cluster: a host name or IPv4 address, a colon, a port. */
const clusterNode = z
  .string()
  .regex(/^[A-Za-z0-9.-]+:\d{1,5}$/, "expected host:port, e.g. 10.0.0.5:7000")
  .refine((node) => {
    const port = Number(node.slice(node.lastIndexOf(":") + 1));
    return port >= 1 && port <= 65_535;
  }, "expected a port between 1 and 65535");

const REDIS_URL_SCHEME_RULE = "expected a redis:// or rediss:// URL";
/** The URL is never echoed: it may hold a password. */
const REDIS_URL_PARSE_RULE =
  "expected a URL that parses, e.g. redis://10.0.0.5:6379 (user and password before the host, their special characters percent-encoded)";
const redisUrl = z.string().superRefine((value, ctx) => {
  if (!/^rediss?:\/\//.test(value)) ctx.addIssue({ code: "custom", message: REDIS_URL_SCHEME_RULE });
  else if (!URL.canParse(value)) ctx.addIssue({ code: "custom", message: REDIS_URL_PARSE_RULE });
});
/** "" would listen on every interface, and the status page and /metrics have no login. */
const OPS_HOST_RULE =
  "expected a host name or IP address to listen on, e.g. 127.0.0.1 (0.0.0.0 for every interface, on purpose)";

/** One wallet listed twice would be polled twice and its key loaded twice: refused by its pubkey. */
function refuseDuplicateWallets(wallets: ReadonlyArray<{ pubkey: string }>, ctx: z.RefinementCtx): void {
  const firstAt = new Map<string, number>();
  for (const [index, wallet] of wallets.entries()) {
    const first = firstAt.get(wallet.pubkey);
    if (first === undefined) firstAt.set(wallet.pubkey, index);
    else
      ctx.addIssue({
        code: "custom",
        path: [index, "pubkey"],
        message: `wallet ${wallet.pubkey} is listed twice (first at wallets[${first}])`,
      });
  }
}

const PCT_DEVIATION_RULE = "expected a percent between 0.01 and 50";
const CAP_RULE = "expected an integer string of raw units of the mint";
/** Raw units per mint: `{ <mint>: "<raw>" }`. */
const MINT_KEY_RULE = "expected mint addresses (base58 public keys) as keys";
const capsByMint = z
  .record(pubkey, z.string({ error: CAP_RULE }).regex(/^\d+$/, CAP_RULE), {
    error: (issue) => (issue.code === "invalid_key" ? MINT_KEY_RULE : undefined),
  })
  .default({});
const MINT_LIST_RULE = "expected a list of mint addresses";
const mintSides = z.strictObject({
  input: z.array(pubkey, { error: MINT_LIST_RULE }),
  output: z.array(pubkey, { error: MINT_LIST_RULE }),
});
const signerLimitsSchema = z
  .strictObject({
    /** Mints each spending kind may take and bring; a kind left out allows the mints its strategies name. */
    allowedMints: z
      .strictObject({
        swap: mintSides.optional(),
        createTrigger: mintSides.optional(),
        createRecurring: mintSides.optional(),
      })
      .prefault({}),
    /** Most one intent may spend of an input mint. */
    perIntent: capsByMint,
    /** Most the signer signs for of an input mint in one UTC day. */
    perDay: capsByMint,
  })
  .prefault({});

const walletSchema = z
  .strictObject({
    pubkey: pubkey,
    /** Solana CLI keypair file (JSON array of 64 bytes). */
    keyFile: z.string().min(1).optional(),
    /** Name of an environment variable holding the base58 secret key. */
    keyEnv: z
      .string()
      .regex(/^[A-Z_][A-Z0-9_]*$/, "expected an environment variable name")
      .optional(),
    label: z.string().max(64).optional(),
  })
  .refine((w) => !(w.keyFile && w.keyEnv), { message: "set keyFile or keyEnv, not both", path: ["keyEnv"] });

/** A strategy entry: `name` picks the strategy, the other keys are its own config. */
export const strategyEntrySchema = z.looseObject({
  name: z.string().min(1, "expected a strategy name"),
  enabled: z.boolean().default(true),
  /** A user strategy: path to a .ts or .js module, relative to the config file. */
  module: z.string().min(1).optional(),
});

export const configSchema = z.strictObject({
  /** `auto`: live against the sandbox, dry-run against anything else. */
  mode: z.enum(["auto", "live", "dry-run"]).default("auto"),
  service: z
    .strictObject({
      baseUrl: url.default("http://127.0.0.1:8787"),
      /** A file holding the API key (or set KEEPER_API_KEY). */
      apiKeyFile: z.string().min(1).optional(),
      timeoutMs: z.number().int().min(100).max(120_000).default(10_000),
      retries: z.number().int().min(0).max(10).default(3),
      requestsPerSecond: z.number().min(0.1).max(1_000).default(10),
      /**
       * The window the service counts requestsPerSecond over (60 s live): a burst may spend at once
       * what the window has left.
       */
      rateLimitWindowSeconds: z
        .number({ error: "expected whole seconds from 1 to 3600" })
        .int("expected whole seconds from 1 to 3600")
        .min(1, "expected whole seconds from 1 to 3600")
        .max(3_600, "expected whole seconds from 1 to 3600")
        .default(60),
      /**
       * The percent of that window Keeper's requests may fill. The plan is the organisation's: other
       * clients of it (another Keeper under another key, a script) need the rest.
       */
      rateLimitSharePct: z
        .number({ error: "expected a percent between 10 and 100" })
        .min(10, "expected a percent between 10 and 100")
        .max(100, "expected a percent between 10 and 100")
        .default(Math.round(WINDOW_SHARE * 100)),
      pageSize: z.number().int().min(1).max(500).default(100),
      /**
       * Where signed prediction transactions go: `auto` through the service's POST /prediction/v1/execute
       * when the build names an execution (Forecast must), to the RPC otherwise; `execute` always
       * through the service; `rpc` never (a build that needs the service's signature is then refused).
       */
      predictionSubmit: z.enum(["auto", "execute", "rpc"]).default("auto"),
    })
    .prefault({}),
  rpc: z
    .strictObject({
      url: url.default("http://127.0.0.1:8899"),
      /** More nodes every signed transaction is also sent to (never read from); their URLs may hold keys. */
      sendUrls: z.array(url).default([]),
      commitment: z.enum(["processed", "confirmed", "finalized"]).default("confirmed"),
    })
    .prefault({}),
  redis: z
    .strictObject({
      url: redisUrl.default("redis://127.0.0.1:6379"),
      /**
       * A file holding the password Redis requires (`requirepass`, or the ACL user's named in the URL).
       * Used by every connection Keeper opens; never logged.
       */
      passwordFile: z.string().min(1).optional(),
      /**
       * A Redis Cluster's seed nodes, as host:port: Keeper connects to the cluster through them (any
       * master or replica will do; the rest are discovered) instead of `url`, and hash-tags its keys.
       */
      cluster: z.array(clusterNode).min(1, "expected at least one host:port seed node").optional(),
      /** Every key Keeper writes starts with this, so several deployments can share a Redis. */
      prefix: z
        .string()
        .regex(/^[a-z0-9-]+$/, "expected lowercase letters, digits and '-'")
        .default("keeper"),
    })
    .prefault({}),
  wallets: z.array(walletSchema).superRefine(refuseDuplicateWallets).default([]),
  schedules: z
    .strictObject({
      /** The full sweep of every wallet's positions; the market watcher covers the time between sweeps. */
      pollPositions: cron.default("0 * * * * *"),
      pollOrders: cron.default("*/30 * * * * *"),
      housekeeping: cron.default("0 */10 * * * *"),
      /**
       * A wallet whose last poll saw nothing held and no pending orders is swept once every this many
       * sweeps (1: every sweep, as any other wallet).
       */
      idleSweepMultiple: z
        .number({ error: "expected a whole number from 1 to 100" })
        .int("expected a whole number from 1 to 100")
        .min(1, "expected a whole number from 1 to 100")
        .max(100, "expected a whole number from 1 to 100")
        .default(4),
    })
    .prefault({}),
  /** The market watcher: polls the holders of a market that changed, ahead of the sweep. */
  watcher: z
    .strictObject({
      /** Off: every wallet waits for the sweep (then set schedules.pollPositions faster). */
      enabled: z.boolean().default(true),
      /** How often the held markets are read; a cycle still running skips the next tick. */
      schedule: cron.default("*/2 * * * * *"),
      /** Poll a holder when the price is within this percent of an exit threshold (or past it). */
      bandPct: z
        .number({ error: "expected a percent between 0 and 50" })
        .min(0, "expected a percent between 0 and 50")
        .max(50, "expected a percent between 0 and 50")
        .default(2),
      /** A holder polled for a market is not polled again for it (same trigger) before this. */
      retriggerSeconds: seconds.default(15),
      /**
       * The hot cadence: held markets past their close time and not resolved yet (for `hotSeconds`
       * after the close), or near a holder's exit threshold, are read this often. 0: off.
       */
      hotIntervalMs: z
        .number({ error: "expected milliseconds: 0 (off) or 100 to 60000" })
        .int("expected milliseconds: 0 (off) or 100 to 60000")
        .refine(
          (ms) => ms === 0 || (ms >= 100 && ms <= 60_000),
          "expected milliseconds: 0 (off) or 100 to 60000",
        )
        .default(500),
      /** How long after its close time an unresolved market is read at the hot cadence. */
      hotSeconds: seconds.default(300),
      /** A market with a holder's mark within this percent of an exit threshold is read at the hot cadence. */
      hotBandPct: z
        .number({ error: "expected a percent between 0 and 50" })
        .min(0, "expected a percent between 0 and 50")
        .max(50, "expected a percent between 0 and 50")
        .default(5),
      /** The hot cadence's reads use at most this percent of service.requestsPerSecond (within the sweep's share). */
      hotSharePct: z
        .number({ error: "expected a percent between 1 and 50" })
        .min(1, "expected a percent between 1 and 50")
        .max(50, "expected a percent between 1 and 50")
        .default(10),
      /** The sweep's polls use at most this percent of service.requestsPerSecond; the rest stays free. */
      sweepSharePct: z
        .number({ error: "expected a percent between 10 and 100" })
        .min(10, "expected a percent between 10 and 100")
        .max(100, "expected a percent between 10 and 100")
        .default(DEFAULT_SWEEP_SHARE_PCT),
      /**
       * While this process runs a targeted poll, a build or a signing, the sweep's polls use at most
       * this percent of service.requestsPerSecond (never more than sweepSharePct).
       */
      sweepShareWhileActingPct: z
        .number({ error: "expected a percent between 1 and 100" })
        .min(1, "expected a percent between 1 and 100")
        .max(100, "expected a percent between 1 and 100")
        .default(20),
    })
    .prefault({}),
  strategies: z
    .array(strategyEntrySchema)
    .default(() => defaultStrategyNames.map((name) => ({ name, enabled: true }))),
  signer: z
    .strictObject({
      /** Program ids of the service, allowed on top of the default allow-list. */
      allowedPrograms: z.array(pubkey).default([]),
      maxComputeUnitPriceMicroLamports: z.number().int().min(0).default(2_000_000),
      /**
       * Fee budget per transaction, in lamports: priority fee (unit limit x unit price) plus base fee
       * (5,000 a signature). 0.001 SOL is 200 base fees: a claim or close of ~200,000 units can pay the
       * whole per-unit ceiling (0.0004 SOL), and only a transaction over ~490,000 units is held to a
       * lower price than the ceiling.
       */
      maxPriorityFeeLamports: z.number().int().min(0).default(1_000_000),
      /** Bid this percentile (1-100) of the recent non-zero priority fees on the accounts a build writes. */
      priorityFeePercentile: z.number().int().min(1).max(100).default(75),
      /** The lowest bid, in micro-lamports per compute unit (the bid when every recent fee was zero). */
      minPriorityFeeMicroLamports: z.number().int().min(0).default(1_000),
      /** Each rebuild after an expiry bids this many times the one before (1 = never raise). */
      priorityFeeEscalation: z.number().min(1).max(10).default(1.5),
      maxRebuilds: z.number().int().min(0).max(10).default(3),
      rebroadcastIntervalMs: z.number().int().min(50).max(60_000).default(2_000),
      /**
       * Signing slots per process. A slot is held from the checks to the first send only (the same
       * job then watches what it sent), so a burst of claims after a market resolves signs 16 at a time.
       */
      concurrency: z.number().int().min(1).max(64).default(16),
      /**
       * Watch slots per signer process: sign jobs past their first send, watching it (rebroadcast until
       * confirmed, failed or expired). With every slot taken, a sent attempt goes to the confirm queue.
       */
      watchConcurrency: z.number().int().min(1).max(1_000).default(100),
      /** Mints a claim or close pays in (6 decimals: a raw unit is a micro-USD); mainnet USDC and JupUSD. */
      payoutMints: z
        .array(pubkey)
        .min(1, "expected at least one mint")
        .default([...DEFAULT_PAYOUT_MINTS]),
      /**
       * Token-2022 mints the wallet may receive even with an extension that takes from holders
       * (permanent delegate, transfer hook, confidential transfers, a transfer fee); see docs/signer.md.
       */
      allowedToken2022Mints: z.array(pubkey).default([]),
      /**
       * Keys of the service that may sign a transaction after Keeper, at its execute endpoint (a
       * Forecast swap's co-signer). A build whose required signers name any other key is refused.
       */
      serviceSigners: z.array(pubkey).default([]),
      /** Taken off a close's minimum proceeds (its fees are estimates); claims and swaps are exact. */
      inflowToleranceBps: z.number().int().min(0).max(1_000).default(50),
      /** Kinds whose proceeds may come in a later transaction (see inflow-rules settledLater). */
      settledLater: z.array(z.enum(SETTLED_LATER_KINDS)).default(["close"]),
      /** An intent `sending` this long is alerted, and resumed by housekeeping if no sign job runs it. */
      stuckSendingSeconds: seconds.default(300),
      /**
       * A swap's quote may stray this far from the service's token prices (either way), and Keeper's
       * floor is at least the fair output less this much (see docs/signer.md).
       */
      maxPriceDeviationPct: z
        .number({ error: PCT_DEVIATION_RULE })
        .min(0.01, PCT_DEVIATION_RULE)
        .max(50, PCT_DEVIATION_RULE)
        .default(5),
      /** The signer's own limits on what intents spend, from this file only (see docs/signer.md). */
      limits: signerLimitsSchema,
    })
    .prefault({}),
  queues: z
    .strictObject({
      attempts: z.number().int().min(1).max(50).default(5),
      backoffMs: z.number().int().min(10).max(600_000).default(2_000),
      removeOnComplete: z.number().int().min(0).default(1_000),
      removeOnFail: z.number().int().min(0).default(5_000),
      pollConcurrency: z.number().int().min(1).max(256).default(16),
      /** Builds at once per process: each is one request to the service, paced by the rate limit. */
      actionConcurrency: z.number().int().min(1).max(64).default(16),
      /** A job whose lock is not renewed this long (its process died) is stalled and runs again elsewhere. */
      lockDurationMs: z.number().int().min(1_000).max(600_000).default(30_000),
      stalledIntervalMs: z.number().int().min(500).max(600_000).default(15_000),
    })
    .prefault({}),
  ops: z
    .strictObject({
      host: z.string().refine(isHostName, OPS_HOST_RULE).default("127.0.0.1"),
      port: port.default(9464),
      /**
       * A file holding the operator token: with it the status page offers pause, resume and retry,
       * and /queues (bull-board) is served; without it the ops server is read-only.
       */
      adminTokenFile: z.string().min(1).optional(),
      /**
       * Host names the ops server answers to besides loopback, its own address and IP addresses
       * (a DNS-rebound page's Host is refused): e.g. the compose service name Prometheus scrapes.
       */
      allowedHosts: z.array(z.string().refine(isHostName, HOST_NAME_RULE)).default([]),
      /** bull-board at /queues may change jobs (add, retry, clean, promote...); read-only otherwise. */
      queuesWritable: z.boolean().default(false),
      /** A wallet whose last successful poll is older than this is stale (readyz, notification). */
      stalePollSeconds: z.number().int().min(1).default(120),
      logLevel: z.enum(["fatal", "error", "warn", "info", "debug", "trace"]).default("info"),
      /** `auto`: readable lines on a terminal, JSON lines otherwise; `json` or `pretty` always. */
      logFormat: z
        .enum(["auto", "json", "pretty"], { error: 'expected "auto", "json" or "pretty"' })
        .default("auto"),
    })
    .prefault({}),
  /**
   * Recording for `keeper replay` (docs/replay.md): with `dir` set, each poll appends what it saw (the
   * wallet's positions with their markets' state and prices, and the time) to a gzip file a day there.
   * Off unless set.
   */
  record: z
    .strictObject({
      dir: z.string({ error: "expected a directory path" }).min(1, "expected a directory path").optional(),
    })
    .prefault({}),
  /** The safety gate every token named in a strategy passes (resolved once through token search). */
  tokens: z
    .strictObject({
      /** Refuse tokens whose organicScore is below this (0 to 100). */
      minOrganicScore: z
        .number({ error: "expected a score between 0 and 100" })
        .min(0, "expected a score between 0 and 100")
        .max(100, "expected a score between 0 and 100")
        .default(0),
    })
    .prefault({}),
  /** Circuit breakers across strategies (strategies/README.md, "Protections"); each is off unless set. */
  protections: z
    .strictObject({
      /** Hold back new orders and plans once today's (UTC) realized loss of Keeper's closes reaches this. */
      dailyLossLimitUsd: dollars.optional(),
      /** Close every open position of every wallet once today's realized loss reaches this. */
      closeAllOnDailyLossUsd: dollars.optional(),
      /**
       * minSellPriceSlippageBps of every close-all (DELETE /positions requires it) when the close-all
       * names none: the kill switch's, and the CLI's without --slippage-bps. Wide by default, because
       * a close-all is an exit that should fill.
       */
      closeAllSlippageBps: z
        .number({ error: "expected basis points between 0 and 10000" })
        .int("expected basis points between 0 and 10000")
        .min(0, "expected basis points between 0 and 10000")
        .max(10_000, "expected basis points between 0 and 10000")
        .default(DEFAULT_CLOSE_ALL_SLIPPAGE_BPS),
      /** Hold back new orders and plans for pauseSeconds after afterExits stop-loss exits within windowSeconds. */
      stopLossPause: z
        .strictObject({
          afterExits: z
            .number({ error: "expected a whole number of exits between 1 and 1000" })
            .int("expected a whole number of exits between 1 and 1000")
            .min(1, "expected a whole number of exits between 1 and 1000")
            .max(1_000, "expected a whole number of exits between 1 and 1000"),
          windowSeconds: seconds,
          pauseSeconds: seconds,
        })
        .optional(),
    })
    .prefault({}),
  notifications: z
    .strictObject({
      /** A file holding the webhook URL (or set KEEPER_WEBHOOK_URL): the URL embeds a token. */
      webhookUrlFile: z.string().min(1).optional(),
      events: z
        .array(z.enum(["confirmed", "refused", "failed", "stale", "breaker", "stuck", "pause_restored"]))
        .default(["confirmed", "refused", "failed", "stale", "breaker", "stuck", "pause_restored"]),
    })
    .prefault({}),
});

export type KeeperConfigInput = z.input<typeof configSchema>;
export type ParsedConfig = z.infer<typeof configSchema>;
