import { createHash } from "node:crypto";
import { ComputeBudgetProgram, PublicKey, Transaction, TransactionInstruction } from "@solana/web3.js";
import bs58 from "bs58";
import type {
  BuiltTransaction,
  LandedTransaction,
  OrderCancelKind,
  SubmitOutcome,
  SwapLegs,
  WorldChainPort,
} from "./chain-port.js";
import { sandboxMemo } from "./chain-port.js";
import type { Clock } from "./clock.js";
import { deriveKeypair, derivePubkey } from "./rng.js";

export const MEMO_PROGRAM_ID = new PublicKey("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr");
const SLOT_SECONDS = 0.4;
const BLOCKHASH_LIFETIME_SLOTS = 150;

function memoInstruction(text: string, signer?: PublicKey): TransactionInstruction {
  return new TransactionInstruction({
    programId: MEMO_PROGRAM_ID,
    keys: signer === undefined ? [] : [{ pubkey: signer, isSigner: true, isWritable: false }],
    data: Buffer.from(text, "utf8"),
  });
}

/**
 * A stand-in chain for unit tests and a sandbox without the local chain: transactions are real,
 * memo-only and signed by the owner, and "land" when submitted with valid signatures, so the world's
 * land-then-apply path runs the same way; no tokens move.
 */
export class OfflineChain implements WorldChainPort {
  readonly usdcMint: string;
  readonly serviceSigner: string;
  private readonly serviceKey;
  private readonly listeners = new Set<(landed: LandedTransaction) => void>();
  private slotOffset = 0;

  constructor(
    private readonly seed: number,
    private readonly clock: Clock,
    private readonly genesisSeconds: number,
  ) {
    this.usdcMint = derivePubkey("token:usdc", seed).toBase58(); // as the chainless token catalogue
    this.serviceKey = deriveKeypair("service-signer", seed);
    this.serviceSigner = this.serviceKey.publicKey.toBase58();
  }

  private height(): number {
    return Math.floor((this.clock.nowSeconds() - this.genesisSeconds) / SLOT_SECONDS) + this.slotOffset;
  }

  private blockhash(): { bytes: Uint8Array; base58: string; lastValidBlockHeight: number } {
    const height = this.height();
    const bytes = createHash("sha256").update(`blockhash:${height}#${this.seed}`).digest();
    return { bytes, base58: bs58.encode(bytes), lastValidBlockHeight: height + BLOCKHASH_LIFETIME_SLOTS };
  }

  private build(
    feePayer: PublicKey,
    memo: string,
    computeUnitPrice = 1_000,
    serviceSigns = false,
  ): BuiltTransaction {
    const { base58, lastValidBlockHeight } = this.blockhash();
    const tx = new Transaction({ feePayer, blockhash: base58, lastValidBlockHeight });
    tx.add(
      ComputeBudgetProgram.setComputeUnitPrice({ microLamports: computeUnitPrice }),
      memoInstruction(memo, feePayer),
    );
    if (serviceSigns) tx.add(memoInstruction("service", this.serviceKey.publicKey));
    const transaction = tx
      .serialize({ requireAllSignatures: false, verifySignatures: false })
      .toString("base64");
    return { transaction, txMeta: { blockhash: base58, lastValidBlockHeight } };
  }

  async buildClaim(args: { owner: PublicKey; positionPubkey: PublicKey }): Promise<BuiltTransaction> {
    return this.build(args.owner, sandboxMemo("claim", args.positionPubkey.toBase58()));
  }

  async buildClose(args: {
    owner: PublicKey;
    positionPubkey: PublicKey;
    serviceSigns?: boolean;
  }): Promise<BuiltTransaction> {
    const memo = sandboxMemo("close", args.positionPubkey.toBase58());
    return this.build(args.owner, memo, undefined, args.serviceSigns === true);
  }

