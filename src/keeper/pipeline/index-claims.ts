import type { Queue } from "bullmq";
import type { Logger } from "pino";
import type { ConfiguredStrategy } from "../../config/load-config.js";
import { type Intent, intentSchema } from "../../core/intent.js";
import type { Market } from "../../core/schemas/prediction.js";
import type { IndexClaim, IndexedWinner } from "../../core/strategy-hooks.js";
import { BUILD_PRIORITY, type RecordTry } from "../names.js";
import { isHeldBackByBreakers } from "../operator/circuit-breakers.js";
import { enqueueBuilds } from "../queues/enqueue.js";
import type { ActionJobData } from "../queues/queues.js";
import type { Holding } from "../state/holdings.js";
import { type AdmitResult, type Ledger, notAdmittedReason } from "../state/ledger.js";
import { admissionStatus, isLeftToService } from "./poll-worker.js";
import { frozenCopy } from "./run-strategies.js";

/**
 * What became of one indexed winner: `claimed` (its claim admitted and queued for its build),
 * `left_to_service` (recorded, nothing built), `not_admitted` (the ledger has its key: in flight or
 * done, e.g. a poll got there first), `nothing` (no strategy asks for a claim) or `polled` (the index
 * could not say: its wallet is polled as before).
 */
export type IndexClaimOutcome = "claimed" | "left_to_service" | "not_admitted" | "nothing" | "polled";

export interface IndexClaimDeps {
  mode: "live" | "dry-run";
  strategies: readonly ConfiguredStrategy[];
  ledger: Ledger;
  actions: Queue<ActionJobData>;
  logger: Logger;
  /** What one claim costs now (micro-USD), for the strategies that need it (`needs().claimCost`). */
  claimCost?: { microUsd(): Promise<string> };
  events?: {
    onOutcome?(outcome: IndexClaimOutcome, strategy?: string): void;
    onStrategyError?(strategy: string): void;
    /** Seconds from the watcher seeing the resolution to a claim admitted (the reaction metric). */
    onClaimAdmitted?(seconds: number): void;
  };
  now?: () => number;
}

/**
 * Claims from the holdings index: when a market resolves, each winner's claim is decided from its
 * index entry by the strategies' `claimFromIndex` hook, admitted to the ledger under the key a poll
 * would use (so a sweep that sees the same winner adds nothing) and built: one request per winner,
 * no read of the wallet's positions. The service's build is the check: a claim asked too early is
 * answered market_not_settled and deferred, one that needs no transaction is settled.
 */
export class IndexClaims {
  private readonly hooked: readonly ConfiguredStrategy[];

  constructor(private readonly deps: IndexClaimDeps) {
    this.hooked = deps.strategies.filter((s) => s.strategy.claimFromIndex !== undefined);
  }

  /** One wallet's winners of one resolved market: `claimMany` with one item. */
  async claim(market: Market, winners: readonly Holding[], seenAtMs: number): Promise<boolean> {
    return (await this.claimMany([{ market, winners }], seenAtMs))[0] ?? false;
  }

  /**
   * The winners of resolved markets a watcher cycle saw, one item per wallet and market. Per item, in
   * order: true when they were dealt with from the index; false when the wallet must be polled
   * instead (no strategy has the hook, one cannot decide from an entry, or fails): then nothing of it
   * was admitted, and the poll decides everything as before. The admissions of all items go to the
   * ledger in one round trip, and their builds to the queue in another.
   */
  async claimMany(
    items: readonly { market: Market; winners: readonly Holding[] }[],
    seenAtMs: number,
  ): Promise<boolean[]> {
    // Claims are never held back by a breaker today; should they be, the poll applies the breakers.
    if (this.hooked.length === 0 || isHeldBackByBreakers("claim")) return items.map(() => false);
    const claimCostMicroUsd = items.some((item) => item.winners.length > 0)
      ? await this.deps.claimCost?.microUsd()
      : undefined;
    const intents = new Map<string, Intent>();
    const decisions = items.map(({ market, winners }) => {
      const decided = this.decideWallet(market, winners, claimCostMicroUsd);
      for (const intent of decided ?? []) if (!intents.has(intent.key)) intents.set(intent.key, intent);
      return decided;
    });
    const unrecorded = await this.admitAll([...intents.values()], seenAtMs);
    // A wallet one of whose claims Redis failed to record is polled: the poll asks for it again.
    return decisions.map(
      (decided) => decided !== undefined && !decided.some((intent) => unrecorded.has(intent.key)),
    );
  }

  /** One wallet's intents for its winners of one market; undefined when one of them cannot be decided. */
  private decideWallet(
    market: Market,
    winners: readonly Holding[],
    claimCostMicroUsd: string | undefined,
  ): Intent[] | undefined {
    if (winners.length === 0) return undefined;
    const out: Intent[] = [];
    for (const holding of winners) {
      const decided = this.decide(market, holding, claimCostMicroUsd);
      if (decided === undefined) {
        this.deps.events?.onOutcome?.("polled");
        return undefined;
      }
      if (decided.length === 0) this.deps.events?.onOutcome?.("nothing");
      out.push(...decided);
    }
    return out;
  }

