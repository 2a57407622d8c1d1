import type { Queue } from "bullmq";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import { type ApiClient, paginate } from "../../api/index.js";
import { KNOWN_EVENT_PROVIDERS } from "../../core/event-details.js";
import type { Market } from "../../core/schemas/prediction.js";
import type { RedisKeys } from "../names.js";
import type { PauseSwitch } from "../operator/pause.js";
import { enqueueTargetedPoll } from "../queues/enqueue.js";
import { type PollJobData, type WatchTrigger, weightierTrigger } from "../queues/queues.js";
import type { Holding, HoldingsIndex } from "../state/holdings.js";

// ---- decisions (pure) ----

export interface TriggerSettings {
  /** Poll a holder when the price is within this percent of an exit threshold, or past it. */
  readonly bandPct: number;
}

export interface WatchDecision {
  readonly wallet: string;
  readonly marketId: string;
  readonly trigger: WatchTrigger;
  readonly reason: string;
}

/** The held side's mark price: the middle of its buy and sell prices (one of them when the other is missing). */
export function sideMark(market: Market, side: "yes" | "no"): number | undefined {
  const pricing = market.pricing;
  if (!pricing) return undefined;
  const [buy, sell] =
    side === "yes"
      ? [pricing.buyYesPriceUsd, pricing.sellYesPriceUsd]
      : [pricing.buyNoPriceUsd, pricing.sellNoPriceUsd];
  if (buy !== null && sell !== null) return (buy + sell) / 2;
  return buy ?? sell ?? undefined;
}

/** A mark this close to the one the holder's last poll saw is no change (rounding of the two views). */
const SAME_MARK_MICRO = 1_000;

/**
 * Which holders of one market to poll now, from the market alone, and only for a change their last
 * poll did not see (so a price that sits still, or a claim already asked for, polls nobody again):
 * - resolved: the winning side's holders (their claim); cancelled: every holder (the refund). A
 *   holder whose poll saw the result already is polled again only while its claim waits for
 *   settlement (not claimable yet). A market closed without a result has nothing to act on, and a
 *   resolved market's losers neither.
 * - open: a holder whose mark moved since its poll and is past, or within `bandPct` percent of, an
 *   exit threshold of its position (take-profit above, stop-loss below, trailing stop below its
 *   peak). `peaks` holds the highest mark the watcher saw per position; the sweep's mark counts too.
 *   And a holder whose time rule (`exit.atSeconds`) came at `nowSeconds` after its last poll.
 * What the poll then does is the strategies' decision, on the wallet's own fresh positions.
 */
export function decideTriggers(
  market: Market,
  holdings: readonly Holding[],
  settings: TriggerSettings,
  peaks: ReadonlyMap<string, number> = new Map(),
  nowSeconds?: number,
): WatchDecision[] {
  const out: WatchDecision[] = [];
  const at = (h: Holding, trigger: WatchTrigger, reason: string) =>
    out.push({ wallet: h.wallet, marketId: market.marketId, trigger, reason });
  if (market.result !== null || market.status === "cancelled") {
    for (const h of holdings) {
      if (h.resolvedSeen && h.claimable) continue;
      if (market.status === "cancelled") at(h, "resolved", "market cancelled");
      else if (h.side === market.result || h.claimable) at(h, "resolved", `market resolved ${market.result}`);
    }
    return out;
  }
  if (market.status !== "open") return out;
  const near = settings.bandPct / 100;
  for (const h of holdings) {
    if (!h.exit) continue;
    const timeRule = h.exit.atSeconds;
    if (
      timeRule !== undefined &&
      nowSeconds !== undefined &&
      nowSeconds >= timeRule &&
      h.sweptAt < timeRule
    ) {
      at(h, "time", `time rule due at ${timeRule}, after the last poll`);
      continue;
    }
    const mark = sideMark(market, h.side);
    if (mark === undefined) continue;
    if (h.markUsd !== null && Math.abs(mark - Number(h.markUsd)) <= SAME_MARK_MICRO) continue;
    const { above, below, trailingStopPct } = h.exit;
    if (above !== undefined && mark >= Number(above) * (1 - near)) {
      at(h, "price", `mark ${mark} near or above take-profit ${above}`);
      continue;
    }
    if (below !== undefined && mark <= Number(below) * (1 + near)) {
      at(h, "price", `mark ${mark} near or below stop-loss ${below}`);
      continue;
    }
    if (trailingStopPct !== undefined) {
      const peak = Math.max(mark, Number(h.markUsd ?? 0), peaks.get(h.position) ?? 0);
      const stop = peak * (1 - trailingStopPct / 100);
      if (peak > 0 && mark <= stop * (1 + near))
        at(h, "price", `mark ${mark} near or below trailing stop ${stop}`);
    }
  }
  return out;
}

