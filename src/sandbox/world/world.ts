import { type Keypair, PublicKey } from "@solana/web3.js";
import { type Clock, DrivenClock } from "./clock.js";
import { contractsTimes } from "./contract-units.js";
import { notFound } from "./errors.js";
import { type EventRecord, generateEventsAndMarkets } from "./events.js";
import {
  type MarketPricing,
  type MarketRecord,
  type MarketResult,
  type MarketState,
  marketStateAt,
  minuteOf,
  ONE_USD_MICRO,
  pricingAt,
} from "./markets.js";
import { generateWalletPositions, marketsByPhase, type PositionRecord, RICH_TEMPLATE } from "./positions.js";
import { deriveKeypair, hashString, seedBytes } from "./rng.js";
import { TokenCatalogue } from "./tokens.js";

export interface WorldOptions {
  /** Everything in the world follows from it; default 1 (the sandbox's documented default). */
  readonly seed?: number;
  /** Default: a driven clock at 2026-01-01T00:00:00Z. The world's genesis is the clock's time at creation. */
  readonly clock?: Clock;
  /** Sandbox wallets; default 4. Scale runs use 1,000 or 10,000. */
  readonly walletCount?: number;
  /** How many wallets (the first ones) hold the full portfolio of every position state; default 4. */
  readonly richWalletCount?: number;
  /** Positions of each wallet beyond the rich ones; default 3 (claimable, open with an order, losing). */
  readonly positionsPerWallet?: number;
  /** Of the wallets beyond the rich ones, about this percent hold nothing (0 to 100; default 0). */
  readonly idleWalletPct?: number;
  /** Events per category and provider; default 4 (56 events, about 110 markets). */
  readonly eventsPerCategory?: number;
  /** Mints that exist on the local chain, by token catalogue key (`usdc` at least, when a chain runs). */
  readonly tokenMints?: Readonly<Record<string, string>>;
}

/** A landed close: its transaction, and what the sale brings (`proceedsMicro`, after `feeMicro`). */
export interface ClosingSale {
  readonly signature: string;
  readonly slot: number;
  readonly proceedsMicro: number;
  readonly feeMicro: number;
}

/** A record of something that happened after genesis (a claim or close that landed on the chain). */
export interface LiveHistoryEntry {
  readonly id: number;
  readonly eventType: "payout_claimed" | "order_closed" | "order_filled";
  readonly timestamp: number;
  readonly positionIndex: number;
  readonly signature: string;
  readonly slot: number;
  readonly amountMicro: number;
  readonly feeMicro: number;
}

/**
 * What became of an order: `filled` (a trigger order that traded), `completed` (a recurring order that
 * ran all its orders), `expired` (a trigger order past its expiredAt, set by a test), or `cancelled`.
 */
export type SwapOrderStatus = "open" | "cancelled" | "filled" | "completed" | "expired";

/** A trigger or recurring order that exists because its creating transaction landed. */
export interface SwapOrderRecord {
  readonly kind: "trigger" | "recurring";
  readonly order: string;
  readonly maker: string;
  readonly inputMint: string;
  readonly outputMint: string;
  readonly inAmountRaw: bigint;
  readonly outAmountRaw: bigint | null;
  /** Recurring: `time` or `price`. */
  readonly recurringType?: "time" | "price";
  /** Recurring time orders: how many orders and how far apart (seconds). */
  readonly numberOfOrders?: number;
  readonly intervalSeconds?: number;
  /** Trigger: Unix seconds, when the maker set one. */
  readonly expiredAt?: number;
  readonly createdAt: number;
  readonly signature: string;
  status: SwapOrderStatus;
  cancelledAt?: number;
  /** When it left `open` (cancelled, filled, completed or expired). */
  closedAt?: number;
  closeSignature?: string;
}

/** The service's own keepers claim every winner this long after settlement, free (api-live). */
export const SERVICE_CLAIM_DELAY_SECONDS = 86_400;

/** History ids of generated records are `position index × 8 + k`; records made later come after them. */
export const HISTORY_IDS_PER_POSITION = 8;

/**
 * The simulated world: events, markets, positions, orders, history, tokens and invites, deterministic
 * from a seed and a clock. Reads are computed at the clock's now; changes come only from tests
 * (`resolveMarket`, `setPrice`) and from transactions that landed on the chain (`apply*`).
 */
