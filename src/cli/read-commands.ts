import { type Command, InvalidArgumentError, Option } from "commander";
import { collectUnique, iterateHistory, iterateOrders, iteratePositions } from "../api/index.js";
import { contractsText } from "../core/contracts.js";
import { formatUsd } from "../core/money.js";
import {
  CATEGORIES,
  LEADERBOARD_METRICS,
  LEADERBOARD_PERIODS,
  PROVIDERS,
} from "../core/schemas/prediction.js";
import type { CliContext } from "./context.js";
import { formatJson, formatTable, isoTime, type Row } from "./output.js";

/** Blank where the service gives no figure (null on a closed market, a missing price). */
const usd = (micro: string | number | null | undefined) =>
  micro === undefined || micro === null ? "" : formatUsd(BigInt(micro));

export function intArg(name: string, min: number, max = Number.MAX_SAFE_INTEGER) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+$/.test(value) || n < min || n > max)
      throw new InvalidArgumentError(`${name}: expected an integer from ${min} to ${max}`);
    return n;
  };
}

function print(rows: Row[], json: boolean, raw: unknown, columns?: string[]) {
  console.log(json ? formatJson(raw) : formatTable(rows, columns));
}

/** Read commands over the client, one per read endpoint: a table for people, `--json` for scripts. */
export function registerReadCommands(program: Command, ctx: CliContext): void {
  registerPositionsCommand(program, ctx);
  registerEventsCommand(program, ctx);
  registerMarketsCommand(program, ctx);
  registerOrdersCommand(program, ctx);
  registerHistoryCommand(program, ctx);
  registerLeaderboardCommand(program, ctx);
  registerTokensCommand(program, ctx);
  registerInvitesCommand(program, ctx);
}

function registerPositionsCommand(program: Command, ctx: CliContext): void {
  program
    .command("positions <owner>")
    .description("every position of a wallet (all pages)")
    .option("--json", "print JSON")
    .action(async (owner: string, opts: { json?: boolean }) => {
      const positions = await collectUnique(
        iteratePositions(await ctx.client(), { ownerPubkey: owner }),
        (p) => p.pubkey,
      );
      const rows = positions.map((p) => ({
        position: p.pubkey,
        // The id `keeper sandbox price|resolve` and `orders --market` take, beside what a person reads.
        marketId: p.marketId,
        market: p.marketMetadata.title ?? "",
        side: p.isYes ? "YES" : "NO",
        contracts: contractsText(p),
        valueUsd: usd(p.valueUsd),
        pnlUsd: usd(p.pnlUsd),
        "pnl%": p.pnlUsdPercent === null ? "" : p.pnlUsdPercent.toFixed(2),
        status: p.claimed ? "claimed" : p.claimable ? "claimable" : (p.marketMetadata.status ?? ""),
      }));
      print(rows, Boolean(opts.json), positions);
    });
}

function registerEventsCommand(program: Command, ctx: CliContext): void {
  program
    .command("events")
    .description("prediction events")
    // Providers and categories are open sets on the service: the known ones are named, any is sent.
    .option("--provider <provider>", `data provider, e.g. ${PROVIDERS.join(", ")}`)
    .option("--category <category>", `category, e.g. ${CATEGORIES.join(", ")}`)
    .addOption(new Option("--sort-by <field>").choices(["volume", "volume24hr", "beginAt"]))
    .addOption(new Option("--filter <filter>").choices(["new", "live", "trending", "upcoming"]))
    .option("--limit <n>", "how many", intArg("--limit", 1, 500), 20)
    .option("--json", "print JSON")
    .action(async (opts) => {
      const page = await (await ctx.client()).prediction.listEvents({
        provider: opts.provider,
        category: opts.category,
        sortBy: opts.sortBy,
        filter: opts.filter,
        start: 0,
        end: opts.limit,
      });
      const rows = page.data.map((e) => ({
        event: e.eventId,
        category: e.category,
        live: e.isLive,
        volumeUsd: usd(e.volumeUsd),
        begins: e.beginAt ? isoTime(Number(e.beginAt)) : "",
      }));
      print(rows, Boolean(opts.json), page);
    });
}

function registerMarketsCommand(program: Command, ctx: CliContext): void {
  program
    .command("markets <eventId>")
    .description("markets of an event")
    .option("--json", "print JSON")
    .action(async (eventId: string, opts: { json?: boolean }) => {
      const page = await (await ctx.client()).prediction.listEventMarkets(eventId, { start: 0, end: 100 });
      const rows = page.data.map((m) => ({
        market: m.marketId,
        status: m.status,
        result: m.result ?? "",
        yes: usd(m.pricing?.buyYesPriceUsd),
        no: usd(m.pricing?.buyNoPriceUsd),
        closes: isoTime(m.closeTime),
      }));
      print(rows, Boolean(opts.json), page);
    });
}