/** What the watcher remembers of a held market between reads: enough to tell whether it is hot. */
export interface MarketSeen {
  readonly eventId: string;
  readonly status: Market["status"];
  readonly result: Market["result"];
  /** Unix seconds. */
  readonly closeTime: number;
}

/**
 * A market past its close time and not resolved yet: its result may come any second. Only for
 * `hotSeconds` after the close, so a market that waits hours for its result (or one closed before
 * Keeper started) goes back to the usual cycle instead of costing requests all that time.
 */
export function isPastCloseUnresolved(market: MarketSeen, nowMs: number, hotSeconds: number): boolean {
  if (market.result !== null || market.status === "cancelled") return false;
  const sinceCloseMs = nowMs - market.closeTime * 1000;
  return sinceCloseMs >= 0 && sinceCloseMs < hotSeconds * 1000;
}

/** Whether some holder's mark is within `pct` percent of one of its exit thresholds (or past it). */
export function isNearExit(market: Market, holdings: readonly Holding[], pct: number): boolean {
  if (market.status !== "open" || market.result !== null) return false;
  const near = pct / 100;
  return holdings.some((h) => {
    const mark = h.exit ? sideMark(market, h.side) : undefined;
    if (mark === undefined || !h.exit) return false;
    const { above, below } = h.exit;
    return (
      (above !== undefined && mark >= Number(above) * (1 - near)) ||
      (below !== undefined && mark <= Number(below) * (1 + near))
    );
  });
}

/**
 * The held markets the hot cadence reads, most urgent first: those past their close (the latest close
 * first), then those near an exit threshold.
 */
export function hotMarkets(
  seen: ReadonlyMap<string, MarketSeen>,
  nearExit: ReadonlySet<string>,
  nowMs: number,
  hotSeconds: number,
): string[] {
  const closing = [...seen]
    .filter(([, m]) => isPastCloseUnresolved(m, nowMs, hotSeconds))
    .sort(([, a], [, b]) => b.closeTime - a.closeTime)
    .map(([marketId]) => marketId);
  const near = [...nearExit].filter((marketId) => seen.has(marketId));
  return [...new Set([...closing, ...near])];
}

/**
 * How some held markets of one event are read: the event's pages (`GET /events/{eventId}/markets`,
 * one request a page) or each market alone (`GET /markets/{marketId}`, one request each).
 */
export interface HeldRead {
  readonly eventId: string;
  readonly marketIds: readonly string[];
  /** Through the event's pages rather than market by market. */
  readonly isWhole: boolean;
  /** Requests it is expected to cost. */
  readonly cost: number;
}

/**
 * The cheaper way to read `marketIds` of one event: its pages when there are fewer of them than
 * markets to read, else the markets alone (a tie goes to the markets: their cost is exact). `pages`
 * is the event's page count at its last read, unknown (undefined) if it was never read whole.
 */
export function planHeldRead(
  eventId: string,
  marketIds: readonly string[],
  pages: number | undefined,
): HeldRead {
  return pages !== undefined && pages < marketIds.length
    ? { eventId, marketIds, isWhole: true, cost: pages }
    : { eventId, marketIds, isWhole: false, cost: marketIds.length };
}

// ---- the scheduled job ----

/** Markets whose holders are read from the index in one round trip. */
const HOLDERS_PER_READ = 16;
/** Targeted polls queued at once (each a few Redis round trips). */
const ENQUEUES_AT_ONCE = 32;
/**
 * Winners (wallet and market) claimed from the index in one call: a pipeline of admissions and one of
 * builds each. Small enough that the first builds start while the rest are still being decided.
 */