export class World {
  readonly seed: number;
  readonly clock: Clock;
  readonly genesisSeconds: number;
  readonly events: readonly EventRecord[];
  readonly markets: readonly MarketRecord[];
  readonly positions: readonly PositionRecord[];
  readonly walletCount: number;
  readonly tokens: TokenCatalogue;
  readonly liveHistory: LiveHistoryEntry[] = [];
  readonly swapOrders = new Map<string, SwapOrderRecord>();
  /**
   * Test hook: while true, a landed close does not sell at once. The live service's keepers fill a
   * sell some time after its transaction lands (`create_order`), listing the position as open, with
   * the sell as an open order, until then; here the sell waits for `releaseHeldSells` (the position
   * counts it in `openOrders`; GET /orders does not list it).
   */
  holdSells = false;
  /** Landed closes waiting for their fill while `holdSells` is set, by position. */
  private readonly heldSells = new Map<string, ClosingSale[]>();
  /** Positions opened after genesis (POST /orders, landed), by index: after the generated ones. */
  private readonly opened = new Map<number, PositionRecord>();
  private nextOpenedIndex = 0;
  /** Told of each market a test resolves, so Forecast winners are paid without a claim. */
  private readonly resolveListeners = new Set<(market: MarketRecord) => void>();
  /** Told of each order the service fills or completes, so the chain can pay it out. */
  private readonly fillListeners = new Set<(order: SwapOrderRecord, outAmountRaw: bigint) => void>();

  private readonly walletKeys: (Keypair | undefined)[];
  private walletIndexByPubkey: Map<string, number> | undefined;
  private readonly positionsStartOf: Int32Array;
  private readonly eventById = new Map<string, EventRecord>();
  private readonly marketById = new Map<string, MarketRecord>();
  private readonly positionMask: number;

  constructor(options: WorldOptions = {}) {
    this.seed = options.seed ?? 1;
    this.clock = options.clock ?? new DrivenClock();
    this.genesisSeconds = this.clock.nowSeconds();
    this.walletCount = options.walletCount ?? 4;
    if (!Number.isInteger(this.walletCount) || this.walletCount < 1)
      throw new RangeError("walletCount must be >= 1");
    const layout = {
      richWallets: Math.min(this.walletCount, options.richWalletCount ?? 4),
      positionsPerWallet: options.positionsPerWallet ?? 3,
      idleWalletPct: options.idleWalletPct ?? 0,
      seed: this.seed,
    };
    if (!(layout.idleWalletPct >= 0 && layout.idleWalletPct <= 100))
      throw new RangeError("idleWalletPct must be between 0 and 100");
    const generated = generateEventsAndMarkets(
      this.seed,
      this.genesisSeconds,
      options.eventsPerCategory ?? 4,
    );
    this.events = generated.events;
    this.markets = generated.markets;
    for (const event of this.events) this.eventById.set(event.eventId, event);
    for (const market of this.markets) this.marketById.set(market.marketId, market);

    const byPhase = marketsByPhase(this.markets);
    const positions: PositionRecord[] = [];
    this.positionsStartOf = new Int32Array(this.walletCount + 1);
    for (let w = 0; w < this.walletCount; w++) {
      this.positionsStartOf[w] = positions.length;
      for (const p of generateWalletPositions(
        this.seed,
        w,
        positions.length,
        layout,
        byPhase,
        this.genesisSeconds,
      ))
        positions.push(p);
    }
    this.positionsStartOf[this.walletCount] = positions.length;
    this.positions = positions;
    this.nextOpenedIndex = positions.length;
    this.walletKeys = new Array(this.walletCount);
    this.positionMask = hashString(`position-mask#${this.seed}`);
    this.tokens = new TokenCatalogue(this.seed, this.genesisSeconds, { mints: options.tokenMints ?? {} });
  }

  now(): number {
    return this.clock.nowSeconds();
  }

  // ---- wallets ----

  /** Keypair of sandbox wallet `index`, derived on first use (ed25519 key derivation is the costly part). */
  walletKeypair(index: number): Keypair {
    if (!Number.isInteger(index) || index < 0 || index >= this.walletCount)
      throw new RangeError(`wallet index ${index} is outside 0..${this.walletCount - 1}`);
    let key = this.walletKeys[index];
    if (key === undefined) {
      key = deriveKeypair(`wallet:${index}`, this.seed);
      this.walletKeys[index] = key;
    }
    return key;
  }

