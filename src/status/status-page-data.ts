import type { Redis } from "ioredis";
import type { ConfiguredStrategy, KeeperConfig } from "../config/load-config.js";
import { formatUsdCents } from "../core/money.js";
import type { Order, Position } from "../core/schemas/prediction.js";
import { type NextStep, type StatusView, statusViewSchema } from "../core/strategy-hooks.js";
import type { RedisKeys } from "../keeper/names.js";
import { Ledger, type LedgerRow } from "../keeper/state/ledger.js";
import { type PollRecord, PollRecords } from "../keeper/state/poll-record.js";
import { StrategyStateStore } from "../keeper/state/strategy-state.js";
import { type ValueSample, ValueSeries } from "../keeper/state/value-series.js";
import { type DayActivity, dailyActivity, sumTotals, type Totals, walletTotals } from "./fleet-totals.js";
import { type PositionLine, positionLine } from "./position-lines.js";
import { type KeeperStatus, readKeeperStatus } from "./status-report.js";

/** Ledger rows per page of the status page. */
export const LEDGER_PAGE_SIZE = 50;

export interface LedgerFilter {
  status?: string;
  kind?: string;
  wallet?: string;
  /** From 1. */
  page: number;
}

/** What one configured strategy shows for a wallet (its `statusView` hook), or why it shows nothing. */
export type StrategyView = { strategy: string; view: StatusView } | { strategy: string; error: string };

export interface WalletView {
  wallet: string;
  label?: string;
  lastPollAt?: number;
  positions: Position[];
  /** Unix seconds of the poll the positions are from; absent: no poll recorded them yet. */
  positionsAt?: number;
  /** Pending prediction orders, as the last orders poll listed them. */
  orders: Order[];
  /** Unix seconds of that orders poll; absent: none recorded yet. */
  ordersAt?: number;
  /** Trigger (limit) orders Keeper created and has not cancelled. */
  triggerOrders: Array<{ key: string; order: string }>;
  /** Columns and tables the strategies add for this wallet, in config order. */
  strategies: StrategyView[];
  /** The positions as the page shows them, with the strategies' figures. */
  lines: PositionLine[];
  totals: Totals;
  /** What Keeper will do next for the wallet: the strategies' steps, then the claims waiting; by time. */
  next: NextStep[];
}

export interface StatusPageData {
  status: KeeperStatus;
  wallets: WalletView[];
  ledger: { rows: LedgerRow[]; matching: number; filter: LedgerFilter; pages: number };
  /** Refused and failed intents among the newest, newest first: what needs a person. */
  needsLook: LedgerRow[];
  /** A wallet not polled successfully for this long is stale (ops.stalePollSeconds). */
  stalePollSeconds: number;
  /** Values seen in the ledger, for the filter's choices. */
  kinds: string[];
  /** Every wallet's totals, added. */
  fleet: Totals;
  /** Claims and exits that landed, a UTC day each, oldest first. */
  activity: DayActivity[];
  /** The fleet's value over time, as the polls recorded it (oldest first). */
  valueSeries: ValueSample[];
  generatedAt: number;
}

/**
 * No API client on purpose: anyone who can reach the page can load it, so it shows what the polls
 * recorded in Redis and never spends the service's rate limit (claims and exits need it).
 */
export interface StatusPageDeps {
  config: KeeperConfig;
  redis: Redis;
  keys: RedisKeys;
  /** The wallets the keeper runs for (config.wallets, or the demo's). */
  wallets: readonly string[];
}

