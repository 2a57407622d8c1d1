import {
  ASSOCIATED_TOKEN_PROGRAM_ID,
  getAssociatedTokenAddressSync,
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
} from "@solana/spl-token";
import { PublicKey, SystemProgram, Transaction } from "@solana/web3.js";
import bs58 from "bs58";
import type {
  BuiltTransaction,
  LandedTransaction,
  OrderCancelKind,
  SubmitOutcome,
  SwapLegs,
  WorldChainPort,
} from "../world/chain-port.js";
import { badRequest } from "../world/errors.js";
import type { ChainLogger, LocalChain } from "./local-chain.js";
import type { SandboxAssets } from "./sandbox-assets.js";
import { MEMO_PROGRAM_ID, sandboxMemoInstruction, type TxFactory } from "./tx-factory.js";

/** An address lookup table holds at most 256 addresses. */
const MAX_LOOKUP_TABLE_ADDRESSES = 256;

interface EscrowedOrder {
  readonly inputMint: PublicKey;
  readonly amountRaw: bigint;
  /** The escrow token account the deposit goes to (the order PDA's, or the stranger's when redirected). */
  readonly escrow: PublicKey;
  readonly redirected: boolean;
}

interface PendingSwap {
  readonly taker: PublicKey;
  readonly inputMint: PublicKey;
  readonly inAmountRaw: bigint;
  readonly outputMint: PublicKey;
  readonly outAmountRaw: bigint;
}

const SWAP_MEMO_PREFIX = "keeper-sandbox:swap:";
const ORDER_MEMO = /^keeper-sandbox:(?:trigger|recurring):(.+)$/;

/**
 * The world's view of the local chain (`WorldChainPort`): builds through the tx factory and remembers
 * what it needs later — what each order escrowed (a cancel refunds exactly that) and what each swap
 * owes.
 *
 * Orders and swaps pay accounts owned by program-derived addresses (an order's PDA, the pool's PDA),
 * as on the live service. No program runs here to sign for those PDAs, so the service's keys are
 * their accounts' delegates: the pool's delegate is approved at genesis, an escrow's as soon as its
 * deposit has landed (written directly, as an Approve by the owner would).
 *
 * A swap is two transactions: the taker's (assembled by the client from the build's instructions, so
 * it cannot carry the pool's signature) moves the input into the pool; once it has landed, and only if
 * it really paid the pool the input amount, the pool's delegate pays the output in its own
 * transaction, resent until it lands.
 *
 * With `redirectFunds` (a hostile service, for tests of the signer) a build sends the input to the
 * stranger's token account instead; nothing is owed back.
 */
export class LocalChainPort implements WorldChainPort {
  readonly usdcMint: string;
  private readonly escrowed = new Map<string, EscrowedOrder>();
  private readonly swaps = new Map<string, PendingSwap>();
  private readonly unsubscribe: () => void;
  private lookupTable: { readonly address: string; readonly addresses: readonly string[] } | undefined;

  constructor(
    private readonly chain: LocalChain,
    private readonly assets: SandboxAssets,
    private readonly factory: TxFactory,
    private readonly logger?: ChainLogger,
  ) {
    this.usdcMint = assets.usdcMint.toBase58();
    this.unsubscribe = chain.onLanded((landed) => {
      if (landed.err !== null) return;
      const refs = landed.memos
        .filter((memo) => memo.startsWith(SWAP_MEMO_PREFIX))
        .map((memo) => memo.slice(SWAP_MEMO_PREFIX.length));
      if (refs.length > 0) this.settleSwaps(landed.signature, refs);
      for (const memo of landed.memos) {
        const order = ORDER_MEMO.exec(memo)?.[1];
        if (order !== undefined) this.delegateEscrow(order);
      }
    });
  }

  /**
   * Writes the service's address lookup table (programs, the vault, the pool, every routed mint and
   * the pool's account of each) and hands it out with every swap build, so clients compile v0
   * transactions with it. Returns the table's address.
   */
  registerLookupTable(mints: readonly PublicKey[]): PublicKey {
    const pool = this.assets.pool;
    const addresses: PublicKey[] = [
      SystemProgram.programId,
      TOKEN_PROGRAM_ID,
      TOKEN_2022_PROGRAM_ID,
      ASSOCIATED_TOKEN_PROGRAM_ID,
      MEMO_PROGRAM_ID,
      this.assets.vault.publicKey,
      pool,
    ];
    for (const mint of mints) {
      const programId = this.chain.getAccount(mint)?.owner;
      if (programId === undefined) throw new Error(`unknown mint ${mint.toBase58()}`);
      addresses.push(mint, getAssociatedTokenAddressSync(mint, pool, true, programId));
    }
    const unique = [...new Map(addresses.map((a) => [a.toBase58(), a])).values()];
    if (unique.length > MAX_LOOKUP_TABLE_ADDRESSES)
      throw new RangeError(`a lookup table holds at most ${MAX_LOOKUP_TABLE_ADDRESSES} addresses`);
    const address = this.chain.createLookupTable(unique);
    this.lookupTable = { address: address.toBase58(), addresses: unique.map((a) => a.toBase58()) };
    return address;
  }

