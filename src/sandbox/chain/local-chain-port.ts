import { ASSOCIATED_TOKEN_PROGRAM_ID, TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from "@solana/spl-token";
import { PublicKey, SystemProgram } from "@solana/web3.js";
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
import { associatedAddress } from "./associated-address.js";
import type { ChainLogger, LocalChain } from "./local-chain.js";
import { poolPayoutInstruction } from "./pool-program.js";
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

const ORDER_MEMO = /^keeper-sandbox:(?:trigger|recurring):(.+)$/;

/**
 * The world's view of the local chain (`WorldChainPort`): builds through the tx factory and remembers
 * what each order escrowed (a cancel refunds exactly that).
 *
 * Orders and swaps pay accounts owned by program-derived addresses, as on the live service. A swap's
 * input goes to the pool's account and its output comes from the pool in the same transaction, signed
 * for the pool's PDA by the sandbox pool program (pool-program.ts). An order's deposit goes to its
 * PDA's token account; no program runs for orders, so once the deposit has landed the service's escrow
 * delegate is approved on it (written directly, as an Approve by the owner would) and signs refunds.
 *
 * With `redirectFunds` (a hostile service, for tests of the signer) a build sends the input to the
 * stranger's token account instead, and a swap pays one raw unit of its output.
 */
export class LocalChainPort implements WorldChainPort {
  readonly usdcMint: string;
  readonly serviceSigner: string;
  private readonly escrowed = new Map<string, EscrowedOrder>();
  private readonly unsubscribe: () => void;
  private lookupTable: { readonly address: string; readonly addresses: readonly string[] } | undefined;

  constructor(
    private readonly chain: LocalChain,
    private readonly assets: SandboxAssets,
    private readonly factory: TxFactory,
    private readonly logger?: ChainLogger,
  ) {
    this.usdcMint = assets.usdcMint.toBase58();
    this.serviceSigner = assets.vault.publicKey.toBase58();
    this.unsubscribe = chain.onLanded((landed) => {
      if (landed.err !== null) return;
      for (const memo of landed.memos) {
        const order = ORDER_MEMO.exec(memo)?.[1];
        if (order !== undefined) this.delegateEscrow(order);
      }
    });
  }

  /**
   * Writes the service's address lookup table (programs, the pool program, the vault, the pool, every
   * routed mint and the pool's account of each) and hands it out with every swap build, so clients
   * compile v0 transactions with it. Returns the table's address.
   */
  registerLookupTable(mints: readonly PublicKey[]): PublicKey {
    const pool = this.assets.pool;
    const addresses: PublicKey[] = [
      SystemProgram.programId,
      TOKEN_PROGRAM_ID,
      TOKEN_2022_PROGRAM_ID,
      ASSOCIATED_TOKEN_PROGRAM_ID,
      MEMO_PROGRAM_ID,
      this.assets.poolProgram,
      this.assets.vault.publicKey,
      pool,
    ];
    for (const mint of mints) {
      const programId = this.chain.getAccount(mint)?.owner;
      if (programId === undefined) throw new Error(`unknown mint ${mint.toBase58()}`);
      addresses.push(mint, associatedAddress(mint, pool, programId));
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
    serviceSigns?: boolean;
  }): Promise<BuiltTransaction> {
    const { serviceSigns, ...rest } = args;
    return this.factory.buildClose({ ...rest, deferVaultSignature: serviceSigns === true });
  }

  async buildOpen(args: {
    owner: PublicKey;
    positionPubkey: PublicKey;
    costRaw: bigint;
    serviceSigns: boolean;
  }): Promise<BuiltTransaction> {
    const { serviceSigns, ...rest } = args;
    return this.factory.buildOpen({ ...rest, vaultSigns: serviceSigns });
  }

  coSign(base64: string): string {
    return this.factory.coSignAsVault(base64);
  }

  /** The vault pays a Forecast winner by itself, in a transaction it signs and pays for. */
  async settleForecast(args: {
    owner: PublicKey;
    positionPubkey: PublicKey;
    payoutRaw: bigint;
  }): Promise<void> {
    const vault = this.assets.vault;
    try {
      const instructions = [
        ...this.factory.transferWithAta({
          mint: this.assets.usdcMint,
          from: vault.publicKey,
          to: args.owner,
          payer: vault.publicKey,
          amountRaw: args.payoutRaw,
        }),
        sandboxMemoInstruction("settle", args.positionPubkey.toBase58()),
      ];
      const built = this.factory.build(vault.publicKey, instructions, [vault], "legacy");
      const outcome = await this.factory.submitSigned(built.transaction);
      if (outcome.err !== null)
        this.logger?.warn(
          { position: args.positionPubkey.toBase58(), err: outcome.err },
          "settlement failed on chain",
        );
    } catch (error) {
      this.logger?.warn({ err: error, position: args.positionPubkey.toBase58() }, "settlement failed");
    }
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
      escrow: associatedAddress(args.inputMint, escrowOwner, this.tokenProgramOf(args.inputMint)),
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

  /**
   * Settles a filled order: the escrow delegate moves the deposit into the pool and the pool program
   * pays the maker its output, in one transaction the delegate pays for and signs. A redirected order
   * has no escrow: nothing moves.
   */
  async fillOrder(args: {
    order: string;
    maker: PublicKey;
    outputMint: PublicKey;
    outAmountRaw: bigint;
  }): Promise<void> {
    const escrowed = this.escrowed.get(args.order);
    if (escrowed === undefined || escrowed.redirected) return;
    const { pool, poolBump, poolProgram, escrowDelegate } = this.assets;
    try {
      const outputProgram = this.tokenProgramOf(args.outputMint);
      const [createMakerAta] = this.factory.transferWithAta({
        mint: args.outputMint,
        from: pool,
        to: args.maker,
        payer: escrowDelegate.publicKey,
        amountRaw: args.outAmountRaw,
      });
      if (createMakerAta === undefined) throw new Error("order fill: missing instruction");
      const instructions = [
        ...this.factory.transferWithAta({
          mint: escrowed.inputMint,
          from: new PublicKey(args.order),
          authority: escrowDelegate.publicKey,
          to: pool,
          payer: escrowDelegate.publicKey,
          amountRaw: escrowed.amountRaw,
        }),
        createMakerAta,
        poolPayoutInstruction({
          programId: poolProgram,
          pool,
          bump: poolBump,
          source: associatedAddress(args.outputMint, pool, outputProgram),
          mint: args.outputMint,
          destination: associatedAddress(args.outputMint, args.maker, outputProgram),
          amountRaw: args.outAmountRaw,
          decimals: this.chain.mintDecimals(args.outputMint) ?? 0,
          tokenProgram: outputProgram,
        }),
        sandboxMemoInstruction("order-fill", args.order),
      ];
      const built = this.factory.build(escrowDelegate.publicKey, instructions, [escrowDelegate], "legacy");
      const outcome = await this.factory.submitSigned(built.transaction);
      if (outcome.err !== null)
        this.logger?.warn({ order: args.order, err: outcome.err }, "order fill failed on chain");
    } catch (error) {
      this.logger?.warn({ err: error, order: args.order }, "order fill failed");
    }
  }

  /** The service's automatic claim: the vault pays the owner and the fee, and signs alone. */
  async serviceClaim(args: {
    owner: PublicKey;
    positionPubkey: PublicKey;
    payoutRaw: bigint;
  }): Promise<SubmitOutcome> {
    const vault = this.assets.vault;
    const instructions = [
      ...this.factory.transferWithAta({
        mint: this.assets.usdcMint,
        from: vault.publicKey,
        to: args.owner,
        payer: vault.publicKey,
        amountRaw: args.payoutRaw,
      }),
      sandboxMemoInstruction("service-claim", args.positionPubkey.toBase58()),
    ];
    const built = this.factory.build(vault.publicKey, instructions, [vault], "legacy");
    return this.factory.submitSigned(built.transaction);
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
    const { pool, poolBump, poolProgram } = this.assets;
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
    // The taker's output account, created idempotently at the taker's expense, then the pool's payout.
    const outputProgram = this.tokenProgramOf(args.outputMint);
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
    const payout = poolPayoutInstruction({
      programId: poolProgram,
      pool,
      bump: poolBump,
      source: associatedAddress(args.outputMint, pool, outputProgram),
      mint: args.outputMint,
      destination: associatedAddress(args.outputMint, args.taker, outputProgram),
      // Hostile: dust, so the transaction still brings the taker something.
      amountRaw: args.redirectFunds === true ? 1n : args.outAmountRaw,
      decimals: this.chain.mintDecimals(args.outputMint) ?? 0,
      tokenProgram: outputProgram,
    });
    const { blockhash, lastValidBlockHeight } = this.chain.latestBlockhash();
    return {
      setupInstructions: [...wrap.setup, createPoolAta, createTakerAta],
      swapInstruction: transferIn,
      cleanupInstruction: wrap.cleanup,
      otherInstructions: [payout, sandboxMemoInstruction("swap", args.ref)],
      addressesByLookupTableAddress:
        this.lookupTable === undefined ? {} : { [this.lookupTable.address]: this.lookupTable.addresses },
      blockhash: bs58.decode(blockhash),
      lastValidBlockHeight,
    };
  }

  submitSigned(base64: string): Promise<SubmitOutcome> {
    return this.factory.submitSigned(base64);
  }

  onLanded(listener: (landed: LandedTransaction) => void): () => void {
    return this.chain.onLanded(listener);
  }
}