  walletPubkey(index: number): string {
    return this.walletKeypair(index).publicKey.toBase58();
  }

  /** Every sandbox wallet's public key, in index order. */
  wallets(): string[] {
    return Array.from({ length: this.walletCount }, (_, i) => this.walletPubkey(i));
  }

  walletIndexOf(pubkey: string): number | undefined {
    if (this.walletIndexByPubkey === undefined) {
      const map = new Map<string, number>();
      for (let i = 0; i < this.walletCount; i++) map.set(this.walletPubkey(i), i);
      this.walletIndexByPubkey = map;
    }
    return this.walletIndexByPubkey.get(pubkey);
  }

  // ---- events and markets ----

  findEvent(eventId: string): EventRecord | undefined {
    return this.eventById.get(eventId);
  }

  findMarket(marketId: string): MarketRecord | undefined {
    return this.marketById.get(marketId);
  }

  findMarketByPubkey(pubkey: string): MarketRecord | undefined {
    return this.markets.find((m) => m.pubkey === pubkey);
  }

  eventOf(market: MarketRecord): EventRecord {
    const event = this.events[market.eventIndex];
    if (event === undefined) throw new Error(`market ${market.marketId} has no event`);
    return event;
  }

  marketOf(position: PositionRecord): MarketRecord {
    const market = this.markets[position.marketIndex];
    if (market === undefined) throw new Error(`position ${position.index} has no market`);
    return market;
  }

  marketState(market: MarketRecord): MarketState {
    return marketStateAt(market, this.now(), this.genesisSeconds);
  }

  pricing(market: MarketRecord): MarketPricing {
    return pricingAt(market, this.marketState(market), this.now(), this.genesisSeconds);
  }

  /**
   * Test hook: resolve a market now, whatever its schedule. `settleAfterSeconds` imitates the live
   * service's lag between a result and its settlement: until then winners are not `claimable` and a
   * claim answers market_not_settled.
   */
  resolveMarket(
    marketId: string,
    result: MarketResult,
    options: { readonly settleAfterSeconds?: number; readonly needsClaim?: boolean } = {},
  ): void {
    const market = this.requireMarket(marketId);
    const now = this.now();
    market.resolution = { result, resolveAt: now, settlesAt: now + (options.settleAfterSeconds ?? 0) };
    if (options.needsClaim === false) market.needsNoClaim = true;
    for (const listener of this.resolveListeners) listener(market);
  }

  /** When a resolved market settled (or will): its test resolution's, else its scheduled resolution. */
  settlementTime(market: MarketRecord): number | undefined {
    if (this.marketState(market).result === null) return undefined;
    return market.resolution?.settlesAt ?? market.resolveTime;
  }

  /**
   * When the service's own keepers claim a winner of this market, free: a day after settlement, as on
   * the live service. The world's past is a backlog they start on at genesis, so a market settled
   * before genesis is claimed a day after genesis (the generated claimable positions stay claimable
   * for a day of world time).
   */
  serviceClaimDueAt(market: MarketRecord): number | undefined {
    const settled = this.settlementTime(market);
    return settled === undefined
      ? undefined
      : Math.max(settled, this.genesisSeconds) + SERVICE_CLAIM_DELAY_SECONDS;
  }

  /** Winners the service's automatic claim is due to pay now (generated or opened since): unclaimed, unsold, due. */
  serviceClaimsDue(): PositionRecord[] {
    const now = this.now();
    return this.allPositions().filter((p) => {
      if (p.claimedAt !== undefined || p.closedAt !== undefined) return false;
      const market = this.marketOf(p);
      // Forecast markets pay their winners in their own settlement, not by a claim.
      if (market.forecast !== undefined) return false;
      const due = this.serviceClaimDueAt(market);
      return due !== undefined && now >= due && this.isWinning(p) && this.isSettled(market);
    });
  }

  /** Subscribes to markets resolved by `resolveMarket`; returns the unsubscribe function. */
  onResolved(listener: (market: MarketRecord) => void): () => void {
    this.resolveListeners.add(listener);
    return () => this.resolveListeners.delete(listener);
  }