const CLAIMS_AT_ONCE = 32;

export interface HotSettings {
  /** How long after its close time a market unresolved is read at the hot cadence. */
  readonly seconds: number;
  /** A market with a holder's mark within this percent of an exit threshold is hot too. */
  readonly bandPct: number;
  /**
   * Requests a second the hot cadence may send at most, whatever its interval: every request counts,
   * a market read or a page of an event's markets.
   */
  readonly eventsPerSecond: number;
}

export interface WatcherDeps {
  client: ApiClient;
  index: HoldingsIndex;
  redis: Redis;
  keys: RedisKeys;
  poll: Queue<PollJobData>;
  pause: PauseSwitch;
  logger: Logger;
  settings: TriggerSettings & {
    /** A holder polled for a market is not polled again for it before this many seconds. */
    retriggerSeconds: number;
    pageSize: number;
    /** The configured wallets: the index forgets the others, and only these are polled. */
    wallets: ReadonlySet<string>;
    /** The hot cadence (`runHot`); without it nothing is hot. */
    hot?: HotSettings;
  };
  /**
   * Claims from the index: a resolved market's winners claimed from their entries, without a poll
   * (see pipeline/index-claims.ts). False for a wallet it could not deal with: that one is polled.
   */
  claims?: {
    claimMany(
      items: readonly { market: Market; winners: readonly Holding[] }[],
      seenAtMs: number,
    ): Promise<boolean[]>;
  };
  events?: {
    onWatched?(markets: number): void;
    /** Held events the hot cadence reads (a market past close and unresolved, or near an exit threshold). */
    onHot?(events: number): void;
    onRequest?(endpoint: "listEvents" | "listEventMarkets" | "getMarket"): void;
    onTargeted?(trigger: WatchTrigger): void;
  };
  now?: () => number;
}

export interface WatchCycle {
  watched: number;
  requests: number;
  decisions: WatchDecision[];
  /** Wallets a targeted poll was enqueued (or moved ahead) for. */
  polled: string[];
  /** Wallets whose winners of a resolved market were claimed from the index, without a poll. */
  claimedFromIndex: string[];
}

/**
 * Reads the state and prices of exactly the markets the fleet holds and polls just the holders a
 * change concerns, at high priority; a resolution's winners are claimed from the index instead, when
 * a configured strategy decides claims from it (`claims`). Two ways to read them, the cheaper chosen each cycle: the events
 * list with its markets (`GET /events?includeMarkets=true`, a page covers up to `pageSize` events of a
 * provider, whatever is held) or the held events one by one, each the cheaper of its pages
 * (`GET /events/{eventId}/markets`, one request a page) and its held markets alone
 * (`GET /markets/{marketId}` each). A held market the list did not show (another provider, or an
 * event the list leaves out once closed) is read that way too.
 */
export class MarketWatcher {
  /** Requests the last full read of the events list took; unknown until it was tried. */
  private listingCost: number | undefined;
  /** Per held market, the highest mark per position seen since the watcher started (trailing stops). */
  private readonly peaks = new Map<string, Map<string, number>>();
  /** Per market: its state and prices when its holders were last read, and when. */
  private readonly lastRead = new Map<string, { key: string; atMs: number }>();
  /** Per market: the next time rule of one of its holders (unix seconds), when its holders were read. */
  private readonly nextTimeRule = new Map<string, number>();
  /**
   * Providers whose last listing showed no held market, and when it was read: listed again once per
   * `retriggerSeconds`, not every cycle (a provider the fleet holds nothing of cost a third of the
   * watcher's reads). A market held there meanwhile is read through its event until then.
   */
  private readonly idleProviders = new Map<string, number>();
  /** When this watcher last made the index forget wallets gone from the config (undefined: never). */
  private forgotAtMs: number | undefined;
  /** Per held market, its state and close time at its last read: what makes it hot. */
  private readonly seen = new Map<string, MarketSeen>();
  /** Held markets where a holder's mark was near an exit threshold when their holders were last read. */
  private readonly nearExit = new Set<string>();
  /** The hot cadence's reads it may still send (see `runHot`), when it last ran, and whose turn is next. */
  private hotCredit = 0;
  private hotAtMs: number | undefined;
  private hotTurn = 0;
  /** Per held event, the pages of its markets at its last read whole: what reading it whole costs. */
  private readonly eventPages = new Map<string, number>();