/** Everything the status page shows, read from Redis only (as `keeper status` does): no service call. */
export async function readStatusPage(
  deps: StatusPageDeps,
  filter: LedgerFilter,
  nowSeconds: number,
): Promise<StatusPageData> {
  const status = await readKeeperStatus(deps, nowSeconds);
  const records = await new PollRecords(deps.redis, deps.keys).read(deps.wallets);
  const wallets = await Promise.all(
    deps.wallets.map((w) => readWallet(deps, w, { status, record: records.get(w) }, nowSeconds)),
  );
  const matching = status.recent.filter(
    (r) =>
      (!filter.status || r.status === filter.status) &&
      (!filter.kind || r.kind === filter.kind) &&
      (!filter.wallet || r.wallet === filter.wallet),
  );
  const pages = Math.max(1, Math.ceil(matching.length / LEDGER_PAGE_SIZE));
  const page = Math.min(filter.page, pages);
  return {
    status,
    wallets,
    ledger: {
      rows: matching.slice((page - 1) * LEDGER_PAGE_SIZE, page * LEDGER_PAGE_SIZE),
      matching: matching.length,
      filter: { ...filter, page },
      pages,
    },
    needsLook: status.recent.filter((r) => r.status === "refused" || r.status === "failed"),
    stalePollSeconds: deps.config.ops.stalePollSeconds,
    kinds: [...new Set(status.recent.map((r) => r.kind))].sort(),
    fleet: sumTotals(wallets.map((w) => w.totals)),
    activity: dailyActivity(status.recent, nowSeconds),
    valueSeries: await new ValueSeries(deps.redis, deps.keys).samples(),
    generatedAt: nowSeconds,
  };
}

async function readWallet(
  deps: StatusPageDeps,
  wallet: string,
  seen: { status: KeeperStatus; record: PollRecord | undefined },
  nowSeconds: number,
): Promise<WalletView> {
  const { config, redis, keys } = deps;
  const { status, record } = seen;
  const states = new StrategyStateStore(redis, keys);
  const label = config.wallets.find((w) => w.pubkey === wallet)?.label;
  const lastPollAt = status.lastPolls[wallet];
  const view: WalletView = {
    wallet,
    ...(label === undefined ? {} : { label }),
    ...(lastPollAt === undefined ? {} : { lastPollAt }),
    positions: [],
    orders: record?.orders ?? [],
    ...(record?.ordersAt === undefined ? {} : { ordersAt: record.ordersAt }),
    triggerOrders: await new Ledger(redis, keys).triggerOrders(wallet),
    strategies: [],
    lines: [],
    totals: walletTotals(wallet, [], [], nowSeconds),
    next: [],
  };
  if (record) {
    view.positionsAt = record.positionsAt;
    view.positions = record.positions;
  }
  const shown = config.strategies.filter((s) => s.strategy.statusView !== undefined);
  view.strategies = await Promise.all(
    shown.map(async (entry) =>
      strategyView(entry, {
        state: await states.load(wallet, entry.name),
        positions: view.positions,
        nowSeconds,
      }),
    ),
  );
  return withFigures(view, status.recent, nowSeconds);
}

/** The wallet's position lines, totals and next steps, from its positions and what its strategies said. */
export function withFigures(view: WalletView, recent: readonly LedgerRow[], nowSeconds: number): WalletView {
  const views = view.strategies.flatMap((s) => ("view" in s ? [s.view] : []));
  const lines = view.positions.map((p) =>
    positionLine(
      p,
      views.flatMap((v) => {
        const outlook = v.positions?.[p.pubkey];
        return outlook === undefined ? [] : [outlook];
      }),
    ),
  );
  const claims: NextStep[] = lines
    .filter((l) => l.state === "claimable")
    .map((l) => ({
      text: `claim: $${formatUsdCents(l.realizableMicroUsd ?? 0n)} for ${l.contracts} ${l.side} of "${l.title}" waits for a claim`,
    }));
  const next = [...views.flatMap((v) => v.next ?? []), ...claims].sort(
    (a, b) => (a.at ?? nowSeconds) - (b.at ?? nowSeconds),
  );
  return { ...view, lines, totals: walletTotals(view.wallet, lines, recent, nowSeconds), next };
}

/** One strategy's view of a wallet, checked: a hook that throws or answers something else shows why. */
function strategyView(
  { name, strategy, config }: ConfiguredStrategy,
  input: { state: Record<string, unknown>; positions: readonly Position[]; nowSeconds: number },
): StrategyView {
  try {
    const parsed = statusViewSchema.safeParse(strategy.statusView?.({ config, ...input }) ?? {});
    if (parsed.success) return { strategy: name, view: parsed.data };
    return {
      strategy: name,
      error: `statusView() answered ${parsed.error.issues[0]?.message ?? "something else"}`,
    };
  } catch (error) {
    return { strategy: name, error: `statusView() failed: ${(error as Error).message}` };
  }
}
