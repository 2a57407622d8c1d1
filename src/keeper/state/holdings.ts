import type { Redis } from "ioredis";
import type { ConfiguredStrategy } from "../../config/load-config.js";
import { holdsContracts } from "../../core/contracts.js";
import type { EventDetails } from "../../core/event-details.js";
import type { Position } from "../../core/schemas/prediction.js";
import { type PriceThresholds, priceThresholdsSchema } from "../../core/strategy-hooks.js";
import { redisScript } from "../../ops/redis-script.js";
import type { RedisKeys } from "../names.js";

/**
 * One position as the holdings index keeps it: enough for the market watcher to decide, from a
 * market's state and prices alone, whether its owner should be polled now. Amounts in micro-USD.
 */
export interface Holding {
  wallet: string;
  position: string;
  marketId: string;
  eventId: string;
  side: "yes" | "no";
  sizeUsd: string;
  costUsd: string;
  /**
   * The exact count held (micro-contracts), when the service sent one: a winner's payout at $1 a
   * contract, so its claim can be decided from the index (`claimFromIndex`).
   */
  contractsMicro?: string;
  /** The service said a claim is possible (winner of a settled market, or a cancelled market's refund). */
  claimable: boolean;
  /** The poll that wrote it saw the market resolved or cancelled already (its strategies had their turn). */
  resolvedSeen: boolean;
  /** The held side's mark price at the sweep (null once the market closed). */
  markUsd: string | null;
  /**
   * Mark prices at which a configured strategy would act on it (its `priceThresholds` hook; the
   * nearest on each side when several have some); absent without any.
   */
  exit?: { above?: string; below?: string; trailingStopPct?: number; atSeconds?: number };
  /** Unix seconds of the poll that wrote it. */
  sweptAt: number;
}

/**
 * A position is held while something may still be done with it: open with contracts left, in a market
 * closed and waiting for its result (the watcher must see that result to claim from the index), or
 * waiting for its claim (claimable, or on the winning side of a resolved market not yet settled). A
 * claimed, sold or lost position leaves the index.
 */
export function isHeld(p: Position): boolean {
  if (p.claimed) return false;
  if (p.claimable) return true;
  const result = p.marketMetadata.result;
  if (result !== undefined && result !== null) return result === (p.isYes ? "yes" : "no");
  const status = p.marketMetadata.status;
  return (status === "open" || status === "closed") && hasContractsLeft(p);
}

/**
 * Contracts left to act on: the exact count when the service sends one (0.4 contract is held, though
 * `contracts` floors it to 0); otherwise the USD size or the floored count, whichever says so.
 */
function hasContractsLeft(p: Position): boolean {
  if (p.contractsMicro !== undefined) return holdsContracts(p);
  return BigInt(p.sizeUsd) > 0n || holdsContracts(p);
}

/**
 * The holdings of one wallet's full position list, with the prices at which its strategies would act
 * on each (the nearest on each side wins). A strategy whose `priceThresholds` throws or answers
 * something else gets no thresholds on this poll, and is reported once.
 */
export function holdingsOf(
  wallet: string,
  positions: readonly Position[],
  options: {
    strategies: readonly ConfiguredStrategy[];
    events?: Readonly<Record<string, EventDetails>>;
    nowSeconds: number;
    onHookError?(strategy: string, error: string): void;
  },
): Holding[] {
  const out: Holding[] = [];
  const failed = new Map<string, string>();
  const watching = options.strategies.filter((s) => s.strategy.priceThresholds !== undefined);
  for (const p of positions) {
    if (!isHeld(p)) continue;
    const exit = nearest(
      watching.flatMap((entry) => {
        const t = thresholdsOf(entry, p, options.events?.[p.eventId], failed);
        return t ? [t] : [];
      }),
    );
    out.push({
      wallet,
      position: p.pubkey,
      marketId: p.marketId,
      eventId: p.eventId,
      side: p.isYes ? "yes" : "no",
      sizeUsd: p.sizeUsd,
      costUsd: p.totalCostUsd,
      ...(p.contractsMicro !== undefined ? { contractsMicro: p.contractsMicro } : {}),
      claimable: p.claimable,
      resolvedSeen:
        (p.marketMetadata.result !== undefined && p.marketMetadata.result !== null) ||
        p.marketMetadata.status === "cancelled",
      markUsd: p.markPriceUsd,
      ...(exit ? { exit } : {}),
      sweptAt: options.nowSeconds,
    });
  }
  for (const [strategy, error] of failed) options.onHookError?.(strategy, error);
  return out;
}