  /**
   * Once an order's deposit has landed, approves the escrow delegate for what the escrow holds, so the
   * service can refund it (an order's PDA has no program here to sign). A redirected deposit went to
   * the stranger: nothing to approve.
   */
  private delegateEscrow(order: string): void {
    const escrowed = this.escrowed.get(order);
    if (escrowed === undefined || escrowed.redirected) return;
    const held = this.chain.tokenAccount(escrowed.escrow)?.amount ?? 0n;
    if (held < escrowed.amountRaw) {
      this.logger?.warn({ order }, "order memo landed without its deposit: escrow not delegated");
      return;
    }
    this.chain.setTokenDelegate(escrowed.escrow, this.assets.escrowDelegate.publicKey, held);
  }

  /** Where a build sends a user's input: `owner`'s associated account, or the stranger's when redirected. */
  private inputOwner(owner: PublicKey, redirectFunds: boolean | undefined): PublicKey {
    return redirectFunds === true ? this.assets.stranger.publicKey : owner;
  }

  private tokenProgramOf(mint: PublicKey): PublicKey {
    const programId = this.chain.getAccount(mint)?.owner;
    if (programId === undefined) throw new Error(`unknown mint ${mint.toBase58()}`);
    return programId;
  }

  close(): void {
    this.unsubscribe();
  }

  async buildClaim(args: {
    owner: PublicKey;
    positionPubkey: PublicKey;
    payoutRaw: bigint;
  }): Promise<BuiltTransaction> {
    return this.factory.buildClaim(args);
  }

  async buildClose(args: {
    owner: PublicKey;
    positionPubkey: PublicKey;
    proceedsRaw: bigint;
  }): Promise<BuiltTransaction> {
    return this.factory.buildClose(args);
  }

  async buildOrderEscrow(args: {
    kind: "trigger" | "recurring";
    maker: PublicKey;
    inputMint: PublicKey;
    amountRaw: bigint;
    orderRef: string;
    computeUnitPrice?: number;
    redirectFunds?: boolean;
  }): Promise<BuiltTransaction> {
    const escrowOwner = this.inputOwner(new PublicKey(args.orderRef), args.redirectFunds);
    const { redirectFunds: _, ...rest } = args;
    const built = this.factory.buildOrderEscrow({ ...rest, escrowOwner });
    this.escrowed.set(args.orderRef, {
      inputMint: args.inputMint,
      amountRaw: args.amountRaw,
      escrow: getAssociatedTokenAddressSync(
        args.inputMint,
        escrowOwner,
        true,
        this.tokenProgramOf(args.inputMint),
      ),
      redirected: args.redirectFunds === true,
    });
    return built;
  }

  async buildTriggerCancel(args: {
    maker: PublicKey;
    order: PublicKey;
    kind?: OrderCancelKind;
    computeUnitPrice?: number;
  }): Promise<BuiltTransaction> {
    const orderRef = args.order.toBase58();
    const escrowed = this.escrowed.get(orderRef);
    if (escrowed === undefined) throw new Error(`no escrow recorded for order ${orderRef}`);
    return this.factory.buildTriggerCancel({
      maker: args.maker,
      order: args.order,
      inputMint: escrowed.inputMint,
      amountRaw: escrowed.amountRaw,
      kind: args.kind ?? "trigger-cancel",
      ...(args.computeUnitPrice !== undefined ? { computeUnitPrice: args.computeUnitPrice } : {}),
    });
  }

