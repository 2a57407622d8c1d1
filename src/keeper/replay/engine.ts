import type { Logger } from "pino";
import type { ConfiguredStrategy } from "../../config/load-config.js";
import { contractsMicroOf } from "../../core/contracts.js";
import type { Intent } from "../../core/intent.js";
import type { Position } from "../../core/schemas/prediction.js";
import type { Snapshot } from "../../core/snapshot.js";
import type { StrategyState } from "../../core/strategy.js";
import { runStrategies } from "../pipeline/run-strategies.js";
import { claimPayout, type HeldValue, heldValue, sellFill } from "./fill-model.js";
import type { RecordedPoll } from "./read-recording.js";

/** A sell the replay filled: when, at what, and what holding the position instead was worth. */
export interface ReplayExit {
  readonly at: number;
  readonly wallet: string;
  readonly strategy: string;
  /** The exit rule that fired (`take-profit`...), or the intent's kind (`close-all`) when none names one. */
  readonly rule: string;
  readonly reason: string;
  readonly position: string;
  readonly marketId: string;
  readonly isYes: boolean;
  readonly contractsMicro: bigint;
  readonly bid: bigint;
  readonly gross: bigint;
  readonly fees: bigint;
  readonly net: bigint;
  readonly cost: bigint;
  readonly held: HeldValue;
}

export interface ReplayClaim {
  readonly at: number;
  readonly wallet: string;
  readonly strategy: string;
  readonly position: string;
  readonly payout: bigint;
}

/** A sell asked for and not filled (no bid, under $5), counted once per position and rule. */
export interface ReplayUnfilled {
  readonly firstAt: number;
  readonly wallet: string;
  readonly strategy: string;
  readonly rule: string;
  readonly position: string;
  readonly why: string;
  polls: number;
}

export interface ReplayResult {
  readonly polls: number;
  readonly wallets: readonly string[];
  readonly from?: number;
  readonly to?: number;
  readonly exits: readonly ReplayExit[];
  readonly claims: readonly ReplayClaim[];
  readonly unfilled: readonly ReplayUnfilled[];
  /** Intents the fill model does not simulate (orders, swaps), by `strategy kind`, counted. */
  readonly notSimulated: Readonly<Record<string, number>>;
  /** Strategy failures by `strategy: message`, counted. */
  readonly errors: Readonly<Record<string, number>>;
}

export interface ReplayInput {
  readonly polls: readonly RecordedPoll[];
  readonly strategies: readonly ConfiguredStrategy[];
  /** Where the strategies' notices and failures are logged (the CLI passes a silent one). */
  readonly logger: Logger;
}

interface WalletState {
  readonly states: Map<string, StrategyState>;
  /** Positions the replay sold or claimed: gone from this wallet's later snapshots. */
  readonly gone: Set<string>;
}

/**
 * Runs the strategies over a recording, poll by poll in time order, with the same code a live poll
 * runs (`runStrategies`), the recorded time as the clock, and each wallet's state following the
 * replay's own fills. A decision at a poll reads that poll's line and the state built from earlier
 * ones: nothing recorded later. Only `heldValue`, for the report, looks at a position's last line.
 */
export function replay(input: ReplayInput): ReplayResult {
  const book = new FillBook(lastLineOfEachPosition(input.polls));
  const wallets = new Map<string, WalletState>();
  for (const { line } of input.polls) {
    let wallet = wallets.get(line.wallet);
    if (wallet === undefined) {
      wallet = { states: new Map(), gone: new Set() };
      wallets.set(line.wallet, wallet);
    }
    const positions = line.positions.filter((p) => !wallet.gone.has(p.pubkey));
    const report = runStrategies({
      snapshot: snapshotOf(line, positions),
      strategies: input.strategies,
      states: wallet.states,
      now: new Date(line.at * 1000),
      logger: input.logger,
    });
    for (const [name, state] of report.states) wallet.states.set(name, state);
    for (const { strategy, error } of report.errors) count(book.errors, `${strategy}: ${error}`);
    for (const intent of report.intents)
      book.fill(intent, { at: line.at, wallet: line.wallet, positions, gone: wallet.gone });
  }
  const times = input.polls.map(({ line }) => line.at);
  return {
    polls: input.polls.length,
    wallets: [...wallets.keys()].sort(),
    ...(times.length > 0 ? { from: times[0], to: times[times.length - 1] } : {}),
    exits: book.exits,
    claims: book.claims,
    unfilled: [...book.unfilled.values()],
    notSimulated: book.notSimulated,
    errors: book.errors,
  };
}