  constructor(private readonly deps: WatcherDeps) {}

  async run(): Promise<WatchCycle> {
    const deps = this.deps;
    const cycle: WatchCycle = { watched: 0, requests: 0, decisions: [], polled: [], claimedFromIndex: [] };
    if (await deps.pause.isPaused()) return cycle;
    await this.forgetUnconfigured();
    const held = await deps.index.markets();
    cycle.watched = held.size;
    deps.events?.onWatched?.(held.size);
    if (held.size === 0) return cycle;
    const markets = await this.readMarkets(held, cycle);
    // A market no longer held is forgotten, so that these maps stay the size of what the fleet holds.
    for (const marketId of this.lastRead.keys()) if (!held.has(marketId)) this.lastRead.delete(marketId);
    for (const marketId of this.peaks.keys()) if (!held.has(marketId)) this.peaks.delete(marketId);
    for (const marketId of this.seen.keys()) if (!held.has(marketId)) this.seen.delete(marketId);
    for (const marketId of this.nearExit) if (!held.has(marketId)) this.nearExit.delete(marketId);
    for (const marketId of this.nextTimeRule.keys())
      if (!held.has(marketId)) this.nextTimeRule.delete(marketId);
    const heldEvents = new Set(held.values());
    for (const eventId of this.eventPages.keys())
      if (!heldEvents.has(eventId)) this.eventPages.delete(eventId);
    await this.act(markets, held, cycle);
    deps.logger.debug(
      { watched: cycle.watched, requests: cycle.requests, polled: cycle.polled.length },
      "markets watched",
    );
    return cycle;
  }

  /**
   * The hot cadence, run between full cycles (every `watcher.hotIntervalMs`): reads only the held
   * markets past their close time and not resolved yet, or near a holder's exit threshold and moving,
   * and acts on them as a full cycle would. Each is read alone (`GET /markets/{marketId}`, one
   * request), or with the other hot markets of its event through the event's pages when those are
   * fewer. What is hot comes from the cycles' reads; at rest nothing is, and this sends nothing. At
   * most `hot.eventsPerSecond` requests a second on average, every page counted, taken in turn when
   * more markets are hot. Each scheduler replica knows what is hot from the cycles it ran itself.
   */
  async runHot(): Promise<WatchCycle> {
    const deps = this.deps;
    const cycle: WatchCycle = { watched: 0, requests: 0, decisions: [], polled: [], claimedFromIndex: [] };
    const hot = deps.settings.hot;
    if (!hot || (await deps.pause.isPaused())) return cycle;
    const nowMs = deps.now?.() ?? Date.now();
    const reads = this.hotReads(hotMarkets(this.seen, this.nearExit, nowMs, hot.seconds));
    deps.events?.onHot?.(new Set(reads.map((r) => r.eventId)).size);
    const start = reads.length === 0 ? 0 : this.hotTurn % reads.length;
    // Credit (requests) accrues with time, up to one second's worth, at least one request, and at
    // least what the next read costs (an event read whole, of several pages, is not starved).
    const elapsedMs = this.hotAtMs === undefined ? 1_000 : Math.max(0, nowMs - this.hotAtMs);
    this.hotAtMs = nowMs;
    this.hotCredit = Math.min(
      Math.max(1, hot.eventsPerSecond, reads[start]?.cost ?? 0),
      this.hotCredit + (elapsedMs / 1000) * hot.eventsPerSecond,
    );
    if ((reads[start]?.cost ?? Number.POSITIVE_INFINITY) > this.hotCredit) return cycle;
    const held = await deps.index.markets();
    cycle.watched = held.size;
    const markets = new Map<string, Market>();
    let taken = 0;
    for (; taken < reads.length; taken += 1) {
      const read = reads[(start + taken) % reads.length] as HeldRead;
      if (read.cost > this.hotCredit) break;
      const before = cycle.requests;
      await this.readHeld(read, held, markets, cycle);
      // What it really cost: an event may have more pages than at its last read.
      this.hotCredit -= cycle.requests - before;
    }
    this.hotTurn = start + taken;
    await this.act(markets, held, cycle);
    return cycle;
  }

