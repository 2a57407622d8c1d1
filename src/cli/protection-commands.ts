import { createInterface } from "node:readline/promises";
import { type Command, InvalidArgumentError } from "commander";
import type { Redis } from "ioredis";
import type { KeeperConfig } from "../config/load-config.js";
import { ConfigError } from "../core/errors.js";
import { type Intent, intentKeys } from "../core/intent.js";
import { formatUsd } from "../core/money.js";
import { pubkey } from "../core/schemas/common.js";
import { redisKeysOf } from "../keeper/names.js";
import {
  BREAKERS,
  type BreakerName,
  type ProtectionsEvaluation,
} from "../keeper/operator/circuit-breakers.js";
import { Protections } from "../keeper/operator/protections.js";
import { enqueueBuild } from "../keeper/queues/enqueue.js";
import { createQueues } from "../keeper/queues/queues.js";
import { Ledger } from "../keeper/state/ledger.js";
import { connectRedis, redisTargetOf } from "../keeper/state/redis-connection.js";
import type { CliContext } from "./context.js";
import { formatJson, formatTable, isoTime } from "./output.js";

/** The strategy name of intents an operator recorded by hand. */
export const OPERATOR_STRATEGY = "operator";

async function withRedis<T>(config: KeeperConfig, work: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = await connectRedis(redisTargetOf(config));
  try {
    return await work(redis);
  } finally {
    redis.disconnect();
  }
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

export function protectionsOf(config: KeeperConfig, redis: Redis): Protections {
  return new Protections(redis, redisKeysOf(config), config.protections);
}

/** The breakers as `keeper status` and `keeper breaker status` print them. */
export function breakerRows(evaluation: ProtectionsEvaluation) {
  return evaluation.breakers.map((b) => ({
    breaker: b.name,
    state: !b.isEnabled ? "off" : b.isTripped ? "TRIPPED" : "ok",
    until: isoTime(b.until),
    detail: b.detail,
  }));
}

function breakerArg(value: string): BreakerName {
  if (!(BREAKERS as readonly string[]).includes(value))
    throw new InvalidArgumentError(`expected a breaker: one of ${BREAKERS.join(", ")}`);
  return value as BreakerName;
}

/** `keeper breaker status|reset` and `keeper close-all`. */
export function registerProtectionCommands(program: Command, ctx: CliContext): void {
  const breaker = program.command("breaker").description("circuit breakers (protections)");
  breaker
    .command("status")
    .description("each circuit breaker: off, ok or TRIPPED, and why")
    .option("--json", "print JSON")
    .action(async (opts: { json?: boolean }) => {
      const config = await ctx.config();
      const evaluation = await withRedis(config, (redis) =>
        protectionsOf(config, redis).evaluate(nowSeconds()),
      );
      if (opts.json)
        console.log(formatJson({ ...evaluation, dailyLossUsd: formatUsd(evaluation.dailyLossMicroUsd) }));
      else console.log(formatTable(breakerRows(evaluation)));
    });
  breaker
    .command("reset")
    .description(`reset one breaker (${BREAKERS.join(", ")}) or all: what tripped it no longer counts`)
    // Checked while commander parses: a usage error, printed, exit 2, before any config or Redis.
    .argument("[breaker]", `one of ${BREAKERS.join(", ")}; all when left out`, breakerArg)
    .action(async (name: BreakerName | undefined) => {
      const names = name === undefined ? BREAKERS : [name];
      const config = await ctx.config();
      await withRedis(config, (redis) => protectionsOf(config, redis).reset(nowSeconds(), names));
      console.log(`reset: ${names.join(", ")}`);
    });

  program
    .command("close-all")
    .description("kill switch: close every open position of a wallet (DELETE /positions), through the signer")
    .requiredOption("--owner <pubkey>", "the wallet (one of the configured wallets)")
    .option("--yes", "do not ask for confirmation (scripts)")
    .option(
      "--slippage-bps <bps>",
      "minSellPriceSlippageBps of the sells (default protections.closeAllSlippageBps)",
      (v) => {
        const n = Number(v);
        if (!/^\d+$/.test(v) || n > 10_000) throw new InvalidArgumentError("expected 0 to 10000");
        return n;
      },
    )
    .action(async (opts: { owner: string; yes?: boolean; slippageBps?: number }) => {
      if (!pubkey.safeParse(opts.owner).success)
        throw new ConfigError(["--owner: expected a base58 public key of 32 to 44 characters"]);
      const config = await ctx.config();
      if (!config.wallets.some((w) => w.pubkey === opts.owner))
        throw new ConfigError([`--owner: ${opts.owner} is not one of the configured wallets`]);
      if (!opts.yes) {
        if (!process.stdin.isTTY)
          throw new ConfigError([
            "close-all: refusing without confirmation; no terminal to ask on (pass --yes to confirm from a script)",
          ]);
        const rl = createInterface({ input: process.stdin, output: process.stdout });
        const answer = await rl.question(
          `Close EVERY open position of ${opts.owner} (${config.mode})? Type "close all" to confirm: `,
        );
        rl.close();
        if (answer.trim() !== "close all") {
          console.log("not confirmed: nothing was done");
          process.exitCode = 1;
          return;
        }
      }
      const now = nowSeconds();
      const intent: Intent = {
        kind: "closeAll",
        key: intentKeys.closeAll(opts.owner, `cli${now}`),
        wallet: opts.owner,
        strategy: OPERATOR_STRATEGY,
        reason: "close-all by hand (keeper close-all)",
        ...(opts.slippageBps === undefined ? {} : { minSellPriceSlippageBps: opts.slippageBps }),
      };
      await withRedis(config, async (redis) => {
        const keys = redisKeysOf(config);
        const ledger = new Ledger(redis, keys);
        const result = await ledger.admit(intent, config.mode === "dry-run" ? "dry-run" : "pending");
        if (!result.admitted) throw new ConfigError([`close-all: ${intent.key} is already ${result.status}`]);
        if (config.mode === "live") {
          const queues = createQueues(redis, keys.queuePrefix, config);
          try {
            await enqueueBuild(
              queues.actions,
              intent.key,
              { tries: result.tries ?? 1, recordId: result.recordId },
              1,
            );
          } finally {
            await queues.close();
          }
        }
      });
      console.log(
        config.mode === "live"
          ? `recorded ${intent.key}: a running keeper closes each open position (see keeper ledger)`
          : `recorded ${intent.key} as dry-run: nothing is signed in dry-run`,
      );
    });
}