/** A recorded poll as the snapshot a live poll would have handed its strategies; nothing in flight. */
function snapshotOf(line: RecordedPoll["line"], positions: readonly Position[]): Snapshot {
  return {
    wallet: line.wallet,
    takenAt: line.at,
    positions,
    openOrders: [],
    inFlight: [],
    balances: {},
    ...(line.events ? { events: line.events } : {}),
  };
}

/** The poll an intent is filled at: its time, wallet, the positions its strategies saw. */
interface FillContext {
  readonly at: number;
  readonly wallet: string;
  readonly positions: readonly Position[];
  /** The wallet's positions already sold or claimed; a fill adds to it. */
  readonly gone: Set<string>;
}

/** What the fill model made of the strategies' intents, in the order they were asked for. */
class FillBook {
  readonly exits: ReplayExit[] = [];
  readonly claims: ReplayClaim[] = [];
  readonly unfilled = new Map<string, ReplayUnfilled>();
  readonly notSimulated: Record<string, number> = {};
  readonly errors: Record<string, number> = {};

  constructor(private readonly lastSeen: ReadonlyMap<string, Position>) {}

  fill(intent: Intent, ctx: FillContext): void {
    const held = (pubkey: string) => ctx.positions.find((p) => p.pubkey === pubkey && !ctx.gone.has(pubkey));
    if (intent.kind === "close") {
      const position = held(intent.positionPubkey);
      if (position) this.sell(intent, position, intent.exitRule ?? "close", intent.reason ?? "close", ctx);
    } else if (intent.kind === "closeAll") {
      for (const position of ctx.positions.filter(isSellable))
        if (!ctx.gone.has(position.pubkey))
          this.sell(intent, position, "close-all", intent.reason ?? "close-all", ctx);
    } else if (intent.kind === "claim") {
      const position = held(intent.positionPubkey);
      if (position === undefined) return;
      ctx.gone.add(position.pubkey);
      const { at, wallet } = ctx;
      this.claims.push({
        at,
        wallet,
        strategy: intent.strategy,
        position: position.pubkey,
        payout: claimPayout(position),
      });
    } else count(this.notSimulated, `${intent.strategy} ${intent.kind}`);
  }

  private sell(intent: Intent, position: Position, rule: string, reason: string, ctx: FillContext): void {
    const filled = sellFill(position);
    if (!filled.filled) {
      const key = `${ctx.wallet} ${position.pubkey} ${intent.strategy} ${rule}`;
      const seen = this.unfilled.get(key);
      if (seen) seen.polls += 1;
      else
        this.unfilled.set(key, {
          firstAt: ctx.at,
          wallet: ctx.wallet,
          strategy: intent.strategy,
          rule,
          position: position.pubkey,
          why: filled.why,
          polls: 1,
        });
      return;
    }
    ctx.gone.add(position.pubkey);
    this.exits.push({
      at: ctx.at,
      wallet: ctx.wallet,
      strategy: intent.strategy,
      rule,
      reason,
      position: position.pubkey,
      marketId: position.marketId,
      isYes: position.isYes,
      contractsMicro: contractsMicroOf(position),
      bid: filled.bid,
      gross: filled.gross,
      fees: filled.fees,
      net: filled.net,
      cost: /^\d+$/.test(position.totalCostUsd) ? BigInt(position.totalCostUsd) : 0n,
      held: heldValue(this.lastSeen.get(position.pubkey) ?? position),
    });
  }
}

/** Each position's last recorded line (its resolution, when the recording reached it). */
function lastLineOfEachPosition(polls: readonly RecordedPoll[]): Map<string, Position> {
  const last = new Map<string, Position>();
  for (const { line } of polls) for (const position of line.positions) last.set(position.pubkey, position);
  return last;
}

/** What a close-all sells: open, not settled, something held. */
function isSellable(position: Position): boolean {
  return (
    !position.claimed &&
    !position.claimable &&
    position.marketMetadata.status === "open" &&
    contractsMicroOf(position) > 0n
  );
}

function count(counts: Record<string, number>, key: string): void {
  counts[key] = (counts[key] ?? 0) + 1;
}
