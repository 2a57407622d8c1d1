import type { Logger } from "pino";
import { PermanentApiError } from "../../api/errors.js";
import type { ConfiguredStrategy } from "../../config/load-config.js";
import { holdsContracts } from "../../core/contracts.js";
import type { EventDetails } from "../../core/event-details.js";
import type { Intent } from "../../core/intent.js";
import type { Position } from "../../core/schemas/prediction.js";
import type { StrategyState } from "../../core/strategy.js";
import { type CloseCheck, closeCheckSchema } from "../../core/strategy-hooks.js";
import { deepFreeze } from "./run-strategies.js";

/**
 * Read before selling: a close is decided on a poll's list, read up to a minute before the build.
 * Right before building it, the position is read alone (GET /positions/{positionPubkey}, as the
 * service's own client does) and the close is dropped when the position is no longer open (sold,
 * claimable, its market closed, nothing left) or when the strategy that asked for it says, on the
 * fresh figures, that its rule no longer holds (its `closeStillDue` hook). A claim needs no read:
 * its build is the service's own check.
 */

type CloseIntent = Extract<Intent, { kind: "close" }>;

/** Why a close was dropped: the metric's label. */
export const CLOSE_DROP_REASONS = ["not_found", "not_open", "rule_not_met"] as const;
export type CloseDropReason = (typeof CLOSE_DROP_REASONS)[number];

export type CloseVerdict = { isDue: true } | { isDue: false; reason: CloseDropReason; detail: string };

export interface ReadBeforeCloseDeps {
  /** The position as the service reads it now; undefined when it answers 404. */
  readPosition(positionPubkey: string): Promise<Position | undefined>;
  readonly strategies: readonly ConfiguredStrategy[];
  /** The strategy's state as its last poll left it. */
  loadState(wallet: string, strategy: string): Promise<StrategyState>;
  /** Details of the position's event, for strategies that need them; undefined when unread. */
  eventOf?(position: Position): Promise<EventDetails | undefined>;
  now(): Date;
  logger: Logger;
  onStrategyError?(strategy: string): void;
}

/** GET /positions/{pubkey} through a client: a 404 is "no such position", anything else is thrown. */
export function positionReader(
  getPosition: (positionPubkey: string) => Promise<Position>,
): (positionPubkey: string) => Promise<Position | undefined> {
  return async (positionPubkey) => {
    try {
      return await getPosition(positionPubkey);
    } catch (error) {
      if (error instanceof PermanentApiError && error.status === 404) return undefined;
      throw error;
    }
  };
}

export async function closeStillDue(intent: CloseIntent, deps: ReadBeforeCloseDeps): Promise<CloseVerdict> {
  const position = await deps.readPosition(intent.positionPubkey);
  if (position === undefined)
    return { isDue: false, reason: "not_found", detail: "the service no longer knows the position (sold)" };
  const closed = whyNotOpen(position, intent.wallet);
  if (closed !== undefined) return { isDue: false, reason: "not_open", detail: closed };
  const check = await askStrategy(intent, position, deps);
  return check.isDue ? { isDue: true } : { isDue: false, reason: "rule_not_met", detail: check.reason };
}

/** Undefined while the position can still be sold by this wallet. */
function whyNotOpen(position: Position, wallet: string): string | undefined {
  if (position.ownerPubkey !== wallet) return "the position belongs to another wallet";
  if (position.claimed) return "the position is claimed";
  if (position.claimable) return "the position is claimable: it is claimed, not sold";
  const status = position.marketMetadata.status;
  if (status !== undefined && status !== "open") return `its market is ${status}`;
  if (!holdsContracts(position) && BigInt(position.sizeUsd) === 0n) return "no contracts are left";
  return undefined;
}

/**
 * The strategy's own verdict through its hook, called as `evaluate` is: on frozen copies, its throw caught
 * and counted, its answer checked. A strategy without the hook, or one that fails, leaves the close
 * due: it decided on the poll, and the read found the position still open.
 */
async function askStrategy(
  intent: CloseIntent,
  position: Position,
  deps: ReadBeforeCloseDeps,
): Promise<CloseCheck> {
  const configured = deps.strategies.find((entry) => entry.name === intent.strategy);
  const hook = configured?.strategy.closeStillDue;
  if (configured === undefined || hook === undefined) return { isDue: true, reason: "no check of its own" };
  const state = await deps.loadState(intent.wallet, intent.strategy);
  const event = await deps.eventOf?.(position);
  try {
    const answer = hook(
      deepFreeze({
        config: structuredClone(configured.config),
        position: structuredClone(position),
        state: structuredClone(state),
        ...(intent.exitRule === undefined ? {} : { exitRule: intent.exitRule }),
        nowSeconds: Math.floor(deps.now().getTime() / 1000),
        ...(event === undefined ? {} : { event: structuredClone(event) }),
      }),
    );
    return closeCheckSchema.parse(answer);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    deps.logger.error(
      { strategy: intent.strategy, err: message },
      "closeStillDue failed: the close stays due",
    );
    deps.onStrategyError?.(intent.strategy);
    return { isDue: true, reason: "the strategy's check failed" };
  }
}