  /**
   * The hot markets' reads, in their order: an event read whole (cheaper than its hot markets alone)
   * takes the place of its first hot market; the others are read one by one. An event never read whole
   * has an unknown page count: its markets are read alone, at a known cost.
   */
  private hotReads(marketIds: readonly string[]): HeldRead[] {
    const byEvent = new Map<string, string[]>();
    for (const marketId of marketIds) {
      const eventId = this.seen.get(marketId)?.eventId;
      if (eventId !== undefined) byEvent.set(eventId, [...(byEvent.get(eventId) ?? []), marketId]);
    }
    const plans = new Map(
      [...byEvent].map(([eventId, ids]) => [
        eventId,
        planHeldRead(eventId, ids, this.eventPages.get(eventId)),
      ]),
    );
    return marketIds.flatMap((marketId): HeldRead[] => {
      const eventId = this.seen.get(marketId)?.eventId;
      const plan = eventId === undefined ? undefined : plans.get(eventId);
      if (!plan || eventId === undefined) return [];
      if (plan.isWhole) return plan.marketIds[0] === marketId ? [plan] : [];
      return [{ eventId, marketIds: [marketId], isWhole: false, cost: 1 }];
    });
  }

  /** Decides on the markets read, and polls the holders a change concerns. */
  private async act(
    markets: ReadonlyMap<string, Market>,
    held: ReadonlyMap<string, string>,
    cycle: WatchCycle,
  ): Promise<void> {
    const deps = this.deps;
    const seenAtMs = deps.now?.() ?? Date.now();
    for (const m of markets.values())
      this.seen.set(m.marketId, {
        eventId: held.get(m.marketId) ?? m.eventId ?? "",
        status: m.status,
        result: m.result,
        closeTime: m.closeTime,
      });
    const due = [...markets.values()].filter((m) => this.isDue(m, seenAtMs)).map((m) => m.marketId);
    // A market near an exit whose prices sat still since it was last read costs the hot cadence
    // nothing more until a cycle sees it move (a price resting near a threshold is at rest).
    const dueIds = new Set(due);
    for (const marketId of markets.keys()) if (!dueIds.has(marketId)) this.nearExit.delete(marketId);
    /** Per wallet and resolved market ("wallet marketId"), its holdings on the winning side. */
    const winners = new Map<string, Holding[]>();
    // A few markets' holders at a time: once per retriggerSeconds every market is due, and the whole
    // index read at once (three holdings per wallet in the benchmark) would be held in memory together.
    for (let from = 0; from < due.length; from += HOLDERS_PER_READ) {
      const chunk = due.slice(from, from + HOLDERS_PER_READ);
      const holders = await deps.index.holders(chunk);
      for (const marketId of chunk) {
        const market = markets.get(marketId);
        if (!market) continue;
        const holdings = (holders.get(marketId) ?? []).filter((h) => deps.settings.wallets.has(h.wallet));
        const nowSeconds = Math.floor(seenAtMs / 1000);
        cycle.decisions.push(
          ...decideTriggers(market, holdings, deps.settings, this.peaks.get(marketId), nowSeconds),
        );
        this.noteTimeRules(marketId, holdings, nowSeconds);
        this.notePeaks(market, holdings);
        const hot = deps.settings.hot;
        if (hot && isNearExit(market, holdings, hot.bandPct)) this.nearExit.add(marketId);
        else this.nearExit.delete(marketId);
        if (market.result !== null && market.status !== "cancelled")
          for (const h of holdings)
            if (h.side === market.result) {
              const key = `${h.wallet} ${marketId}`;
              winners.set(key, [...(winners.get(key) ?? []), h]);
            }
      }
    }
    await this.pollHolders(cycle, seenAtMs, markets, winners);
  }

