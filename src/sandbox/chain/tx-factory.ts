import {
  createAssociatedTokenAccountIdempotentInstruction,
  createCloseAccountInstruction,
  createSyncNativeInstruction,
  createTransferCheckedInstruction,
  NATIVE_MINT,
  TOKEN_PROGRAM_ID,
} from "@solana/spl-token";
import {
  ComputeBudgetProgram,
  type Keypair,
  PublicKey,
  SystemProgram,
  Transaction,
  TransactionInstruction,
  TransactionMessage,
  VersionedTransaction,
} from "@solana/web3.js";
import { associatedAddress } from "./associated-address.js";
import { coSignLegacy, coSignVersioned } from "./co-sign.js";
import { type LocalChain, PreflightFailure, SignatureVerificationFailure } from "./local-chain.js";
import type { SandboxAssets } from "./sandbox-assets.js";
import type { RpcTransactionError } from "./transaction-error.js";
import { decodeWireTransaction, MalformedTransactionError } from "./wire-transaction.js";

export const MEMO_PROGRAM_ID = new PublicKey("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr");

/** What a build returns: base64 wire bytes (the service's own signatures in place) and the expiry. */
export interface BuiltTransaction {
  readonly transaction: string;
  readonly txMeta: { readonly blockhash: string; readonly lastValidBlockHeight: number };
}

export interface SubmitResult {
  readonly signature: string;
  /** null when the transaction executed; the chain's error (RPC JSON shape) otherwise. */
  readonly err: RpcTransactionError | null;
}

export interface TxFactoryOptions {
  /** Priority price on every transaction, in micro-lamports per compute unit (default 1,000; 0 = none). */
  computeUnitPrice?: number;
  /** How long `submitSigned` waits for the transaction to land (default 30 s). */
  submitTimeoutMs?: number;
  pollMs?: number;
  /** `submitSigned` resends the same bytes this often until they land (default 500 ms), as senders do. */
  rebroadcastMs?: number;
}

/** `signer`: a key the memo program requires to sign (Forecast builds name the service's key so). */
export function sandboxMemoInstruction(
  kind: string,
  ref: string,
  signer?: PublicKey,
): TransactionInstruction {
  return new TransactionInstruction({
    programId: MEMO_PROGRAM_ID,
    keys: signer === undefined ? [] : [{ pubkey: signer, isSigner: true, isWritable: false }],
    data: Buffer.from(`keeper-sandbox:${kind}:${ref}`, "utf8"),
  });
}

/**
 * Builds the sandbox service's transactions on the local chain. The user is fee payer and signer;
 * where the service moves its own tokens (vault payouts, escrow refunds) its key signs first,
 * so those transactions arrive partially signed. Claims and order escrows are v0 transactions; closes
 * and trigger cancels are legacy, so a signer meets both formats.
 */
export class TxFactory {
  private readonly computeUnitPrice: number;
  private readonly submitTimeoutMs: number;
  private readonly pollMs: number;
  private readonly rebroadcastMs: number;

  constructor(
    private readonly chain: LocalChain,
    private readonly assets: SandboxAssets,
    options: TxFactoryOptions = {},
  ) {
    this.computeUnitPrice = options.computeUnitPrice ?? 1_000;
    this.submitTimeoutMs = options.submitTimeoutMs ?? 30_000;
    this.pollMs = options.pollMs ?? 10;
    this.rebroadcastMs = options.rebroadcastMs ?? 500;
  }

  /** Vault → owner USDC payout of a winning position (v0, vault-signed). */
  buildClaim(args: { owner: PublicKey; positionPubkey: PublicKey; payoutRaw: bigint }): BuiltTransaction {
    return this.payout("claim", args.owner, args.positionPubkey.toBase58(), args.payoutRaw, "v0");
  }

  /**
   * Vault → owner USDC proceeds of a position sold (legacy, vault-signed). With `deferVaultSignature`
   * (a Forecast swap) the vault's slot stays empty: it signs at the service's execute endpoint.
   */
  buildClose(args: {
    owner: PublicKey;
    positionPubkey: PublicKey;
    proceedsRaw: bigint;
    deferVaultSignature?: boolean;
  }): BuiltTransaction {
    const ref = args.positionPubkey.toBase58();
    return this.payout("close", args.owner, ref, args.proceedsRaw, "legacy", args.deferVaultSignature);
  }

  /**
   * Owner → vault USDC cost of a buy (v0). A Forecast buy names the vault as a signer of its memo,
   * left unsigned: the vault signs at the execute endpoint, as the service's side of the swap.
   */
  buildOpen(args: {
    owner: PublicKey;
    positionPubkey: PublicKey;
    costRaw: bigint;
    vaultSigns: boolean;
  }): BuiltTransaction {
    const vault = this.assets.vault.publicKey;
    const instructions = [
      ...this.transferWithAta({
        mint: this.assets.usdcMint,
        from: args.owner,
        to: vault,
        payer: args.owner,
        amountRaw: args.costRaw,
      }),
      sandboxMemoInstruction("open", args.positionPubkey.toBase58(), args.vaultSigns ? vault : undefined),
    ];
    return this.build(args.owner, instructions, [], "v0");
  }

