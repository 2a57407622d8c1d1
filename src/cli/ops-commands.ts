import type { Command } from "commander";
import type { Redis } from "ioredis";
import type { KeeperConfig } from "../config/load-config.js";
import { hasTokenFields, resolveStrategyTokens } from "../config/resolve-tokens.js";
import { intentAmountText } from "../core/intent-amount.js";
import { redisKeysOf } from "../keeper/names.js";
import {
  pauseKeeper,
  resumeKeeper,
  retryKeeperIntent,
  retryRefusal,
} from "../keeper/operator/operator-actions.js";
import { Ledger, type LedgerRow } from "../keeper/state/ledger.js";
import { connectRedis, redisTargetOf } from "../keeper/state/redis-connection.js";
import { readKeeperStatus } from "../status/status-report.js";
import type { CliContext } from "./context.js";
import { UsageError } from "./errors.js";
import { formatCsv, formatJson, formatTable, isoTime } from "./output.js";
import { breakerRows } from "./protection-commands.js";
import { intArg } from "./read-commands.js";

/** The most rows `keeper ledger` reads at once: each is one Redis hash, all fetched in one write. */
const LEDGER_LIMIT_MAX = 100_000;

const LEDGER_COLUMNS = [
  "key",
  "kind",
  "wallet",
  "strategy",
  "status",
  "signature",
  "reason",
  "error",
  "amountMicroUsd",
  "feeMicroUsd",
  "tries",
  "builds",
  "createdAt",
  "updatedAt",
  "confirmedAt",
] as const;

async function withRedis<T>(config: KeeperConfig, work: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = await connectRedis(redisTargetOf(config));
  try {
    return await work(redis);
  } finally {
    redis.disconnect();
  }
}

/** The ledger as a person reads it: what each intent moves sits beside its status. */
const LEDGER_TABLE_COLUMNS = ["key", "kind", "status", "amount", "signature", "reason", "error", "updatedAt"];

export function ledgerTableRow(row: LedgerRow): Record<string, unknown> {
  return {
    ...ledgerRecord(row),
    amount: intentAmountText(row.intent, row.amountMicroUsd),
    updatedAt: isoTime(row.updatedAt),
  };
}

export function ledgerRecord(row: LedgerRow): Record<string, unknown> {
  const { intent: _intent, transaction: _transaction, ...rest } = row;
  return rest;
}

/** Commands that read or switch the running keeper's state in Redis. */
export function registerOpsCommands(program: Command, ctx: CliContext): void {
  registerStatusCommand(program, ctx);
  registerLedgerCommand(program, ctx);
  registerPauseCommand(program, ctx);
  registerResumeCommand(program, ctx);
  registerRetryCommand(program, ctx);
}

function registerStatusCommand(program: Command, ctx: CliContext): void {
  program
    .command("status")
    .description("queues, last polls, in-flight intents, paused?")
    .option("--json", "print JSON")
    .action(async (opts: { json?: boolean }) => {
      const config = await ctx.config();
      await withRedis(config, async (redis) => {
        const keys = redisKeysOf(config);
        const report = await readKeeperStatus({ config, redis, keys }, Math.floor(Date.now() / 1000));
        const { paused: pause, protections, queues, intents: byStatus, inFlight } = report;
        const polls = Object.fromEntries(Object.entries(report.lastPolls).map(([w, at]) => [w, String(at)]));
        const status = {
          mode: config.mode,
          paused: pause,
          breakers: breakerRows(protections),
          queues,
          lastPolls: polls,
          intents: byStatus,
          inFlight,
        };
        if (opts.json) {
          console.log(formatJson({ ...status, inFlight: inFlight.map(ledgerRecord) }));
          return;
        }
        console.log(`mode: ${config.mode}    paused: ${pause.paused ? `yes (${pause.reason ?? ""})` : "no"}`);
        console.log(
          `circuit breakers: ${protections.tripped.length === 0 ? "none tripped" : `TRIPPED ${protections.tripped.join(", ")} (new orders and plans are held back; keeper breaker reset)`}`,
        );
        console.log(formatTable(breakerRows(protections)));
        console.log("\nqueues");
        console.log(formatTable(Object.entries(queues).map(([queue, counts]) => ({ queue, ...counts }))));
        console.log("\nlast successful poll");
        console.log(
          formatTable(Object.entries(polls).map(([wallet, at]) => ({ wallet, at: isoTime(Number(at)) }))),
        );
        console.log("\nintents by status");
        console.log(formatTable(Object.entries(byStatus).map(([s, n]) => ({ status: s, count: n }))));
        console.log("\nin flight");
        console.log(
          formatTable(
            inFlight.map((r) => ({
              key: r.key,
              status: r.status,
              builds: r.builds,
              updated: isoTime(r.updatedAt),
            })),
          ),
        );
      });
    });
}