  /** Queues one targeted poll per wallet a decision names, unless its cooldown for the market runs. */
  private async pollHolders(
    cycle: WatchCycle,
    seenAtMs: number,
    markets: ReadonlyMap<string, Market>,
    winners: ReadonlyMap<string, Holding[]>,
  ): Promise<void> {
    const deps = this.deps;
    const perWallet = new Map<string, { triggers: Set<WatchTrigger>; marketIds: string[] }>();
    const fromIndex: WatchDecision[] = [];
    // One round trip for every decision's cooldown: a resolved market may have hundreds of holders.
    const cooldowns = deps.redis.pipeline();
    for (const d of cycle.decisions)
      cooldowns.set(
        deps.keys.watchCooldown(d.wallet, d.marketId),
        String(seenAtMs),
        "EX",
        deps.settings.retriggerSeconds,
        "NX",
      );
    const cooled = cycle.decisions.length > 0 ? ((await cooldowns.exec()) ?? []) : [];
    cycle.decisions.forEach((d, i) => {
      const [error, answer] = cooled[i] ?? [null, null];
      if (error) throw error;
      if (answer !== "OK") return;
      if (deps.claims && winners.has(`${d.wallet} ${d.marketId}`)) {
        fromIndex.push(d);
        return;
      }
      const entry = perWallet.get(d.wallet) ?? { triggers: new Set<WatchTrigger>(), marketIds: [] };
      entry.triggers.add(d.trigger);
      entry.marketIds.push(d.marketId);
      perWallet.set(d.wallet, entry);
    });
    await this.claimFromIndex(fromIndex, { markets, winners, perWallet, seenAtMs, cycle });
    const enqueue = async ([wallet, { triggers, marketIds }]: [
      string,
      { triggers: Set<WatchTrigger>; marketIds: string[] },
    ]) => {
      // One poll serves every market of the wallet; its latency is filed under the weightier trigger.
      const trigger = [...triggers].reduce(weightierTrigger);
      const queued = await enqueueTargetedPoll(deps.poll, wallet, { trigger, seenAtMs, marketIds });
      if (!queued) {
        // Its poll is running and may have read before the change. The next cycle reads these
        // holders again (not waiting for the market to change or `retriggerSeconds`): once that poll
        // is done, the index holds what it saw, so a change it missed polls the wallet then.
        await deps.redis.del(...marketIds.map((m) => deps.keys.watchCooldown(wallet, m)));
        for (const marketId of marketIds) this.lastRead.delete(marketId);
        return;
      }
      cycle.polled.push(wallet);
      for (const t of triggers) deps.events?.onTargeted?.(t);
      deps.logger.info(
        { wallet, triggers: [...triggers], markets: marketIds },
        "market change: holder polled ahead of the sweep",
      );
    };
    // Several holders at a time: one by one, the last of hundreds (each a few round trips when its
    // sweep poll is already queued) would wait seconds for the others to be queued first.
    const holders = [...perWallet];
    for (let from = 0; from < holders.length; from += ENQUEUES_AT_ONCE)
      await Promise.all(holders.slice(from, from + ENQUEUES_AT_ONCE).map(enqueue));
  }

  /**
   * A resolved market's winners, claimed from their index entries (a few wallets at a time). A wallet
   * the claims could not deal with (no strategy decides from the index, or the entry lacks what one
   * needs) joins `perWallet`, to be polled as before; so does one whose claims failed to be recorded.
   */
  private async claimFromIndex(
    decisions: readonly WatchDecision[],
    ctx: {
      markets: ReadonlyMap<string, Market>;
      winners: ReadonlyMap<string, Holding[]>;
      perWallet: Map<string, { triggers: Set<WatchTrigger>; marketIds: string[] }>;
      seenAtMs: number;
      cycle: WatchCycle;
    },
  ): Promise<void> {
    const claims = this.deps.claims;
    if (!claims) return;
    const known = decisions.filter((d) => ctx.markets.has(d.marketId));
    const polled = decisions.filter((d) => !ctx.markets.has(d.marketId));
    // A resolution's winners in one call: their admissions and builds go in a round trip each.
    for (let from = 0; from < known.length; from += CLAIMS_AT_ONCE) {
      const chunk = known.slice(from, from + CLAIMS_AT_ONCE);
      let done: boolean[] = [];
      try {
        done = await claims.claimMany(
          chunk.map((d) => ({
            market: ctx.markets.get(d.marketId) as Market,
            winners: ctx.winners.get(`${d.wallet} ${d.marketId}`) ?? [],
          })),
          ctx.seenAtMs,
        );
      } catch (error) {
        this.deps.logger.warn(
          { wallets: chunk.length, err: (error as Error).message },
          "claims from the index failed: their holders are polled",
        );
      }
      chunk.forEach((d, i) => {
        if (done[i] === true) ctx.cycle.claimedFromIndex.push(d.wallet);
        else polled.push(d);
      });
    }
    for (const d of polled) {
      const entry = ctx.perWallet.get(d.wallet) ?? { triggers: new Set<WatchTrigger>(), marketIds: [] };
      entry.triggers.add(d.trigger);
      entry.marketIds.push(d.marketId);
      ctx.perWallet.set(d.wallet, entry);
    }
  }

