import { z } from "zod";

/**
 * An intent is what a strategy asks for. Its key is deterministic, so the ledger can refuse a second
 * intent for the same effect (a restart, a retry or a second replica never claims or closes twice).
 */
const pubkey = z.string().min(32).max(44);
const rawAmount = z.string().regex(/^\d+$/, "expected an integer string of raw token units");

const base = {
  key: z
    .string()
    .min(1)
    .max(200)
    .regex(/^[^:\s]+$/, "no ':' or whitespace (used as a BullMQ job id)"),
  wallet: pubkey,
  strategy: z.string().min(1),
  reason: z.string().optional(),
};

export const intentSchema = z.discriminatedUnion("kind", [
  z.object({
    ...base,
    kind: z.literal("claim"),
    positionPubkey: pubkey,
    expectedPayoutMicroUsd: rawAmount.optional(),
    /**
     * Set by Keeper on a claim decided from the holdings index: its expected payout is as old as the
     * wallet's last sweep (contracts sold since lower it), so a build that pays less is asked again
     * from a fresh read rather than refused (action-worker.ts).
     */
    expectedPayoutFrom: z.literal("index").optional(),
    /**
     * Not a claim but the record of one not made: the payout is left to the service's own free claim
     * (it claims every winner itself a day after settlement). Recorded as `left_to_service`, never
     * built or signed; its key differs from the claim's, so a claim stays possible later.
     */
    leaveToService: z.literal(true).optional(),
  }),
  z.object({
    ...base,
    kind: z.literal("close"),
    positionPubkey: pubkey,
    minSellPriceSlippageBps: z.number().int().min(0).max(10_000).optional(),
    /** The exit rule that asked for it (e.g. `stop-loss`), for the protections' stop-loss count. */
    exitRule: z.string().min(1).max(64).optional(),
    /** What the position cost (its `totalCostUsd`), so a confirmed close's realized pnl is known. */
    costBasisMicroUsd: rawAmount.optional(),
  }),
  z.object({
    ...base,
    kind: z.literal("closeAll"),
    minSellPriceSlippageBps: z.number().int().min(0).max(10_000).optional(),
  }),
  z.object({
    ...base,
    kind: z.literal("createTrigger"),
    inputMint: pubkey,
    outputMint: pubkey,
    makingAmount: rawAmount,
    takingAmount: rawAmount,
    expiredAt: z.number().int().optional(),
    slippageBps: z.number().int().min(0).max(10_000).optional(),
  }),
  z.object({ ...base, kind: z.literal("cancelTrigger"), order: pubkey, inputMint: pubkey.optional() }),
  z.object({
    ...base,
    kind: z.literal("createRecurring"),
    inputMint: pubkey,
    outputMint: pubkey,
    inAmount: rawAmount,
    numberOfOrders: z.number().int().min(2),
    intervalSeconds: z.number().int().min(1),
  }),
  /** Stops a recurring order: what is left of its deposit comes back. */
  z.object({ ...base, kind: z.literal("cancelRecurring"), order: pubkey, inputMint: pubkey.optional() }),
  z.object({
    ...base,
    kind: z.literal("swap"),
    inputMint: pubkey,
    outputMint: pubkey,
    amount: rawAmount,
    slippageBps: z.number().int().min(0).max(10_000).optional(),
  }),
]);

export type Intent = z.infer<typeof intentSchema>;
export type IntentKind = Intent["kind"];

/**
 * What a transaction built for an intent may take out of the wallet, beyond network fees.
 * Claims and closes only bring money in; orders may spend their input amount of their input mint.
 */
export interface OutflowAllowance {
  /** Lamports the wallet may lose beyond fees, SOL and wrapped SOL together (an order's input and its accounts' rent). */
  maxLamports: bigint;
  /** Raw token units the wallet may lose, per mint. */
  tokens: ReadonlyMap<string, bigint>;
}

/** Intent keys: one effect, one key. */
export const intentKeys = {
  claim: (positionPubkey: string) => `claim-${positionPubkey}`,
  /** The record that a position's claim was left to the service's free claim (once per position). */
  leftToService: (positionPubkey: string) => `claim-${positionPubkey}-left`,
  close: (positionPubkey: string) => `close-${positionPubkey}`,
  /** One close-all of a wallet per tag (a UTC day for the protections, a time for the CLI). */
  closeAll: (wallet: string, tag: string) => `close-all-${wallet}-${tag}`,
} as const;