  /** Test and operator hook: cancel a market now, whatever its schedule (it gets no result). */
  cancelMarket(marketId: string): void {
    const market = this.requireMarket(marketId);
    market.cancelledAt = this.now();
  }

  /**
   * Test hook: close a market ahead of its schedule; it stays unresolved until `resolveMarket` (or
   * its scheduled resolution). It shows `atSeconds` as its close time (default: the world's now).
   */
  closeMarket(marketId: string, atSeconds: number = this.now()): void {
    this.requireMarket(marketId).closedEarlyAt = Math.floor(atSeconds);
  }

  /** A resolved market's claims are possible (its settlement lag, if any, has passed). */
  isSettled(market: MarketRecord): boolean {
    const settlesAt = market.resolution?.settlesAt;
    return this.marketState(market).result !== null && (settlesAt === undefined || this.now() >= settlesAt);
  }

  /**
   * Test hook: set the yes price from now on. It holds there unless `drift` is true, in which case the
   * random walk continues from it.
   */
  setPrice(
    marketId: string,
    yesPriceMicroUsd: number,
    options: { readonly drift?: boolean; readonly halfSpreadMicro?: number } = {},
  ): void {
    if (!Number.isInteger(yesPriceMicroUsd) || yesPriceMicroUsd <= 0 || yesPriceMicroUsd >= ONE_USD_MICRO)
      throw new RangeError("yesPriceMicroUsd must be an integer strictly between 0 and 1000000");
    const market = this.requireMarket(marketId);
    if (options.halfSpreadMicro !== undefined) market.halfSpreadMicro = options.halfSpreadMicro;
    market.anchor = {
      minute: minuteOf(this.now(), this.genesisSeconds),
      priceMicro: yesPriceMicroUsd,
      hold: options.drift !== true,
    };
    market.walkCache = undefined;
  }

  private requireMarket(marketId: string): MarketRecord {
    const market = this.marketById.get(marketId);
    if (market === undefined) throw notFound("market", marketId, "marketId");
    return market;
  }

  // ---- positions ----

  positionsOfWallet(index: number): readonly PositionRecord[] {
    const start = this.positionsStartOf[index];
    const end = this.positionsStartOf[index + 1];
    if (start === undefined || end === undefined) return [];
    const opened = [...this.opened.values()].filter((p) => p.ownerIndex === index);
    return opened.length === 0
      ? this.positions.slice(start, end)
      : [...this.positions.slice(start, end), ...opened];
  }

  /** Generated positions, then those opened since. */
  allPositions(): readonly PositionRecord[] {
    return this.opened.size === 0 ? this.positions : [...this.positions, ...this.opened.values()];
  }

  /** Positions opened since genesis (the only ones Forecast markets have). */
  openedPositions(): readonly PositionRecord[] {
    return [...this.opened.values()];
  }

  positionAt(index: number): PositionRecord | undefined {
    return index < this.positions.length ? this.positions[index] : this.opened.get(index);
  }

  /** The index (hence the public key) a position opened by a build will have once it lands. */
  reservePositionIndex(): number {
    const index = this.nextOpenedIndex;
    this.nextOpenedIndex += 1;
    return index;
  }

  /**
   * Position keys carry their index (xor a per-seed mask) in the first four bytes, so a key is looked
   * up without a map of every key: 30,000 positions need no table at all.
   */
  positionPubkey(position: PositionRecord): string {
    if (position.pubkey === undefined) position.pubkey = this.positionKeyFor(position.index);
    return position.pubkey;
  }

  private positionKeyFor(index: number): string {
    const bytes = Buffer.from(seedBytes(`position:${index}`, this.seed));
    bytes.writeUInt32BE((index ^ this.positionMask) >>> 0, 0);
    return new PublicKey(bytes).toBase58();
  }

  findPosition(pubkey: string): PositionRecord | undefined {
    let bytes: Uint8Array;
    try {
      bytes = new PublicKey(pubkey).toBytes();
    } catch {
      return undefined;
    }
    const index = (Buffer.from(bytes).readUInt32BE(0) ^ this.positionMask) >>> 0;
    const position = this.positionAt(index);
    if (position === undefined || this.positionPubkey(position) !== pubkey) return undefined;
    return position;
  }

