import { closeMinimumMicroUsd } from "../../chain/inflow-rules.js";
import {
  type PriorityFeeSettings,
  priorityFeePrice,
  type RecentPriorityFees,
} from "../../chain/priority-fee.js";
import { PermanentError } from "../../core/errors.js";
import type { Intent } from "../../core/intent.js";
import {
  blockHeightOf,
  type ClaimPreview,
  type CloseAllItem,
  type ClosePreview,
} from "../../core/schemas/prediction.js";
import type {
  RecurringCancelBody,
  RecurringCancelResponse,
  RecurringCreateBody,
  RecurringCreateResponse,
} from "../../core/schemas/recurring.js";
import type { SwapBuildResponse } from "../../core/schemas/swap.js";
import type {
  TriggerCancelBody,
  TriggerCancelResponse,
  TriggerCreateBody,
  TriggerCreateResponse,
} from "../../core/schemas/trigger.js";
import type { SwapQuote } from "../../core/swap-quote.js";
import { assembleSwap, type SimulateUnits } from "./assemble-swap.js";

/** The service calls a build needs; the API client provides them. */
export interface BuildApi {
  claimPosition(positionPubkey: string, body: { ownerPubkey: string }): Promise<ClaimPreview>;
  /** The live service takes the owner only: a close sells at the market's sell price. */
  closePosition(positionPubkey: string, body: { ownerPubkey: string }): Promise<ClosePreview>;
  createTriggerOrder(body: TriggerCreateBody): Promise<TriggerCreateResponse>;
  cancelTriggerOrder(body: TriggerCancelBody): Promise<TriggerCancelResponse>;
  createRecurringOrder(body: RecurringCreateBody): Promise<RecurringCreateResponse>;
  cancelRecurringOrder(body: RecurringCancelBody): Promise<RecurringCancelResponse>;
  /** GET /swap/v2/build: the instructions of a swap, assembled here into a v0 transaction. */
  buildSwap?(params: {
    inputMint: string;
    outputMint: string;
    amount: string;
    taker: string;
    slippageBps?: number;
  }): Promise<SwapBuildResponse>;
  /** Simulation for the swap's compute-unit limit (an RPC call). */
  simulateUnits?: SimulateUnits;
  /**
   * DELETE /positions: one close per open position of the owner, and one claim per winning one
   * (close-all fans out through it). The slippage is required by the live service.
   */
  closeAllPositions?(body: {
    ownerPubkey: string;
    minSellPriceSlippageBps: number;
  }): Promise<{ data: CloseAllItem[] }>;
}

export interface BuiltTransaction {
  transaction: string;
  /** From the service's txMeta where it gives one; otherwise the signer reads the chain's. */
  lastValidBlockHeight?: number;
  /** Trigger and recurring transactions go to the area's execute endpoint with this id. */
  requestId?: string;
  /** Money the intent expects to bring in, for the ledger and metrics. */
  amountMicroUsd?: string;
  /** The fee the service estimated for it (a sell's), for the ledger and the status page's totals. */
  feeMicroUsd?: string;
  /** The least the transaction may bring in, raw units: a swap's threshold, a close's minimum (the signer checks it). */
  minInflowRaw?: string;
  /** The order account a create built, for the ledger (the live service may leave it out). */
  order?: string;
  /** A swap's quote, for the signer's floor (it checks it against the intent and the service's prices). */
  swapQuote?: SwapQuote;
  /** The compute-unit price Keeper asked for (micro-lamports), where the build takes one. */
  computeUnitPrice?: number;
  /** Where the service wants the signed transaction back (a sell's or an order's build), if anywhere. */
  execution?: ExecutionRoute | null;
}

/**
 * What a build that opens or sells says of its way to the chain (api-live), as the ledger keeps it
 * for the signer, which trusts none of it: it checks the signers against its own list and sends to
 * its own configured service, never to the endpoint named here.
 */
export interface ExecutionRoute {
  endpoint: string;
  context: Record<string, unknown>;
  executionModel: string | null;
  settlement: string | null;
  requiredSigners: string[];
}

/** The build's execution fields, or null when it names no execution (an older answer, a claim). */
export function executionRouteOf(preview: ClosePreview): ExecutionRoute | null {
  if (!preview.execution) return null;
  return {
    endpoint: preview.execution.endpoint,
    context: { ...preview.execution.context },
    executionModel: preview.executionModel ?? null,
    settlement: preview.settlement ?? null,
    requiredSigners: [...(preview.requiredSigners ?? [])],
  };
}

/** How Keeper prices the builds that take a compute-unit price. */
export interface PriorityFees {
  recent: RecentPriorityFees;
  settings: PriorityFeeSettings;
}