function registerOrdersCommand(program: Command, ctx: CliContext): void {
  program
    .command("orders")
    .description("prediction orders, by owner; --market filters the answer here (all pages)")
    .option("--owner <pubkey>", "owner public key")
    .option("--market <marketId>", "market id")
    .option("--json", "print JSON")
    .action(async (opts: { owner?: string; market?: string; json?: boolean }) => {
      // The service has no market filter on orders (api-live): the answer is filtered here.
      const all = await collectUnique(
        iterateOrders(await ctx.client(), { ownerPubkey: opts.owner }),
        (o) => o.pubkey,
      );
      const orders = opts.market === undefined ? all : all.filter((o) => o.marketId === opts.market);
      const rows = orders.map((o) => ({
        order: o.pubkey,
        market: o.marketId,
        side: `${o.isBuy ? "buy" : "sell"} ${o.isYes ? "YES" : "NO"}`,
        contracts: contractsText(o),
        filled: contractsText({ contracts: o.filledContracts, contractsMicro: o.filledContractsMicro }),
        status: o.status,
        created: isoTime(o.createdAt),
      }));
      print(rows, Boolean(opts.json), orders);
    });
}

function registerHistoryCommand(program: Command, ctx: CliContext): void {
  program
    .command("history")
    .description("history records of a wallet (all pages)")
    .option("--owner <pubkey>", "owner public key")
    .option("--position <pubkey>", "position public key")
    .option("--json", "print JSON")
    .action(async (opts: { owner?: string; position?: string; json?: boolean }) => {
      const records = await collectUnique(
        iterateHistory(await ctx.client(), { ownerPubkey: opts.owner, positionPubkey: opts.position }),
        (h) => String(h.id),
      );
      const rows = records.map((h) => ({
        id: h.id,
        event: h.eventType,
        position: h.positionPubkey,
        market: h.marketId,
        at: isoTime(h.timestamp),
      }));
      print(rows, Boolean(opts.json), records);
    });
}

function registerLeaderboardCommand(program: Command, ctx: CliContext): void {
  program
    .command("leaderboard")
    .description("prediction leaderboard")
    .addOption(new Option("--period <period>").choices(LEADERBOARD_PERIODS).default("all_time"))
    .addOption(new Option("--metric <metric>").choices(LEADERBOARD_METRICS).default("pnl"))
    .option("--limit <n>", "entries, 1 to 100", intArg("--limit", 1, 100), 20)
    .option("--json", "print JSON")
    .action(async (opts) => {
      const board = await (await ctx.client()).prediction.leaderboards({
        period: opts.period,
        metric: opts.metric,
        limit: opts.limit,
      });
      const rows = board.data.map((e, i) => ({
        rank: i + 1,
        owner: e.ownerPubkey,
        pnlUsd: usd(e.realizedPnlUsd),
        volumeUsd: usd(e.totalVolumeUsd),
        "win%": e.winRatePct,
        predictions: e.predictionsCount,
      }));
      print(rows, Boolean(opts.json), board);
    });
}

function registerTokensCommand(program: Command, ctx: CliContext): void {
  program
    .command("tokens <query>")
    .description("token search by symbol, name or mint (comma-separate several)")
    .option("--json", "print JSON")
    .action(async (query: string, opts: { json?: boolean }) => {
      const tokens = await (await ctx.client()).tokens.search({ query });
      const rows = tokens.map((t) => ({
        mint: t.id,
        symbol: t.symbol,
        name: t.name,
        decimals: t.decimals,
        usdPrice: t.usdPrice ?? "",
        verified: t.isVerified ?? "",
        organic: t.organicScore ?? "",
        sus: t.audit?.isSus ?? "",
        // Only assets of the lending Earn product have an APY.
        "earn%": t.apy?.jupEarn ?? "",
      }));
      print(rows, Boolean(opts.json), tokens);
    });
}

function registerInvitesCommand(program: Command, ctx: CliContext): void {
  program
    .command("invites <address>")
    .description("invite history of an address")
    .option("--page <n>", "page, from 1", intArg("--page", 1), 1)
    .option("--json", "print JSON")
    .action(async (address: string, opts: { page: number; json?: boolean }) => {
      const history = await (await ctx.client()).send.inviteHistory({ address, page: opts.page });
      const rows = history.invites.map((i) => ({
        sender: i.sender,
        receiver: i.receiver ?? "",
        amount: i.amount,
        action: i.action ?? "pending",
        created: i.creation_time,
      }));
      print(rows, Boolean(opts.json), history);
      if (!opts.json && history.hasMoreData) console.log(`(more: --page ${opts.page + 1})`);
    });
}