  /** The vault signs a transaction that names it and whose vault slot is still empty. */
  coSignAsVault(base64: string): string {
    const tx = VersionedTransaction.deserialize(Buffer.from(base64, "base64"));
    const signers = tx.message.staticAccountKeys.slice(0, tx.message.header.numRequiredSignatures);
    const slot = signers.findIndex((key) => key.equals(this.assets.vault.publicKey));
    if (slot < 0 || tx.signatures[slot]?.some((b) => b !== 0) !== false) return base64;
    tx.sign([this.assets.vault]);
    return Buffer.from(tx.serialize()).toString("base64");
  }

  /**
   * Maker → escrow deposit of the order's input (v0; only the maker signs). The escrow is the
   * associated token account of `escrowOwner` (the order's PDA, as on the live service) for the input
   * mint, created idempotently here at the maker's expense. A wrapped SOL input is wrapped from the
   * maker's SOL in the same transaction (and its account closed again if the transaction created it),
   * as the live service does for SOL.
   */
  buildOrderEscrow(args: {
    kind: "trigger" | "recurring";
    maker: PublicKey;
    inputMint: PublicKey;
    amountRaw: bigint;
    orderRef: string;
    escrowOwner: PublicKey;
    /** The price the build request asked for; the factory's own otherwise. */
    computeUnitPrice?: number;
  }): BuiltTransaction {
    const wrap = this.wrapSolLegs(args.inputMint, args.maker, args.amountRaw);
    const instructions = [
      ...wrap.setup,
      ...this.transferWithAta({
        mint: args.inputMint,
        from: args.maker,
        to: args.escrowOwner,
        payer: args.maker,
        amountRaw: args.amountRaw,
      }),
      ...(wrap.cleanup === null ? [] : [wrap.cleanup]),
      sandboxMemoInstruction(args.kind, args.orderRef),
    ];
    return this.build(args.maker, instructions, [], "v0", args.computeUnitPrice);
  }

  /**
   * Escrow → maker refund of a cancelled trigger or recurring order (legacy; the memo says which).
   * The escrow belongs to the order's PDA, so the service's escrow delegate moves it and co-signs.
   * Wrapped SOL is unwrapped back to SOL when the maker had no wrapped SOL account before (the refund
   * creates and closes it).
   */
  buildTriggerCancel(args: {
    maker: PublicKey;
    order: PublicKey;
    inputMint: PublicKey;
    amountRaw: bigint;
    kind?: "trigger-cancel" | "recurring-cancel";
    computeUnitPrice?: number;
  }): BuiltTransaction {
    const unwrap =
      args.inputMint.equals(NATIVE_MINT) && !this.hasTokenAccount(NATIVE_MINT, args.maker)
        ? [this.closeWrappedSol(args.maker)]
        : [];
    const delegate = this.assets.escrowDelegate;
    const instructions = [
      ...this.transferWithAta({
        mint: args.inputMint,
        from: args.order,
        authority: delegate.publicKey,
        to: args.maker,
        payer: args.maker,
        amountRaw: args.amountRaw,
      }),
      ...unwrap,
      sandboxMemoInstruction(args.kind ?? "trigger-cancel", args.order.toBase58()),
    ];
    return this.build(args.maker, instructions, [delegate], "legacy", args.computeUnitPrice);
  }

  private payout(
    kind: string,
    owner: PublicKey,
    ref: string,
    amountRaw: bigint,
    format: "v0" | "legacy",
    deferVaultSignature = false,
  ) {
    const instructions = [
      ...this.transferWithAta({
        mint: this.assets.usdcMint,
        from: this.assets.vault.publicKey,
        to: owner,
        payer: owner,
        amountRaw,
      }),
      sandboxMemoInstruction(kind, ref),
    ];
    return this.build(owner, instructions, deferVaultSignature ? [] : [this.assets.vault], format);
  }

  /** Whether `owner` has an associated token account for `mint` on the chain now. */
  hasTokenAccount(mint: PublicKey, owner: PublicKey): boolean {
    const programId = this.chain.getAccount(mint)?.owner ?? TOKEN_PROGRAM_ID;
    return this.chain.getAccount(associatedAddress(mint, owner, programId)) !== null;
  }

  /**
   * For a wrapped SOL input: `setup` wraps `amountRaw` of the owner's SOL into its wrapped SOL account
   * (create idempotent, System transfer, SyncNative); `cleanup` closes that account back to the owner
   * when it did not exist before, so the owner's wrapped SOL afterwards is what it was. Nothing for any
   * other mint.
   */
  wrapSolLegs(
    mint: PublicKey,
    owner: PublicKey,
    amountRaw: bigint,
  ): { setup: TransactionInstruction[]; cleanup: TransactionInstruction | null } {
    if (!mint.equals(NATIVE_MINT)) return { setup: [], cleanup: null };
    const account = associatedAddress(NATIVE_MINT, owner);
    const existed = this.chain.getAccount(account) !== null;
    return {
      setup: [
        createAssociatedTokenAccountIdempotentInstruction(owner, account, owner, NATIVE_MINT),
        SystemProgram.transfer({ fromPubkey: owner, toPubkey: account, lamports: amountRaw }),
        createSyncNativeInstruction(account),
      ],
      cleanup: existed ? null : this.closeWrappedSol(owner),
    };
  }