  async buildOpen(args: {
    owner: PublicKey;
    positionPubkey: PublicKey;
    serviceSigns: boolean;
  }): Promise<BuiltTransaction> {
    return this.build(
      args.owner,
      sandboxMemo("open", args.positionPubkey.toBase58()),
      undefined,
      args.serviceSigns,
    );
  }

  coSign(base64: string): string {
    const tx = Transaction.from(Buffer.from(base64, "base64"));
    const slot = tx.signatures.find((s) => s.publicKey.equals(this.serviceKey.publicKey));
    if (slot === undefined || slot.signature !== null) return base64;
    tx.partialSign(this.serviceKey);
    return tx.serialize({ requireAllSignatures: false, verifySignatures: false }).toString("base64");
  }

  /** No tokens move here: the settlement lands at once. */
  async settleForecast(args: { positionPubkey: PublicKey }): Promise<void> {
    this.slotOffset += 1;
    const memos = [sandboxMemo("settle", args.positionPubkey.toBase58())];
    const landed: LandedTransaction = {
      signature: `settle-${args.positionPubkey.toBase58()}`,
      slot: this.height(),
      err: null,
      memos,
    };
    for (const listener of this.listeners) listener(landed);
  }

  async buildOrderEscrow(args: {
    kind: "trigger" | "recurring";
    maker: PublicKey;
    orderRef: string;
    computeUnitPrice?: number;
  }): Promise<BuiltTransaction> {
    return this.build(args.maker, sandboxMemo(args.kind, args.orderRef), args.computeUnitPrice);
  }

  async buildTriggerCancel(args: {
    maker: PublicKey;
    order: PublicKey;
    kind?: OrderCancelKind;
    computeUnitPrice?: number;
  }): Promise<BuiltTransaction> {
    return this.build(
      args.maker,
      sandboxMemo(args.kind ?? "trigger-cancel", args.order.toBase58()),
      args.computeUnitPrice,
    );
  }

  /** No tokens move here: nothing to settle. */
  async fillOrder(): Promise<void> {}

  /** The service's automatic claim: no tokens move offline, the world hears that it landed. */
  async serviceClaim(args: { positionPubkey: PublicKey }): Promise<SubmitOutcome> {
    this.slotOffset += 1;
    const signature = bs58.encode(
      createHash("sha256").update(`service-claim:${args.positionPubkey.toBase58()}#${this.seed}`).digest(),
    );
    const memos = [sandboxMemo("service-claim", args.positionPubkey.toBase58())];
    const landed: LandedTransaction = { signature, slot: this.height(), err: null, memos };
    for (const listener of this.listeners) listener(landed);
    return { signature, err: null };
  }

  async buildSwapLegs(args: { taker: PublicKey; ref: string }): Promise<SwapLegs> {
    const { bytes, lastValidBlockHeight } = this.blockhash();
    return {
      setupInstructions: [],
      swapInstruction: memoInstruction(sandboxMemo("swap", args.ref), args.taker),
      cleanupInstruction: null,
      otherInstructions: [],
      addressesByLookupTableAddress: {},
      blockhash: bytes,
      lastValidBlockHeight,
    };
  }

  async submitSigned(base64: string): Promise<SubmitOutcome> {
    const tx = Transaction.from(Buffer.from(base64, "base64"));
    const first = tx.signatures[0]?.signature;
    const signature = first == null ? "" : bs58.encode(first);
    if (first == null || !tx.verifySignatures(true)) return { signature, err: "SignatureVerificationFailed" };
    this.slotOffset += 1;
    const memos = tx.instructions
      .filter((ix) => ix.programId.equals(MEMO_PROGRAM_ID))
      .map((ix) => ix.data.toString("utf8"));
    const landed: LandedTransaction = { signature, slot: this.height(), err: null, memos };
    for (const listener of this.listeners) listener(landed);
    return { signature, err: null };
  }

  onLanded(listener: (landed: LandedTransaction) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