  /** Every hooked strategy's intents for one winner; undefined when one of them cannot decide. */
  private decide(
    market: Market,
    holding: Holding,
    claimCostMicroUsd: string | undefined,
  ): Intent[] | undefined {
    const entry: IndexedWinner = {
      wallet: holding.wallet,
      position: holding.position,
      marketId: holding.marketId,
      eventId: holding.eventId,
      side: holding.side,
      ...(holding.contractsMicro !== undefined ? { contractsMicro: holding.contractsMicro } : {}),
      costUsd: holding.costUsd,
    };
    const out: Intent[] = [];
    for (const { name, strategy, config } of this.hooked) {
      let answer: IndexClaim | undefined;
      try {
        answer = strategy.claimFromIndex?.(
          frozenCopy({
            config,
            entry,
            market,
            nowSeconds: Math.floor((this.deps.now?.() ?? Date.now()) / 1000),
            ...(claimCostMicroUsd !== undefined ? { claimCostMicroUsd } : {}),
          }),
        );
        if (answer === undefined) return undefined;
        const intent = checkAnswer(answer, name, entry);
        if (intent) out.push({ ...intent, expectedPayoutFrom: "index" });
      } catch (error) {
        this.deps.logger.error(
          { strategy: name, wallet: entry.wallet, position: entry.position, err: (error as Error).message },
          "claimFromIndex failed: the wallet is polled instead",
        );
        this.deps.events?.onStrategyError?.(name);
        return undefined;
      }
    }
    return out;
  }

  /**
   * Admits every intent in one round trip, then queues the builds of those admitted in another.
   * Answers the keys whose admission Redis failed (nothing of theirs is queued).
   */
  private async admitAll(intents: readonly Intent[], seenAtMs: number): Promise<Set<string>> {
    const { deps } = this;
    const results = await deps.ledger.admitMany(
      intents.map((intent) => ({ intent, status: admissionStatus(intent, deps.mode) })),
    );
    const unrecorded = new Set<string>();
    const builds: { intentKey: string; at: RecordTry; build: number }[] = [];
    for (const [i, intent] of intents.entries()) {
      const result = results[i] as AdmitResult | Error;
      const log = deps.logger.child({ wallet: intent.wallet, intent: intent.key, strategy: intent.strategy });
      if (result instanceof Error) {
        unrecorded.add(intent.key);
        log.warn({ err: result.message }, "index claim not recorded: its wallet is polled instead");
        continue;
      }
      if (!result.admitted) {
        const owner = result.owner;
        const reason = notAdmittedReason(result.status, owner !== undefined && owner !== intent.wallet);
        log.debug({ status: result.status, reason }, "index claim not admitted");
        deps.events?.onOutcome?.("not_admitted", intent.strategy);
        continue;
      }
      if (isLeftToService(intent)) {
        if (intent.expectedPayoutMicroUsd !== undefined)
          await deps.ledger.update(intent.key, { amountMicroUsd: intent.expectedPayoutMicroUsd });
        deps.events?.onOutcome?.("left_to_service", intent.strategy);
        log.info({ reason: intent.reason }, "claim from the index left to the service's free claim");
        continue;
      }
      deps.events?.onOutcome?.("claimed", intent.strategy);
      deps.events?.onClaimAdmitted?.(((deps.now?.() ?? Date.now()) - seenAtMs) / 1000);
      log.info({ mode: deps.mode }, "claim from the index recorded");
      if (deps.mode === "live")
        builds.push({
          intentKey: intent.key,
          at: { tries: result.tries ?? 1, recordId: result.recordId },
          build: 1,
        });
    }
    if (builds.length > 0) await enqueueBuilds(deps.actions, builds, BUILD_PRIORITY.indexClaim);
    return unrecorded;
  }
}

/**
 * A hook's answer, checked as `evaluate`'s intents are: a claim of the entry's own position, by the
 * entry's wallet, under the strategy's own name. Anything else is the strategy's error.
 */
function checkAnswer(
  answer: unknown,
  strategy: string,
  entry: IndexedWinner,
): Extract<Intent, { kind: "claim" }> | undefined {
  if (answer === null || typeof answer !== "object")
    throw new TypeError("claimFromIndex() must return { intent?, reason? } or undefined");
  const candidate = (answer as IndexClaim).intent;
  if (candidate === undefined) return undefined;
  const parsed = intentSchema.safeParse(candidate);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new TypeError(`intent.${issue?.path.join(".") ?? ""}: ${issue?.message ?? "invalid intent"}`);
  }
  const intent = parsed.data;
  if (intent.kind !== "claim") throw new TypeError(`intent.kind: expected "claim", got "${intent.kind}"`);
  if (intent.positionPubkey !== entry.position)
    throw new TypeError("intent.positionPubkey: not the indexed position");
  if (intent.wallet !== entry.wallet) throw new TypeError("intent.wallet: not the indexed position's wallet");
  if (intent.strategy !== strategy)
    throw new TypeError(`intent.strategy: expected "${strategy}", got "${intent.strategy}"`);
  return intent;
}