  /**
   * The index forgets wallets taken out of the config. The config is read at start, so the first
   * cycle searches the whole index; later, once per `retriggerSeconds` (the check sends every
   * configured wallet), the index's own list of wallets catches one a leftover poll job wrote again.
   */
  private async forgetUnconfigured(): Promise<void> {
    const { index, settings, logger } = this.deps;
    const nowMs = this.deps.now?.() ?? Date.now();
    if (this.forgotAtMs !== undefined && nowMs - this.forgotAtMs < settings.retriggerSeconds * 1000) return;
    const forgotten = await index.forgetAllBut(settings.wallets, {
      everywhere: this.forgotAtMs === undefined,
    });
    this.forgotAtMs = nowMs;
    if (forgotten.length > 0)
      logger.info({ wallets: forgotten }, "holdings of wallets no longer configured forgotten");
  }

  /**
   * Holders are read for a market that changed since the last cycle (state or prices), and for every
   * market at least once per `retriggerSeconds` (a holding a sweep wrote meanwhile, a claim waiting for
   * settlement): reading every holder of every market every cycle would make each cycle's work grow
   * with the fleet.
   */
  private isDue(market: Market, nowMs: number): boolean {
    const key = JSON.stringify([market.status, market.result, market.pricing ?? null]);
    const last = this.lastRead.get(market.marketId);
    const timeRule = this.nextTimeRule.get(market.marketId);
    const timeCame = timeRule !== undefined && nowMs >= timeRule * 1000;
    if (
      !timeCame &&
      last &&
      last.key === key &&
      nowMs - last.atMs < this.deps.settings.retriggerSeconds * 1000
    )
      return false;
    this.lastRead.set(market.marketId, { key, atMs: nowMs });
    return true;
  }

  /** The soonest time rule of the market's holders still to come: the market is read again then. */
  private noteTimeRules(marketId: string, holdings: readonly Holding[], nowSeconds: number) {
    const next = Math.min(
      ...holdings.map((h) => h.exit?.atSeconds ?? Number.POSITIVE_INFINITY).filter((at) => at > nowSeconds),
    );
    if (Number.isFinite(next)) this.nextTimeRule.set(marketId, next);
    else this.nextTimeRule.delete(marketId);
  }

  private notePeaks(market: Market, holdings: readonly Holding[]) {
    for (const h of holdings) {
      if (h.exit?.trailingStopPct === undefined) continue;
      const mark = sideMark(market, h.side);
      if (mark === undefined) continue;
      const peaks = this.peaks.get(market.marketId) ?? new Map<string, number>();
      if (mark > (peaks.get(h.position) ?? 0)) peaks.set(h.position, mark);
      this.peaks.set(market.marketId, peaks);
    }
  }