export interface BuildOptions {
  /** 1 for the first build of the intent, +1 per rebuild after an expiry: the bid rises with it. */
  build: number;
  /** Without it, the service (or the swap build) picks the price. */
  priorityFees?: PriorityFees;
}

/**
 * The accounts the intent is known to write before it is built: the wallet (fee payer), and the
 * position or order it acts on. The fee market is per writable account, so these are the ones whose
 * recent fees tell what landing costs.
 */
export function knownWritableAccounts(intent: Intent): string[] {
  switch (intent.kind) {
    case "claim":
    case "close":
      return [intent.wallet, intent.positionPubkey];
    case "cancelTrigger":
    case "cancelRecurring":
      return [intent.wallet, intent.order];
    default:
      return [intent.wallet];
  }
}

/** Samples the recent fees once; answers the price for a unit limit (none: the build's is not known). */
async function priceFor(
  intent: Intent,
  options: BuildOptions,
): Promise<((unitLimit?: number) => number) | undefined> {
  const fees = options.priorityFees;
  if (!fees) return undefined;
  const samples = await fees.recent(knownWritableAccounts(intent));
  return (unitLimit) =>
    priorityFeePrice({
      samples,
      build: options.build,
      settings: fees.settings,
      ...(unitLimit !== undefined ? { unitLimit } : {}),
    });
}

/**
 * A claim's build must be the claim asked for. Another winning position of the same wallet also pays
 * the wallet, so the signer's inflow rule would pass it: recorded as this claim, it would leave the
 * position asked for unclaimed yet marked confirmed, and the other's own claim failing later.
 */
function checkClaimNamesIntent(
  position: { positionPubkey: string; ownerPubkey: string },
  intent: Extract<Intent, { kind: "claim" }>,
): void {
  if (position.positionPubkey !== intent.positionPubkey)
    throw new PermanentError(
      `claim build: position.positionPubkey ${position.positionPubkey} is not the position asked for (${intent.positionPubkey})`,
    );
  if (position.ownerPubkey !== intent.wallet)
    throw new PermanentError(
      `claim build: position.ownerPubkey ${position.ownerPubkey} is not the wallet asked for (${intent.wallet})`,
    );
}

/**
 * A close's build must sell the position asked for: another position of the same wallet also pays the
 * wallet, so the signer's inflow rule would pass its sell. Compared: the OrderPreview's
 * `positionPubkey`. Its `userPubkey` is not: a claim's build carries both `userPubkey` and
 * `ownerPubkey`, so on the live service the "user" may be an account of the program's, not the wallet,
 * and refusing on it could stop every exit. The wallet's own part is the signer's to check (a signer,
 * the inflow to its accounts).
 */
function checkCloseNamesIntent(
  order: { positionPubkey: string },
  intent: Extract<Intent, { kind: "close" }>,
): void {
  if (order.positionPubkey !== intent.positionPubkey)
    throw new PermanentError(
      `close build: order.positionPubkey ${order.positionPubkey} is not the position asked for (${intent.positionPubkey})`,
    );
}

/** Asks the service for the unsigned transaction that carries out an intent. */
export async function buildTransaction(
  api: BuildApi,
  intent: Intent,
  options: BuildOptions = { build: 1 },
): Promise<BuiltTransaction> {
  switch (intent.kind) {
    case "claim": {
      const built = await api.claimPosition(intent.positionPubkey, { ownerPubkey: intent.wallet });
      checkClaimNamesIntent(built.position, intent);
      return {
        transaction: built.transaction,
        lastValidBlockHeight: blockHeightOf(built.txMeta.lastValidBlockHeight),
        amountMicroUsd: built.position.payoutAmountUsd,
      };
    }
    case "close": {
      // The close-one body is the owner only on the live service; an intent's slippage applies to
      // the closes a close-all builds (DELETE /positions), not to this one.
      const built = await api.closePosition(intent.positionPubkey, { ownerPubkey: intent.wallet });
      checkCloseNamesIntent(built.order, intent);
      return {
        transaction: built.transaction,
        lastValidBlockHeight: blockHeightOf(built.txMeta.lastValidBlockHeight),
        amountMicroUsd: closeProceedsMicroUsd(built),
        feeMicroUsd: closeFeeMicroUsd(built),
        minInflowRaw: closeMinimumMicroUsd(built.order),
        execution: executionRouteOf(built),
      };
    }
    case "createTrigger": {
      const price = (await priceFor(intent, options))?.();
      const built = await api.createTriggerOrder({
        inputMint: intent.inputMint,
        outputMint: intent.outputMint,
        maker: intent.wallet,
        payer: intent.wallet,
        params: {
          makingAmount: intent.makingAmount,
          takingAmount: intent.takingAmount,
          ...(intent.expiredAt !== undefined ? { expiredAt: String(intent.expiredAt) } : {}),
          ...(intent.slippageBps !== undefined ? { slippageBps: String(intent.slippageBps) } : {}),
        },
        ...(price !== undefined ? { computeUnitPrice: String(price) } : {}),
      });
      return {
        transaction: built.transaction,
        requestId: built.requestId,
        order: built.order,
        ...(price !== undefined ? { computeUnitPrice: price } : {}),
      };
    }
    case "cancelTrigger": {
      const price = (await priceFor(intent, options))?.();
      const built = await api.cancelTriggerOrder({
        maker: intent.wallet,
        order: intent.order,
        ...(price !== undefined ? { computeUnitPrice: String(price) } : {}),
      });
      return {
        transaction: built.transaction,
        requestId: built.requestId,
        ...(price !== undefined ? { computeUnitPrice: price } : {}),
      };
    }
    case "createRecurring": {
      const built = await api.createRecurringOrder({
        user: intent.wallet,
        inputMint: intent.inputMint,
        outputMint: intent.outputMint,
        params: {
          time: {
            inAmount: Number(intent.inAmount),
            numberOfOrders: intent.numberOfOrders,
            interval: intent.intervalSeconds,
          },
        },
      });
      return { transaction: built.transaction, requestId: built.requestId };
    }
    case "cancelRecurring": {
      const built = await api.cancelRecurringOrder({ user: intent.wallet, order: intent.order });
      return { transaction: built.transaction, requestId: built.requestId };
    }
    case "swap":
      return buildSwapTransaction(api, intent, options);
    case "closeAll":
      // closeAll fans out into one close intent per position (the action worker does it).
      throw new PermanentError(`intents of kind ${intent.kind} are not built by this builder`);
  }
}