  async buildSwapLegs(args: {
    taker: PublicKey;
    inputMint: PublicKey;
    outputMint: PublicKey;
    inAmountRaw: bigint;
    outAmountRaw: bigint;
    ref: string;
    redirectFunds?: boolean;
  }): Promise<SwapLegs> {
    const pool = this.assets.pool;
    // The pool must be able to pay the output (it holds a fixed amount of each token).
    if (this.chain.tokenBalance(pool, args.outputMint) < args.outAmountRaw)
      throw badRequest("amount", "insufficient_liquidity", "needs more output than the sandbox pool holds");
    const wrap = this.factory.wrapSolLegs(args.inputMint, args.taker, args.inAmountRaw);
    const [createPoolAta, transferIn] = this.factory.transferWithAta({
      mint: args.inputMint,
      from: args.taker,
      to: this.inputOwner(pool, args.redirectFunds),
      payer: args.taker,
      amountRaw: args.inAmountRaw,
    });
    // Created here (paid by the taker) so the pool's payout finds the taker's output account.
    const [createTakerAta] = this.factory.transferWithAta({
      mint: args.outputMint,
      from: pool,
      to: args.taker,
      payer: args.taker,
      amountRaw: args.outAmountRaw,
    });
    if (createPoolAta === undefined || transferIn === undefined || createTakerAta === undefined) {
      throw new Error("swap legs: missing instruction");
    }
    // A redirected input never reaches the pool: nothing is owed for it.
    if (args.redirectFunds !== true)
      this.swaps.set(args.ref, {
        taker: args.taker,
        inputMint: args.inputMint,
        inAmountRaw: args.inAmountRaw,
        outputMint: args.outputMint,
        outAmountRaw: args.outAmountRaw,
      });
    const { blockhash, lastValidBlockHeight } = this.chain.latestBlockhash();
    return {
      setupInstructions: [...wrap.setup, createPoolAta, createTakerAta],
      swapInstruction: transferIn,
      cleanupInstruction: wrap.cleanup,
      otherInstructions: [sandboxMemoInstruction("swap", args.ref)],
      addressesByLookupTableAddress:
        this.lookupTable === undefined ? {} : { [this.lookupTable.address]: this.lookupTable.addresses },
      blockhash: bs58.decode(blockhash),
      lastValidBlockHeight,
    };
  }

  /**
   * Settles the swaps a landed transaction names, each only if that transaction raised the pool's
   * balance of the input mint by the input amount (a memo alone pays nothing), and each once.
   */
  private settleSwaps(signature: string, refs: readonly string[]): void {
    const record = this.chain.transaction(signature);
    if (record === undefined) return;
    const pool = this.assets.pool.toBase58();
    const received = new Map<string, bigint>();
    for (const post of record.postTokenBalances) {
      if (post.owner !== pool) continue;
      const pre = record.preTokenBalances.find((p) => p.accountIndex === post.accountIndex);
      received.set(post.mint, (received.get(post.mint) ?? 0n) + post.amount - (pre?.amount ?? 0n));
    }
    for (const ref of refs) {
      const swap = this.swaps.get(ref);
      if (swap === undefined) continue;
      const mint = swap.inputMint.toBase58();
      const left = received.get(mint) ?? 0n;
      if (left < swap.inAmountRaw) {
        this.logger?.warn({ ref, signature }, "swap memo landed without its input: not settled");
        continue;
      }
      received.set(mint, left - swap.inAmountRaw);
      this.swaps.delete(ref);
      // After the current landing is announced, not inside it.
      setImmediate(() => {
        void this.payOutput(ref, swap);
      });
    }
  }

  /**
   * The pool's transfer of a swap's output, signed by its delegate (fee payer and sole signer), resent
   * until it lands.
   */
  private async payOutput(ref: string, swap: PendingSwap): Promise<void> {
    try {
      const delegate = this.assets.poolDelegate;
      const built = this.factory.build(
        delegate.publicKey,
        [
          ...this.factory.transferWithAta({
            mint: swap.outputMint,
            from: this.assets.pool,
            authority: delegate.publicKey,
            to: swap.taker,
            payer: delegate.publicKey,
            amountRaw: swap.outAmountRaw,
          }),
          sandboxMemoInstruction("swap-settle", ref),
        ],
        [],
        "legacy",
      );
      const tx = Transaction.from(Buffer.from(built.transaction, "base64"));
      tx.sign(delegate);
      const outcome = await this.factory.submitSigned(tx.serialize().toString("base64"));
      if (outcome.err !== null)
        this.logger?.warn({ ref, signature: outcome.signature, err: outcome.err }, "swap settlement failed");
    } catch (error) {
      this.logger?.warn({ err: error, ref }, "swap settlement failed");
    }
  }

  submitSigned(base64: string): Promise<SubmitOutcome> {
    return this.factory.submitSigned(base64);
  }

  onLanded(listener: (landed: LandedTransaction) => void): () => void {
    return this.chain.onLanded(listener);
  }
}
