import type { PublicKey, TransactionInstruction } from "@solana/web3.js";

/** What a transaction build returns: the unsigned (or partially signed) transaction and its expiry. */
export interface BuiltTransaction {
  /** base64 of the wire bytes, signatures of the service already in place where it pays. */
  readonly transaction: string;
  readonly txMeta: { readonly blockhash: string; readonly lastValidBlockHeight: number };
}

export interface LandedTransaction {
  readonly signature: string;
  readonly slot: number;
  readonly err: unknown;
  readonly memos: readonly string[];
}

export interface SubmitOutcome {
  readonly signature: string;
  /** null when the transaction executed; the chain's error otherwise. */
  readonly err: unknown;
}

export interface SwapLegs {
  readonly setupInstructions: readonly TransactionInstruction[];
  readonly swapInstruction: TransactionInstruction;
  /** Unwraps what setup wrapped (a SOL input), or null. */
  readonly cleanupInstruction: TransactionInstruction | null;
  readonly otherInstructions: readonly TransactionInstruction[];
  /** Lookup tables the client may compile with: table address → its addresses, in table order. */
  readonly addressesByLookupTableAddress: Readonly<Record<string, readonly string[]>>;
  readonly blockhash: Uint8Array;
  readonly lastValidBlockHeight: number;
}

/**
 * The world's view of the chain: it builds transactions that do the real work of each action and
 * tells the world when one landed. The local chain implements it; `offline-chain.ts` stands in for unit
 * tests and for a sandbox started without a chain.
 */
export interface WorldChainPort {
  /** The USDC-like mint (6 decimals: one raw unit is one micro-USD). */
  readonly usdcMint: string;
  buildClaim(args: {
    owner: PublicKey;
    positionPubkey: PublicKey;
    payoutRaw: bigint;
  }): Promise<BuiltTransaction>;
  /**
   * `serviceSigns`: the service's key (`serviceSigner`) must sign too and has not: it signs when the
   * transaction comes back through the execute endpoint (Forecast's atomic swap), so the same bytes
   * sent straight to an RPC cannot land.
   */
  buildClose(args: {
    owner: PublicKey;
    positionPubkey: PublicKey;
    proceedsRaw: bigint;
    serviceSigns?: boolean;
  }): Promise<BuiltTransaction>;
  /** A buy: the owner pays `costRaw` of USDC to the service; `serviceSigns` as for buildClose. */
  buildOpen(args: {
    owner: PublicKey;
    positionPubkey: PublicKey;
    costRaw: bigint;
    serviceSigns: boolean;
  }): Promise<BuiltTransaction>;
  /** The key the service adds at execute (Forecast builds name it in `requiredSigners`). */
  readonly serviceSigner: string;
  /** Adds the service's signature where the message wants it and it is missing; other bytes unchanged. */
  coSign(base64: string): string;
  /** Forecast's automatic settlement: the service pays a winner without a claim. Fire and forget. */
  settleForecast(args: { owner: PublicKey; positionPubkey: PublicKey; payoutRaw: bigint }): Promise<void>;
  buildOrderEscrow(args: {
    kind: "trigger" | "recurring";
    maker: PublicKey;
    inputMint: PublicKey;
    amountRaw: bigint;
    orderRef: string;
    /** The compute-unit price the build request asked for (micro-lamports); the chain's default otherwise. */
    computeUnitPrice?: number;
    /** A hostile service: the deposit goes to a stranger's token account, not the order's escrow. */
    redirectFunds?: boolean;
  }): Promise<BuiltTransaction>;
  /** Refund of an order's escrow to its maker; `kind` tags the memo (default `trigger-cancel`). */
  buildTriggerCancel(args: {
    maker: PublicKey;
    order: PublicKey;
    kind?: OrderCancelKind;
    computeUnitPrice?: number;
  }): Promise<BuiltTransaction>;
  /**
   * The service's own settlement of a filled order: its escrow goes to the pool and the pool pays the
   * maker `outAmountRaw` of the output, in a transaction the service signs and sends. Fire and forget.
   */
  fillOrder(args: {
    order: string;
    maker: PublicKey;
    outputMint: PublicKey;
    outAmountRaw: bigint;
  }): Promise<void>;
  /**
   * The service's own automatic claim of a winner: the vault pays the owner `payoutRaw`, in a
   * transaction the service pays for, signs and sends (memo `service-claim:<position>`).
   */
  serviceClaim(args: {
    owner: PublicKey;
    positionPubkey: PublicKey;
    payoutRaw: bigint;
  }): Promise<SubmitOutcome>;
  buildSwapLegs(args: {
    taker: PublicKey;
    inputMint: PublicKey;
    outputMint: PublicKey;
    inAmountRaw: bigint;
    outAmountRaw: bigint;
    ref: string;
    /** A hostile service: the input goes to a stranger's token account, not the pool's. */
    redirectFunds?: boolean;
  }): Promise<SwapLegs>;
  submitSigned(base64: string): Promise<SubmitOutcome>;
  onLanded(listener: (landed: LandedTransaction) => void): () => void;
}

export type OrderCancelKind = "trigger-cancel" | "recurring-cancel";

/** Memo tag of every sandbox transaction: `keeper-sandbox:<kind>:<ref>`. */
export const MEMO_PREFIX = "keeper-sandbox";

export function sandboxMemo(kind: string, ref: string): string {
  return `${MEMO_PREFIX}:${kind}:${ref}`;
}

export function parseSandboxMemo(memo: string): { kind: string; ref: string } | undefined {
  const match = /^keeper-sandbox:([a-z-]+):(.+)$/.exec(memo.trim());
  if (match === null) return undefined;
  const [, kind, ref] = match;
  return kind === undefined || ref === undefined ? undefined : { kind, ref };
}