function registerLedgerCommand(program: Command, ctx: CliContext): void {
  program
    .command("ledger")
    .description("every intent Keeper recorded, most recent first")
    .option("--json", "print a JSON array of rows")
    .option("--csv", "print CSV")
    .option("--limit <n>", `rows, 1 to ${LEDGER_LIMIT_MAX}`, intArg("--limit", 1, LEDGER_LIMIT_MAX), 1_000)
    .action(async (opts: { json?: boolean; csv?: boolean; limit: number }) => {
      const config = await ctx.config();
      await withRedis(config, async (redis) => {
        const listed = await new Ledger(redis, redisKeysOf(config)).list(opts);
        const rows = listed.map(ledgerRecord);
        if (opts.json) console.log(formatJson(rows));
        else if (opts.csv) console.log(formatCsv(rows, LEDGER_COLUMNS));
        else console.log(formatTable(listed.map(ledgerTableRow), LEDGER_TABLE_COLUMNS));
      });
    });
}

function registerPauseCommand(program: Command, ctx: CliContext): void {
  program
    .command("pause")
    .description("stop new work in every role within one tick (in-flight transactions are still watched)")
    .option("--reason <text>", "why", "paused by hand")
    .action(async (opts: { reason: string }) => {
      const config = await ctx.config();
      await withRedis(config, (redis) =>
        pauseKeeper({ config, redis, keys: redisKeysOf(config) }, opts.reason, Math.floor(Date.now() / 1000)),
      );
      console.log("paused");
    });
}

function registerResumeCommand(program: Command, ctx: CliContext): void {
  program
    .command("resume")
    .description("lift a pause and reset every circuit breaker")
    .action(async () => {
      const config = await ctx.config();
      await withRedis(config, (redis) =>
        resumeKeeper({ config, redis, keys: redisKeysOf(config) }, Math.floor(Date.now() / 1000)),
      );
      console.log("resumed");
    });
}

function registerRetryCommand(program: Command, ctx: CliContext): void {
  program
    .command("retry <intent-key>")
    .description("admit a refused or failed intent again, after a look: a fresh transaction is built")
    .option("--json", "print JSON")
    .action(async (key: string, opts: { json?: boolean }) => {
      const config = await ctx.config();
      const result = await withRedis(config, (redis) =>
        retryKeeperIntent({ config, redis, keys: redisKeysOf(config) }, key),
      );
      if (result.outcome !== "retried") throw new UsageError(retryRefusal(key, result));
      const { previous, row, resumesSent } = result;
      if (opts.json) {
        console.log(formatJson({ ...ledgerRecord(row), previous, resumesSent }));
        return;
      }
      const why = [previous.reason, previous.error].filter(Boolean).join(": ");
      const next = resumesSent
        ? "the transaction already sent is watched again (never a second one)"
        : "a fresh transaction will be built and checked";
      console.log(
        `${key}: was ${previous.status}${why ? ` (${why})` : ""}; now ${row.status}, try ${row.tries}: ${next}`,
      );
    });

  const configCommand = program.command("config").description("configuration");
  configCommand
    .command("check")
    .description("validate the configuration as keeper start would (exit 0 valid, 2 invalid)")
    .option("--config <file>", "config file")
    .action(async (_opts: unknown, command: Command) => {
      const opts = command.optsWithGlobals<{ config?: string }>();
      if (opts.config) process.env.KEEPER_CONFIG = opts.config;
      // What `keeper start` of the same file would refuse, this refuses too.
      const config = await ctx.config({ requireWallets: true });
      if (hasTokenFields(config.strategies)) {
        const { resolved } = await resolveStrategyTokens(config, (await ctx.client()).tokens.search);
        for (const t of resolved)
          if (t.reference !== t.mint) console.log(`${t.path}: "${t.reference}" is ${t.symbol} ${t.mint}`);
      }
      console.log(
        `valid: mode ${config.mode}, ${config.wallets.length} wallet(s), strategies: ${
          config.strategies.map((s) => s.name).join(", ") || "none"
        }`,
      );
    });
}