  ownerOf(position: PositionRecord): string {
    return this.walletPubkey(position.ownerIndex);
  }

  isWinning(position: PositionRecord): boolean {
    const { result } = this.marketState(this.marketOf(position));
    return result !== null && (result === "yes") === position.isYes;
  }

  /** A winner a claim may be built for: not one of a market that pays without a claim, nor a Forecast (bisonfi) market, which settles by itself. */
  isClaimable(position: PositionRecord): boolean {
    return (
      this.marketOf(position).needsNoClaim !== true &&
      this.marketOf(position).forecast === undefined &&
      position.claimedAt === undefined &&
      position.closedAt === undefined &&
      this.isWinning(position) &&
      this.isSettled(this.marketOf(position))
    );
  }

  // ---- effects of landed transactions ----

  /**
   * A claim landed: the payout was paid, the position is claimed. Repeats are ignored. `byService`: the
   * service's own automatic claim, which pays markets that need no claim too.
   */
  applyClaim(
    positionPubkey: string,
    landed: { readonly signature: string; readonly slot: number },
    byService = false,
  ): boolean {
    const position = this.findPosition(positionPubkey);
    if (position === undefined) return false;
    const isPayable = byService
      ? position.claimedAt === undefined &&
        position.closedAt === undefined &&
        this.isWinning(position) &&
        this.isSettled(this.marketOf(position))
      : this.isClaimable(position);
    if (!isPayable) return false;
    const payout = contractsTimes(position.contracts, ONE_USD_MICRO);
    position.claimedAt = this.now();
    position.claimedMicro = payout;
    position.claimSignature = landed.signature;
    this.pushLive({
      eventType: "payout_claimed",
      positionIndex: position.index,
      amountMicro: payout,
      feeMicro: 0,
      ...landed,
    });
    return true;
  }

  /** A buy landed: the position exists, bought at `avgPriceMicro`. Repeats are ignored. */
  applyOpen(
    position: PositionRecord,
    landed: { readonly signature: string; readonly slot: number },
  ): boolean {
    if (this.opened.has(position.index) || position.index < this.positions.length) return false;
    this.opened.set(position.index, position);
    this.pushLive({
      eventType: "order_filled",
      positionIndex: position.index,
      amountMicro: contractsTimes(position.contracts, position.avgPriceMicro),
      feeMicro: position.feesMicro,
      ...landed,
    });
    return true;
  }

  /** A Forecast winner was paid by the service's settlement: the position is settled (as claimed). */
  applySettle(
    positionPubkey: string,
    landed: { readonly signature: string; readonly slot: number },
  ): boolean {
    const position = this.findPosition(positionPubkey);
    if (position === undefined || position.claimedAt !== undefined || !this.isWinning(position)) return false;
    const payout = contractsTimes(position.contracts, ONE_USD_MICRO);
    position.claimedAt = this.now();
    position.claimedMicro = payout;
    position.claimSignature = landed.signature;
    this.pushLive({
      eventType: "payout_claimed",
      positionIndex: position.index,
      amountMicro: payout,
      feeMicro: 0,
      ...landed,
    });
    return true;
  }

  /**
   * A close landed: the contracts were sold for `proceedsMicro` (after `feeMicro`), the position is
   * gone. With `holdSells`, the sale waits for `releaseHeldSells` instead.
   */
  applyClose(positionPubkey: string, landed: ClosingSale): boolean {
    const position = this.findPosition(positionPubkey);
    if (position === undefined || !this.isOpenToSell(position)) return false;
    if (this.holdSells) {
      this.heldSells.set(positionPubkey, [...(this.heldSells.get(positionPubkey) ?? []), landed]);
      return true;
    }
    this.sell(position, landed);
    return true;
  }

  private isOpenToSell(position: PositionRecord): boolean {
    return position.closedAt === undefined && position.claimedAt === undefined;
  }

  private sell(position: PositionRecord, landed: ClosingSale): void {
    position.closedAt = this.now();
    position.closedProceedsMicro = landed.proceedsMicro;
    position.closeSignature = landed.signature;
    this.pushLive({
      eventType: "order_closed",
      positionIndex: position.index,
      amountMicro: landed.proceedsMicro,
      feeMicro: landed.feeMicro,
      signature: landed.signature,
      slot: landed.slot,
    });
  }