  /** Closes the owner's wrapped SOL account to the owner: its balance and rent come back as SOL. */
  closeWrappedSol(owner: PublicKey): TransactionInstruction {
    const account = associatedAddress(NATIVE_MINT, owner);
    return createCloseAccountInstruction(account, owner, owner);
  }

  /**
   * createAssociatedTokenAccountIdempotent for the receiver (paid by `payer`) + transferChecked from
   * `from`'s associated account, signed by `authority` (its delegate) or else `from` itself.
   */
  transferWithAta(args: {
    mint: PublicKey;
    from: PublicKey;
    authority?: PublicKey;
    to: PublicKey;
    payer: PublicKey;
    amountRaw: bigint;
  }): TransactionInstruction[] {
    const programId = this.chain.getAccount(args.mint)?.owner;
    const decimals = this.chain.mintDecimals(args.mint);
    if (programId === undefined || decimals === undefined)
      throw new Error(`unknown mint ${args.mint.toBase58()}`);
    const source = associatedAddress(args.mint, args.from, programId);
    const destination = associatedAddress(args.mint, args.to, programId);
    return [
      createAssociatedTokenAccountIdempotentInstruction(
        args.payer,
        destination,
        args.to,
        args.mint,
        programId,
      ),
      createTransferCheckedInstruction(
        source,
        args.mint,
        destination,
        args.authority ?? args.from,
        args.amountRaw,
        decimals,
        [],
        programId,
      ),
    ];
  }

  /** Assembles, signs with the service's co-signers, and serializes (the fee payer's slot left empty). */
  build(
    feePayer: PublicKey,
    instructions: readonly TransactionInstruction[],
    coSigners: readonly Keypair[],
    format: "v0" | "legacy",
    computeUnitPrice = this.computeUnitPrice,
  ): BuiltTransaction {
    const { blockhash, lastValidBlockHeight } = this.chain.latestBlockhash();
    const all =
      computeUnitPrice > 0
        ? [ComputeBudgetProgram.setComputeUnitPrice({ microLamports: computeUnitPrice }), ...instructions]
        : [...instructions];
    let bytes: Uint8Array;
    if (format === "v0") {
      const message = new TransactionMessage({
        payerKey: feePayer,
        recentBlockhash: blockhash,
        instructions: all,
      });
      const tx = new VersionedTransaction(message.compileToV0Message());
      if (coSigners.length > 0) coSignVersioned(tx, coSigners);
      bytes = tx.serialize();
    } else {
      const tx = new Transaction({ feePayer, blockhash, lastValidBlockHeight }).add(...all);
      if (coSigners.length > 0) coSignLegacy(tx, coSigners);
      bytes = tx.serialize({ requireAllSignatures: false, verifySignatures: false });
    }
    return {
      transaction: Buffer.from(bytes).toString("base64"),
      txMeta: { blockhash, lastValidBlockHeight },
    };
  }

  /**
   * Sends a signed transaction (preflight on) and waits until it lands, is refused, or its blockhash
   * expires; bounded by `submitTimeoutMs`. Used by the sandbox's execute endpoints.
   */
  async submitSigned(base64: string): Promise<SubmitResult> {
    const bytes = Buffer.from(base64, "base64");
    let signature: string;
    let blockhash: string;
    try {
      ({ signature, blockhash } = decodeWireTransaction(bytes));
    } catch (error) {
      if (error instanceof MalformedTransactionError) return { signature: "", err: "SanitizeFailure" };
      throw error;
    }
    try {
      this.chain.send(bytes);
    } catch (error) {
      if (error instanceof SignatureVerificationFailure) return { signature, err: "SignatureFailure" };
      if (error instanceof PreflightFailure) return { signature, err: error.simulation.err };
      throw error;
    }
    const deadline = Date.now() + this.submitTimeoutMs;
    let nextBroadcast = Date.now() + this.rebroadcastMs;
    for (;;) {
      const landed = this.chain.transaction(signature);
      if (landed !== undefined) return { signature, err: landed.err };
      if (!this.chain.isBlockhashValid(blockhash)) return { signature, err: "BlockhashNotFound" };
      if (Date.now() > deadline) return { signature, err: "Timeout" };
      if (Date.now() >= nextBroadcast) {
        // A dropped send is only noticed by its absence; the same bytes cannot land twice.
        this.chain.send(bytes, { skipPreflight: true });
        nextBroadcast = Date.now() + this.rebroadcastMs;
      }
      await new Promise((resolve) => setTimeout(resolve, this.pollMs));
    }
  }
}