/** One strategy's thresholds for one position, checked; a failure is noted in `failed`, by strategy. */
function thresholdsOf(
  { name, strategy, config }: ConfiguredStrategy,
  position: Position,
  event: EventDetails | undefined,
  failed: Map<string, string>,
): PriceThresholds | undefined {
  if (failed.has(name)) return undefined;
  try {
    const answer = strategy.priceThresholds?.(config, position, event);
    if (answer === undefined) return undefined;
    const parsed = priceThresholdsSchema.safeParse(answer);
    if (parsed.success) return parsed.data;
    failed.set(name, `priceThresholds() answered ${parsed.error.issues[0]?.message ?? "something else"}`);
  } catch (error) {
    failed.set(name, `priceThresholds() failed: ${(error as Error).message}`);
  }
  return undefined;
}

function nearest(all: ReadonlyArray<NonNullable<Holding["exit"]>>): Holding["exit"] | undefined {
  if (all.length === 0) return undefined;
  const out: NonNullable<Holding["exit"]> = {};
  for (const t of all) {
    if (t.above !== undefined && (out.above === undefined || BigInt(t.above) < BigInt(out.above)))
      out.above = t.above;
    if (t.below !== undefined && (out.below === undefined || BigInt(t.below) > BigInt(out.below)))
      out.below = t.below;
    if (t.trailingStopPct !== undefined)
      out.trailingStopPct = Math.min(t.trailingStopPct, out.trailingStopPct ?? Number.POSITIVE_INFINITY);
    if (t.atSeconds !== undefined)
      out.atSeconds = Math.min(t.atSeconds, out.atSeconds ?? Number.POSITIVE_INFINITY);
  }
  return out;
}

/**
 * Replaces a wallet's entries in one step: the markets it no longer holds lose it (and leave the
 * index when nobody holds them), the ones it holds get its positions. Atomic, so the watcher never
 * reads a wallet half-written.
 * KEYS: the wallet's market set, the held-markets hash, the indexed-wallets set. ARGV: market key
 * prefix, wallet, then (marketId, eventId, holdings JSON) triples.
 */
const REPLACE_WALLET = `
local old = redis.call('SMEMBERS', KEYS[1])
local new = {}
for i = 3, #ARGV, 3 do new[ARGV[i]] = true end
for _, m in ipairs(old) do
  if not new[m] then
    local mk = ARGV[1] .. m
    redis.call('HDEL', mk, ARGV[2])
    if redis.call('HLEN', mk) == 0 then redis.call('HDEL', KEYS[2], m) end
  end
end
redis.call('DEL', KEYS[1])
for i = 3, #ARGV, 3 do
  redis.call('HSET', ARGV[1] .. ARGV[i], ARGV[2], ARGV[i + 2])
  redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1])
  redis.call('SADD', KEYS[1], ARGV[i])
end
if #ARGV > 2 then redis.call('SADD', KEYS[3], ARGV[2]) else redis.call('SREM', KEYS[3], ARGV[2]) end
return #old
`;
const replaceWalletScript = redisScript<unknown>("keeperHoldingsReplaceWallet", 3, REPLACE_WALLET);

/**
 * Removes every entry of the wallets not in ARGV (the configured ones), in one step. The wallets are
 * found in the indexed-wallets set; with \`everywhere\`, also in every held market's holders (entries
 * written before that set existed). Returns the wallets removed.
 * KEYS: the held-markets hash, the indexed-wallets set. ARGV: market key prefix, wallet key prefix,
 * "everywhere" or "", then the configured wallets.
 */