  /** How many landed closes of the position wait for their fill (`holdSells`). */
  heldSellsOf(positionPubkey: string): number {
    return this.heldSells.get(positionPubkey)?.length ?? 0;
  }

  /** Whether a landed close of the position waits for its fill: an open order of the position. */
  hasHeldSell(position: PositionRecord): boolean {
    return this.heldSells.size > 0 && this.heldSells.has(this.positionPubkey(position));
  }

  /**
   * Test hook: the service's keepers act on the held sells. `filled`: each position is sold by its
   * first held sell (a later one finds nothing left to sell); `failed`: the sells fail and the
   * positions stay open, with no order on them. Sells that land afterwards are held while
   * `holdSells` is still set.
   */
  releaseHeldSells(outcome: "filled" | "failed"): void {
    const held = [...this.heldSells];
    this.heldSells.clear();
    if (outcome === "failed") return;
    for (const [positionPubkey, [first]] of held) {
      const position = this.findPosition(positionPubkey);
      if (first && position && this.isOpenToSell(position)) this.sell(position, first);
    }
  }

  /** A trigger or recurring creation landed: the order exists. */
  applyOrderCreated(order: Omit<SwapOrderRecord, "status" | "createdAt">): void {
    if (this.swapOrders.has(order.order)) return;
    this.swapOrders.set(order.order, { ...order, status: "open", createdAt: this.now() });
  }

  /** A trigger or recurring cancel landed: the order is cancelled. */
  applyOrderCancelled(orderPubkey: string, signature?: string): boolean {
    const order = this.swapOrders.get(orderPubkey);
    if (order === undefined || !isCancellable(order)) return false;
    order.status = "cancelled";
    order.cancelledAt = this.now();
    order.closedAt = order.cancelledAt;
    if (signature !== undefined) order.closeSignature = signature;
    return true;
  }

  /**
   * Test hook: the service finished an open order by itself: a trigger order `filled` or `expired`, a
   * recurring order `completed`. A fill or completion trades the escrow for the output (`onOrderFilled`:
   * a trigger order's takingAmount, a recurring order's deposit at today's prices); an expired trigger
   * order keeps its escrow and may still be cancelled for its deposit.
   */
  settleOrder(orderPubkey: string, status: "filled" | "completed" | "expired"): void {
    const order = this.swapOrders.get(orderPubkey);
    if (order === undefined) throw notFound("order", orderPubkey, "order");
    if (order.status !== "open") throw new RangeError(`order ${orderPubkey} is ${order.status}, not open`);
    const allowed = order.kind === "trigger" ? ["filled", "expired"] : ["completed"];
    if (!allowed.includes(status))
      throw new RangeError(`a ${order.kind} order cannot become ${status} (allowed: ${allowed.join(", ")})`);
    order.status = status;
    order.closedAt = this.now();
    if (status === "expired") return;
    const outAmountRaw =
      order.outAmountRaw ?? this.tokens.rawWorth(order.inputMint, order.inAmountRaw, order.outputMint);
    for (const listener of this.fillListeners) listener(order, outAmountRaw);
  }

  /** Subscribes to fills and completions (see settleOrder); returns the unsubscribe function. */
  onOrderFilled(listener: (order: SwapOrderRecord, outAmountRaw: bigint) => void): () => void {
    this.fillListeners.add(listener);
    return () => this.fillListeners.delete(listener);
  }

  private pushLive(entry: Omit<LiveHistoryEntry, "id" | "timestamp">): void {
    const id = this.positions.length * HISTORY_IDS_PER_POSITION + this.liveHistory.length + 1;
    this.liveHistory.push({ ...entry, id, timestamp: this.now() });
  }

  /** The slot layout of the first wallets, for tests that look for a state by position. */
  static readonly richTemplate = RICH_TEMPLATE;
}

/** Open orders may be cancelled; so may an expired trigger order, whose deposit is still escrowed. */
export function isCancellable(order: SwapOrderRecord): boolean {
  return order.status === "open" || (order.kind === "trigger" && order.status === "expired");
}

export function createWorld(options: WorldOptions = {}): World {
  return new World(options);
}
