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
 * The events the hot cadence reads, most urgent first: those with a held market past its close
 * (the latest close first), then those with a held market near an exit threshold.
 */
export function hotEvents(
  seen: ReadonlyMap<string, MarketSeen>,
  nearExit: ReadonlySet<string>,
  nowMs: number,
  hotSeconds: number,
): string[] {
  const closing = [...seen.values()]
    .filter((m) => isPastCloseUnresolved(m, nowMs, hotSeconds))
    .sort((a, b) => b.closeTime - a.closeTime)
    .map((m) => m.eventId);
  const near = [...nearExit].flatMap((id) => {
    const m = seen.get(id);
    return m ? [m.eventId] : [];
  });
  return [...new Set([...closing, ...near])];
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
  /** Event reads a second the hot cadence may send at most, whatever its interval. */
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
    onRequest?(endpoint: "listEvents" | "listEventMarkets"): void;
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
 * provider, whatever is held) or one `GET /events/{eventId}/markets` per held event. A held market the
 * list did not show (another provider, or an event the list leaves out once closed) is read through
 * its event.
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
    await this.act(markets, held, cycle);
    deps.logger.debug(
      { watched: cycle.watched, requests: cycle.requests, polled: cycle.polled.length },
      "markets watched",
    );
    return cycle;
  }

  /**
   * The hot cadence, run between full cycles (every `watcher.hotIntervalMs`): reads only the events
   * of held markets past their close time and not resolved yet, or near a holder's exit threshold
   * and moving, one `GET /events/{eventId}/markets` each, and acts on them as a full cycle would.
   * What is hot comes from the cycles' reads; at rest nothing is, and this sends nothing. At most
   * `hot.eventsPerSecond` reads a second on average, taken in turn when more events are hot. Each
   * scheduler replica knows what is hot from the cycles it ran itself.
   */
  async runHot(): Promise<WatchCycle> {
    const deps = this.deps;
    const cycle: WatchCycle = { watched: 0, requests: 0, decisions: [], polled: [], claimedFromIndex: [] };
    const hot = deps.settings.hot;
    if (!hot || (await deps.pause.isPaused())) return cycle;
    const nowMs = deps.now?.() ?? Date.now();
    const events = hotEvents(this.seen, this.nearExit, nowMs, hot.seconds);
    deps.events?.onHot?.(events.length);
    // Credit for reads accrues with time, up to one second's worth (at least one read).
    const elapsedMs = this.hotAtMs === undefined ? 1_000 : Math.max(0, nowMs - this.hotAtMs);
    this.hotAtMs = nowMs;
    this.hotCredit = Math.min(
      Math.max(1, hot.eventsPerSecond),
      this.hotCredit + (elapsedMs / 1000) * hot.eventsPerSecond,
    );
    if (events.length === 0) return cycle;
    const count = Math.min(events.length, Math.floor(this.hotCredit));
    if (count === 0) return cycle;
    this.hotCredit -= count;
    const start = this.hotTurn % events.length;
    const chosen = [...events.slice(start), ...events.slice(0, start)].slice(0, count);
    this.hotTurn = start + count;
    const held = await deps.index.markets();
    cycle.watched = held.size;
    const markets = new Map<string, Market>();
    for (const eventId of chosen) await this.readEvent(eventId, held, markets, cycle);
    await this.act(markets, held, cycle);
    return cycle;
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
    const heldEvents = new Set(held.values());
    const listingCost = this.listingCost ?? KNOWN_EVENT_PROVIDERS.length;
    if (listingCost < heldEvents.size) {
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
    const missing = new Set<string>();
    for (const [marketId, eventId] of held) if (!found.has(marketId)) missing.add(eventId);
    for (const eventId of missing) await this.readEvent(eventId, held, found, cycle);
    return found;
  }

  /** One held event's markets (one page is one request), into `found`; a failure is logged. */
  private async readEvent(
    eventId: string,
    held: ReadonlyMap<string, string>,
    found: Map<string, Market>,
    cycle: WatchCycle,
  ): Promise<void> {
    const { client, settings, logger, events } = this.deps;
    try {
      const pages = paginate(
        (range) => {
          cycle.requests += 1;
          events?.onRequest?.("listEventMarkets");
          return client.prediction.listEventMarkets(eventId, range);
        },
        { pageSize: settings.pageSize },
      );
      for await (const market of pages) if (held.has(market.marketId)) found.set(market.marketId, market);
    } catch (error) {
      logger.warn({ eventId, err: (error as Error).message }, "market watcher: event's markets unreadable");
    }
  }
}