/** A close-all item that claims a winning position (it carries `position`), not a close (`order`). */
export function isClaimItem(item: CloseAllItem): item is ClaimPreview {
  return "position" in item && !("order" in item);
}

/** What a close is expected to bring in: the order's cost (contracts x sell price) less its fees. */
export function closeProceedsMicroUsd(preview: ClosePreview): string | undefined {
  const { orderCostUsd, estimatedTotalFeeUsd } = preview.order;
  if (!/^\d+$/.test(orderCostUsd ?? "") || !/^\d+$/.test(estimatedTotalFeeUsd ?? "")) return undefined;
  const net = BigInt(orderCostUsd) - BigInt(estimatedTotalFeeUsd);
  return (net > 0n ? net : 0n).toString();
}

/** What a close's build says its sell pays in fees (estimatedTotalFeeUsd); undefined when it does not say. */
export function closeFeeMicroUsd(preview: ClosePreview): string | undefined {
  const fee = preview.order.estimatedTotalFeeUsd;
  return fee !== undefined && fee !== null && /^\d+$/.test(fee) ? fee : undefined;
}

/** A swap: the service's quote and instructions, checked to be of this swap, assembled with a fee. */
async function buildSwapTransaction(
  api: BuildApi,
  intent: Extract<Intent, { kind: "swap" }>,
  options: BuildOptions,
): Promise<BuiltTransaction> {
  if (!api.buildSwap || !api.simulateUnits)
    throw new PermanentError("swap intents need the swap build API and an RPC to simulate on");
  const built = await api.buildSwap({
    inputMint: intent.inputMint,
    outputMint: intent.outputMint,
    amount: intent.amount,
    taker: intent.wallet,
    ...(intent.slippageBps !== undefined ? { slippageBps: intent.slippageBps } : {}),
  });
  // The quote must be of this swap: the threshold is a minimum of the output mint (one of another
  // mint checks nothing), and the signer's floor is taken from the quote's figures.
  for (const [field, quoted, asked] of [
    ["inputMint", built.inputMint, intent.inputMint],
    ["inAmount", built.inAmount, intent.amount],
    ["outputMint", built.outputMint, intent.outputMint],
  ] as const)
    if (quoted !== asked)
      throw new PermanentError(`swap build: ${field} ${quoted} is not the intent's ${field} ${asked}`);
  const unitPrice = await priceFor(intent, options);
  const assembled = await assembleSwap(built, {
    taker: intent.wallet,
    simulateUnits: api.simulateUnits,
    ...(unitPrice ? { unitPrice } : {}),
  });
  return {
    transaction: assembled.transaction,
    lastValidBlockHeight: assembled.lastValidBlockHeight,
    minInflowRaw: built.otherAmountThreshold,
    swapQuote: {
      inputMint: built.inputMint,
      inAmount: built.inAmount,
      outputMint: built.outputMint,
      outAmount: built.outAmount,
      otherAmountThreshold: built.otherAmountThreshold,
    },
    ...(assembled.computeUnitPrice !== undefined ? { computeUnitPrice: assembled.computeUnitPrice } : {}),
  };
}