const FORGET_OTHERS = `
local configured = {}
for i = 4, #ARGV do configured[ARGV[i]] = true end
local gone, order = {}, {}
local function note(w)
  if not configured[w] and not gone[w] then gone[w] = true; order[#order + 1] = w end
end
for _, w in ipairs(redis.call('SMEMBERS', KEYS[2])) do note(w) end
local function drop(m, w)
  local mk = ARGV[1] .. m
  redis.call('HDEL', mk, w)
  if redis.call('HLEN', mk) == 0 then redis.call('HDEL', KEYS[1], m) end
end
if ARGV[3] == 'everywhere' then
  for _, m in ipairs(redis.call('HKEYS', KEYS[1])) do
    for _, w in ipairs(redis.call('HKEYS', ARGV[1] .. m)) do
      if not configured[w] then note(w); drop(m, w) end
    end
  end
end
for _, w in ipairs(order) do
  for _, m in ipairs(redis.call('SMEMBERS', ARGV[2] .. w)) do drop(m, w) end
  redis.call('DEL', ARGV[2] .. w)
  redis.call('SREM', KEYS[2], w)
end
return order
`;
const forgetOthersScript = redisScript<unknown>("keeperHoldingsForgetOthers", 2, FORGET_OTHERS);

/** Which wallets hold which markets, in Redis under Keeper's prefix, written by every full poll. */
export class HoldingsIndex {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  /** Everything the wallet holds now, from a full list of its positions. */
  async replaceWallet(wallet: string, holdings: readonly Holding[]): Promise<void> {
    const byMarket = new Map<string, Holding[]>();
    for (const h of holdings) byMarket.set(h.marketId, [...(byMarket.get(h.marketId) ?? []), h]);
    const args: string[] = [this.keys.holdingsMarket(""), wallet];
    for (const [marketId, list] of byMarket)
      args.push(marketId, list[0]?.eventId ?? "", JSON.stringify(list));
    await replaceWalletScript(
      this.redis,
      this.keys.holdingsOfWallet(wallet),
      this.keys.holdingsMarkets,
      this.keys.holdingsWallets,
      ...args,
    );
  }

  /**
   * Forgets the wallets not configured (taken out of the config): nothing polls them any more, so
   * their entries would stay as they were, and their markets would be read and counted as watched.
   * `everywhere` also walks every held market's holders, which finds entries written before the
   * index kept its set of wallets; it costs a read of every market, so once per start is enough.
   * Returns the wallets removed.
   */
  async forgetAllBut(
    configured: ReadonlySet<string>,
    options: { everywhere?: boolean } = {},
  ): Promise<string[]> {
    return (await forgetOthersScript(
      this.redis,
      this.keys.holdingsMarkets,
      this.keys.holdingsWallets,
      this.keys.holdingsMarket(""),
      this.keys.holdingsOfWallet(""),
      options.everywhere ? "everywhere" : "",
      ...configured,
    )) as string[];
  }

  /** Held market id -> its event id. */
  async markets(): Promise<Map<string, string>> {
    return new Map(Object.entries(await this.redis.hgetall(this.keys.holdingsMarkets)));
  }

  /** The holdings of each market asked for (an unreadable entry is left out). */
  async holders(marketIds: readonly string[]): Promise<Map<string, Holding[]>> {
    const out = new Map<string, Holding[]>();
    if (marketIds.length === 0) return out;
    const pipeline = this.redis.pipeline();
    for (const id of marketIds) pipeline.hgetall(this.keys.holdingsMarket(id));
    const answers = (await pipeline.exec()) ?? [];
    marketIds.forEach((id, i) => {
      const [error, byWallet] = answers[i] ?? [null, {}];
      if (error) throw error;
      const list: Holding[] = [];
      for (const json of Object.values(byWallet as Record<string, string>)) {
        try {
          list.push(...(JSON.parse(json) as Holding[]));
        } catch {
          // Written by another version: left for the next sweep to overwrite.
        }
      }
      out.set(id, list);
    });
    return out;
  }
}