  private async readMarkets(
    held: ReadonlyMap<string, string>,
    cycle: WatchCycle,
  ): Promise<Map<string, Market>> {
    const { client, settings, logger, events } = this.deps;
    const found = new Map<string, Market>();
    // Read event by event, each costs its pages or its held markets, whichever is fewer; an event never
    // read whole is counted one page (it is read whole when it holds several markets, and so learnt).
    const perEventCost = [...marketsByEvent(held)].reduce(
      (sum, [eventId, ids]) => sum + planHeldRead(eventId, ids, this.eventPages.get(eventId) ?? 1).cost,
      0,
    );
    const listingCost = this.listingCost ?? KNOWN_EVENT_PROVIDERS.length;
    if (listingCost < perEventCost) {
      let requests = 0;
      const nowMs = this.deps.now?.() ?? Date.now();
      for (const provider of KNOWN_EVENT_PROVIDERS) {
        const idleSince = this.idleProviders.get(provider);
        if (idleSince !== undefined && nowMs - idleSince < settings.retriggerSeconds * 1000) continue;
        try {
          let holdsHere = false;
          const pages = paginate(
            (range) => {
              requests += 1;
              events?.onRequest?.("listEvents");
              return client.prediction.listEvents({ provider, includeMarkets: true, ...range });
            },
            { pageSize: settings.pageSize },
          );
          for await (const event of pages)
            for (const market of event.markets ?? [])
              if (held.has(market.marketId)) {
                found.set(market.marketId, market);
                holdsHere = true;
              }
          if (holdsHere) this.idleProviders.delete(provider);
          else this.idleProviders.set(provider, nowMs);
        } catch (error) {
          logger.warn({ provider, err: (error as Error).message }, "market watcher: events list unreadable");
        }
      }
      cycle.requests += requests;
      this.listingCost = requests;
    }
    const missing = new Map<string, string>();
    for (const [marketId, eventId] of held) if (!found.has(marketId)) missing.set(marketId, eventId);
    for (const [eventId, ids] of marketsByEvent(missing))
      await this.readHeld(planHeldRead(eventId, ids, this.eventPages.get(eventId) ?? 1), held, found, cycle);
    return found;
  }

  /** Held markets of one event, as planned (`planHeldRead`), into `found`. */
  private async readHeld(
    read: HeldRead,
    held: ReadonlyMap<string, string>,
    found: Map<string, Market>,
    cycle: WatchCycle,
  ): Promise<void> {
    if (read.isWhole) return this.readEvent(read.eventId, held, found, cycle);
    for (const marketId of read.marketIds) {
      if (!held.has(marketId) || (await this.readMarket(marketId, found, cycle))) continue;
      // A market unreadable alone (a service without GET /markets/{id}, say) is looked for in its
      // event's pages, as before that read existed: the watcher is never blind to it.
      return this.readEvent(read.eventId, held, found, cycle);
    }
  }

  /** One held market alone (one request), into `found`; false (logged) when it could not be read. */
  private async readMarket(
    marketId: string,
    found: Map<string, Market>,
    cycle: WatchCycle,
  ): Promise<boolean> {
    const { client, logger, events } = this.deps;
    try {
      cycle.requests += 1;
      events?.onRequest?.("getMarket");
      found.set(marketId, await client.prediction.getMarket(marketId));
      return true;
    } catch (error) {
      logger.warn({ marketId, err: (error as Error).message }, "market watcher: market unreadable alone");
      return false;
    }
  }

  /**
   * One held event's markets (one page is one request), into `found`; a failure is logged. Its page
   * count is kept: what reading it whole costs next time.
   */
  private async readEvent(
    eventId: string,
    held: ReadonlyMap<string, string>,
    found: Map<string, Market>,
    cycle: WatchCycle,
  ): Promise<void> {
    const { client, settings, logger, events } = this.deps;
    let requests = 0;
    try {
      const pages = paginate(
        (range) => {
          requests += 1;
          cycle.requests += 1;
          events?.onRequest?.("listEventMarkets");
          return client.prediction.listEventMarkets(eventId, range);
        },
        { pageSize: settings.pageSize },
      );
      for await (const market of pages) if (held.has(market.marketId)) found.set(market.marketId, market);
      this.eventPages.set(eventId, requests);
    } catch (error) {
      logger.warn({ eventId, err: (error as Error).message }, "market watcher: event's markets unreadable");
    }
  }
}

/** Market ids by event id, from a map of market id to event id. */
function marketsByEvent(markets: ReadonlyMap<string, string>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [marketId, eventId] of markets) out.set(eventId, [...(out.get(eventId) ?? []), marketId]);
  return out;
}
