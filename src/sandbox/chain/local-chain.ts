import { createHash } from "node:crypto";
import { ACCOUNT_SIZE, NATIVE_MINT, TOKEN_PROGRAM_ID } from "@solana/spl-token";
import { type Keypair, PublicKey, SystemProgram, VersionedMessage } from "@solana/web3.js";
import bs58 from "bs58";
import { type Account, FailedTransactionMetadata, LiteSVM, type TransactionMetadata } from "litesvm";
import type { Logger } from "pino";
import { associatedAddress } from "./associated-address.js";
import { BlockhashWindow, type IssuedBlockhash } from "./blockhash-window.js";
import { ChainFaults } from "./chain-faults.js";
import { Congestion, type CongestionSettings } from "./congestion.js";
import { computeUnitPriceOf, feeForMessage } from "./fees.js";
import { ADDRESS_LOOKUP_TABLE_PROGRAM_ID, encodeLookupTable } from "./lookup-table.js";
import { memosOf, type ResolvedAccounts, resolveAccounts } from "./message-accounts.js";
import {
  decodeMint,
  decodeTokenAccount,
  encodeMint,
  encodeTokenAccount,
  isTokenProgram,
  TOKEN_PROGRAM_IDS,
  type TokenAccountState,
  withDelegate,
} from "./token-state.js";
import { BLOCKHASH_NOT_FOUND, type RpcTransactionError, toRpcTransactionError } from "./transaction-error.js";
import { decodeWireTransaction, toSvmTransaction, type WireTransaction } from "./wire-transaction.js";

export type ChainLogger = Pick<Logger, "debug" | "warn">;

export interface LocalChainOptions {
  /** Slot length; a timer advances the chain this often (default 400). 0 = only `advanceSlots`. */
  slotMs?: number;
  /** Seeds the fault RNG and the genesis hash (default 0). */
  seed?: number;
  /** Wall clock in ms, written to the Clock sysvar each slot (default Date.now; tests may drive it). */
  now?: () => number;
  /** Slots after landing before a status reads `confirmed` (default 1) and `finalized` (default 32). */
  confirmedAfterSlots?: number;
  finalizedAfterSlots?: number;
  logger?: ChainLogger;
}

export interface ChainAccount {
  readonly address: PublicKey;
  readonly lamports: bigint;
  readonly owner: PublicKey;
  readonly data: Uint8Array;
  readonly executable: boolean;
}

/** An inner instruction in compiled form: indices into the transaction's full account key list. */
export interface CompiledInnerInstruction {
  readonly programIdIndex: number;
  readonly accounts: readonly number[];
  readonly data: Uint8Array;
  readonly stackHeight: number;
}

export interface InnerInstructionGroup {
  /** Index of the top-level instruction that made these calls. */
  readonly index: number;
  readonly instructions: readonly CompiledInnerInstruction[];
}

export interface TokenBalanceEntry {
  readonly accountIndex: number;
  readonly mint: string;
  readonly owner: string;
  readonly programId: string;
  readonly amount: bigint;
  readonly decimals: number;
}

/** A transaction that was included in a slot (successfully or with an execution error). */
export interface LandedRecord {
  readonly signature: string;
  readonly slot: number;
  readonly blockTime: number;
  readonly err: RpcTransactionError | null;
  readonly logs: readonly string[];
  readonly fee: number;
  readonly unitsConsumed: number;
  readonly innerInstructions: readonly InnerInstructionGroup[];
  readonly accounts: ResolvedAccounts;
  readonly preBalances: readonly number[];
  readonly postBalances: readonly number[];
  readonly preTokenBalances: readonly TokenBalanceEntry[];
  readonly postTokenBalances: readonly TokenBalanceEntry[];
  readonly transaction: WireTransaction;
}

export interface LandedEvent {
  readonly signature: string;
  readonly slot: number;
  readonly err: unknown | null;
  readonly memos: string[];
}

export type ConfirmationStatus = "processed" | "confirmed" | "finalized";

export interface SignatureStatus {
  readonly slot: number;
  /** Slots since landing; null once finalized (as RPC nodes report rooted transactions). */
  readonly confirmations: number | null;
  readonly err: RpcTransactionError | null;
  readonly confirmationStatus: ConfirmationStatus;
}

export interface SimulateOptions {
  sigVerify?: boolean;
  replaceRecentBlockhash?: boolean;
  /** Accounts to return after execution, in this order (null where absent). */
  accountAddresses?: readonly PublicKey[];
}

export interface SimulationOutcome {
  readonly err: RpcTransactionError | null;
  readonly logs: readonly string[];
  readonly unitsConsumed: number;
  readonly returnData: { programId: string; data: Uint8Array } | null;
  readonly innerInstructions: readonly InnerInstructionGroup[];
  /** The full account key list inner-instruction indices refer to. */
  readonly accountKeys: readonly PublicKey[];
  /** Post-execution accounts for `accountAddresses`; null when the simulation failed. */
  readonly accounts: readonly (ChainAccount | null)[] | null;
  readonly replacementBlockhash?: IssuedBlockhash;
}

/** Preflight simulation failed: an RPC node answers -32002 with the simulation's logs. */
export class PreflightFailure extends Error {
  override readonly name = "PreflightFailure";
  constructor(readonly simulation: SimulationOutcome) {
    super(`Transaction simulation failed: ${describeError(simulation.err)}`);
  }
}

/** Preflight signature check failed: an RPC node answers -32003. */
export class SignatureVerificationFailure extends Error {
  override readonly name = "SignatureVerificationFailure";
  constructor() {
    super("Transaction signature verification failure");
  }
}

function describeError(err: RpcTransactionError | null): string {
  if (err === BLOCKHASH_NOT_FOUND) return "Blockhash not found";
  return typeof err === "string" ? err : JSON.stringify(err);
}

/** Errors with which a transaction is still included in a block and pays its fee. */
function landsWithError(err: RpcTransactionError): boolean {
  return typeof err === "object" && ("InstructionError" in err || "InsufficientFundsForRent" in err);
}

const GENESIS_SLOT = 1;
const SLOTS_PER_EPOCH = 432_000;

/**
 * A Solana chain on LiteSVM that behaves like a mainnet RPC node where Keeper can tell: blockhashes
 * stay valid for 150 blocks, slots advance on a timer, landed transactions are recorded for status
 * and history queries, and sends can be dropped, delayed or failed on purpose.
 */
export class LocalChain {
  readonly svm: LiteSVM;
  readonly faults: ChainFaults;
  readonly genesisHash: string;
  private readonly window = new BlockhashWindow();
  private readonly landed = new Map<string, LandedRecord>();
  /** Sends held by `landDelayMs`, by signature, until their timer (or `landHeldSends`) runs them. */
  private readonly held = new Map<string, WireTransaction>();
  private readonly sendAttempts = new Map<string, number>();
  private readonly listeners = new Set<(e: LandedEvent) => void>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly now: () => number;
  private readonly confirmedAfter: number;
  private readonly finalizedAfter: number;
  private readonly logger: ChainLogger | undefined;
  private currentSlot = GENESIS_SLOT;
  private transactionCount = 0;

  constructor(options: LocalChainOptions = {}) {
    const seed = options.seed ?? 0;
    this.now = options.now ?? Date.now;
    this.confirmedAfter = options.confirmedAfterSlots ?? 1;
    this.finalizedAfter = options.finalizedAfterSlots ?? 32;
    this.logger = options.logger;
    this.faults = new ChainFaults(seed);
    this.genesisHash = bs58.encode(createHash("sha256").update(`keeper-local-chain#${seed}`).digest());
    // LiteSVM accepts only its latest blockhash; the window below models mainnet's 150 blocks instead.
    this.svm = new LiteSVM().withBlockhashCheck(false);
    this.produceBlock();
    const slotMs = options.slotMs ?? 400;
    if (slotMs > 0) {
      const timer = setInterval(() => this.advanceSlots(1), slotMs);
      timer.unref();
      this.timers.add(timer);
    }
  }

  get slot(): number {
    return this.currentSlot;
  }

  /** One block per slot on this chain, so the block height is the slot. */
  get blockHeight(): number {
    return this.currentSlot;
  }

  get epochInfo(): { epoch: number; slotIndex: number; slotsInEpoch: number; transactionCount: number } {
    return {
      epoch: Math.floor(this.currentSlot / SLOTS_PER_EPOCH),
      slotIndex: this.currentSlot % SLOTS_PER_EPOCH,
      slotsInEpoch: SLOTS_PER_EPOCH,
      transactionCount: this.transactionCount,
    };
  }

  /** Sends held by `landDelayMs` that have not executed yet. */
  get heldSends(): number {
    return this.held.size;
  }

  /** Whether a send with this signature reached the chain and is held, not yet executed. */
  isHeld(signature: string): boolean {
    return this.held.has(signature);
  }

  /**
   * Runs every held send now, in the order sent: a test holds sends with a long `landDelayMs` and
   * lands them when it chooses, instead of racing a timer against a busy machine.
   */
  landHeldSends(): void {
    const sends = [...this.held.values()];
    this.held.clear();
    for (const tx of sends) this.execute(tx);
  }

  stop(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.held.clear();
  }

  advanceSlots(n: number): void {
    for (let i = 0; i < n; i++) {
      this.currentSlot += 1;
      this.produceBlock();
    }
  }

  /** A new blockhash for the new slot, and the Clock sysvar moved to this slot and time. */
  private produceBlock(): void {
    this.svm.expireBlockhash();
    this.window.record(this.svm.latestBlockhash(), this.blockHeight);
    this.window.prune(this.blockHeight);
    const clock = this.svm.getClock();
    clock.slot = BigInt(this.currentSlot);
    clock.epoch = BigInt(Math.floor(this.currentSlot / SLOTS_PER_EPOCH));
    clock.unixTimestamp = BigInt(Math.floor(this.now() / 1000));
    this.svm.setClock(clock);
  }

  latestBlockhash(): IssuedBlockhash {
    return this.window.latest();
  }

  isBlockhashValid(blockhash: string): boolean {
    return this.window.isValid(blockhash, this.blockHeight);
  }

  onLanded(listener: (e: LandedEvent) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** Each distinct transaction's first `n` sends are acknowledged and silently dropped. */
  dropFirstSends(n: number): void {
    this.faults.dropFirstSends = n;
  }

  /**
   * From the current slot on, sends bidding less than the moving threshold are dropped as a congested
   * leader drops them, and getRecentPrioritizationFees reports the fees that landed (see Congestion).
   * `undefined` turns it off.
   */
  congest(settings: CongestionSettings | undefined): void {
    this.faults.congestion = settings === undefined ? undefined : new Congestion(settings, this.currentSlot);
  }

  /**
   * sendTransaction as an RPC node does it: preflight (unless skipped), then execution now or after
   * `landDelayMs`. Returns the signature. A signature already landed or in flight is not run again.
   * With preflight skipped, a transaction that cannot be included (bad signature, unknown or expired
   * blockhash, no fee) is acknowledged and never lands, as on mainnet.
   */
  send(bytes: Uint8Array, options: { skipPreflight?: boolean } = {}): string {
    const tx = decodeWireTransaction(bytes);
    if (this.landed.has(tx.signature) || this.held.has(tx.signature)) return tx.signature;
    if (options.skipPreflight !== true) {
      const simulation = this.simulateWire(tx, { sigVerify: true });
      if (simulation.err === "SignatureFailure") throw new SignatureVerificationFailure();
      if (simulation.err !== null) throw new PreflightFailure(simulation);
    }
    const attempt = (this.sendAttempts.get(tx.signature) ?? 0) + 1;
    this.sendAttempts.set(tx.signature, attempt);
    if (attempt <= this.faults.dropFirstSends) {
      this.logger?.debug({ signature: tx.signature, attempt }, "send dropped by fault knob");
      return tx.signature;
    }
    const delayMs = this.faults.landDelayMs;
    if (delayMs > 0) {
      this.held.set(tx.signature, tx);
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        if (this.held.delete(tx.signature)) this.execute(tx);
      }, delayMs);
      timer.unref();
      this.timers.add(timer);
      return tx.signature;
    }
    this.execute(tx);
    return tx.signature;
  }

  /** Runs a transaction into the current slot; records and announces it if it was included. */
  private execute(tx: WireTransaction): LandedRecord | undefined {
    if (this.landed.has(tx.signature)) return this.landed.get(tx.signature);
    if (!this.window.isValid(tx.blockhash, this.blockHeight)) {
      this.logger?.debug({ signature: tx.signature }, "transaction dropped: blockhash not found");
      return undefined;
    }
    const price = computeUnitPriceOf(tx.message);
    const congestion = this.faults.congestion;
    if (congestion !== undefined && !congestion.admits(price, this.currentSlot)) {
      this.logger?.debug(
        { signature: tx.signature, price, threshold: congestion.thresholdAt(this.currentSlot) },
        "send dropped by congestion: bid below the threshold",
      );
      return undefined;
    }
    const accounts = this.resolve(tx);
    // Each account read once before and once after, each mint's decimals once: reads were the chain's
    // dearest step on a claim burst, on the same machine as the keeper it serves.
    const decimals = new Map<string, number>();
    const before = this.balancesOf(
      accounts.keys.map((key) => this.getAccount(key)),
      decimals,
    );
    const result = this.svm.sendTransaction(toSvmTransaction(tx));
    const failed = result instanceof FailedTransactionMetadata;
    const err = failed ? toRpcTransactionError(result.err()) : null;
    if (err !== null && !landsWithError(err)) {
      this.logger?.debug({ signature: tx.signature, err }, "transaction not included");
      return undefined;
    }
    const meta = failed ? result.meta() : result;
    const after = this.balancesOf(
      accounts.keys.map((key) => this.getAccount(key)),
      decimals,
    );
    const record: LandedRecord = {
      signature: tx.signature,
      slot: this.currentSlot,
      blockTime: Math.floor(this.now() / 1000),
      err,
      logs: meta.logs(),
      fee: feeForMessage(tx.message),
      unitsConsumed: Number(meta.computeUnitsConsumed()),
      innerInstructions: innerGroups(meta),
      accounts,
      preBalances: before.lamports,
      postBalances: after.lamports,
      preTokenBalances: before.tokens,
      postTokenBalances: after.tokens,
      transaction: tx,
    };
    this.landed.set(tx.signature, record);
    congestion?.recordLanded(price, record.slot);
    this.sendAttempts.delete(tx.signature);
    this.transactionCount += 1;
    if (err === null)
      this.announce({ signature: tx.signature, slot: record.slot, err, memos: memosOf(tx.message) });
    return record;
  }

  private announce(event: LandedEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (error) {
        this.logger?.warn({ err: error, signature: event.signature }, "onLanded listener threw");
      }
    }
  }

  simulate(bytes: Uint8Array, options: SimulateOptions = {}): SimulationOutcome {
    return this.simulateWire(decodeWireTransaction(bytes), options);
  }

  private simulateWire(original: WireTransaction, options: SimulateOptions): SimulationOutcome {
    let tx = original;
    let replacementBlockhash: IssuedBlockhash | undefined;
    if (options.replaceRecentBlockhash === true) {
      replacementBlockhash = this.window.latest();
      tx = withBlockhash(original, replacementBlockhash.blockhash);
    }
    const accountKeys = this.resolve(tx).keys;
    if (!this.window.isValid(tx.blockhash, this.blockHeight)) {
      return {
        err: BLOCKHASH_NOT_FOUND,
        logs: [],
        unitsConsumed: 0,
        returnData: null,
        innerInstructions: [],
        accountKeys,
        accounts: null,
      };
    }
    const sigVerify = options.sigVerify ?? false;
    this.svm.withSigverify(sigVerify);
    let result: ReturnType<LiteSVM["simulateTransaction"]>;
    try {
      result = this.svm.simulateTransaction(toSvmTransaction(tx));
    } finally {
      this.svm.withSigverify(true);
    }
    const failure = result instanceof FailedTransactionMetadata ? result : undefined;
    const meta = result.meta();
    const post = new Map<string, ChainAccount>();
    if (!(result instanceof FailedTransactionMetadata)) {
      for (const account of result.postAccounts()) {
        const address = new PublicKey(account.address);
        post.set(account.address, {
          address,
          lamports: BigInt(account.lamports),
          owner: new PublicKey(account.programAddress),
          data: Uint8Array.from(account.data),
          executable: account.executable,
        });
      }
    }
    const returned = meta.returnData();
    const returnBytes = returned.data();
    const outcome: SimulationOutcome = {
      err: failure === undefined ? null : toRpcTransactionError(failure.err()),
      logs: meta.logs(),
      unitsConsumed: Number(meta.computeUnitsConsumed()),
      returnData:
        returnBytes.length === 0 ? null : { programId: bs58.encode(returned.programId()), data: returnBytes },
      innerInstructions: innerGroups(meta),
      accountKeys,
      accounts:
        failure !== undefined
          ? null
          : (options.accountAddresses ?? []).map(
              (address) => post.get(address.toBase58()) ?? this.getAccount(address),
            ),
    };
    return replacementBlockhash === undefined ? outcome : { ...outcome, replacementBlockhash };
  }

  private resolve(tx: WireTransaction): ResolvedAccounts {
    return resolveAccounts(tx.message, (key) => this.getAccount(key)?.data);
  }

  transaction(signature: string): LandedRecord | undefined {
    return this.landed.get(signature);
  }

  signatureStatus(signature: string): SignatureStatus | null {
    const record = this.landed.get(signature);
    if (record === undefined) return null;
    const age = this.currentSlot - record.slot;
    const confirmationStatus: ConfirmationStatus =
      age >= this.finalizedAfter ? "finalized" : age >= this.confirmedAfter ? "confirmed" : "processed";
    return {
      slot: record.slot,
      confirmations: confirmationStatus === "finalized" ? null : age,
      err: record.err,
      confirmationStatus,
    };
  }

  /**
   * The newest `limit` landed transactions that touch `address` (any account of their message, lookups
   * resolved), newest first, as a node's getSignaturesForAddress lists them. A scan: asked rarely.
   */
  signaturesFor(address: PublicKey, limit: number): LandedRecord[] {
    const found: LandedRecord[] = [];
    const records = [...this.landed.values()];
    for (let i = records.length - 1; i >= 0 && found.length < limit; i -= 1) {
      const record = records[i] as LandedRecord;
      if (record.accounts.keys.some((key) => key.equals(address))) found.push(record);
    }
    return found;
  }

  // ---- state helpers for the sandbox and tests ----

  getAccount(address: PublicKey): ChainAccount | null {
    const native = nativeSide(this.svm);
    if (native !== undefined) {
      const account = native.getAccount(address.toBytes());
      if (account === null) return null;
      return {
        address,
        lamports: account.lamports(),
        owner: new PublicKey(account.owner()),
        data: account.data(),
        executable: account.executable(),
      };
    }
    const account = this.svm.getAccount(address.toBase58() as Parameters<LiteSVM["getAccount"]>[0]);
    if (!account.exists) return null;
    return {
      address,
      lamports: BigInt(account.lamports),
      owner: new PublicKey(account.programAddress),
      data: account.data,
      executable: account.executable,
    };
  }

  /** Writes an account directly (genesis-style setup; no transaction, no signature). */
  setAccount(args: {
    address: PublicKey;
    lamports: bigint;
    owner: PublicKey;
    data: Uint8Array;
    executable?: boolean;
  }): void {
    this.svm.setAccount({
      address: args.address.toBase58(),
      lamports: args.lamports,
      programAddress: args.owner.toBase58(),
      data: args.data,
      executable: args.executable ?? false,
      space: BigInt(args.data.length),
    } as unknown as Parameters<LiteSVM["setAccount"]>[0]);
  }

  lamportsOf(address: PublicKey): number {
    return Number(this.getAccount(address)?.lamports ?? 0n);
  }

  minimumBalanceForRentExemption(dataLength: number): bigint {
    return this.svm.minimumBalanceForRentExemption(BigInt(dataLength));
  }

  /** Adds lamports to an account, creating a System-owned one if absent (no transaction, no history). */
  airdrop(address: PublicKey, lamports: bigint): void {
    const existing = this.getAccount(address);
    this.setAccount({
      address,
      lamports: (existing?.lamports ?? 0n) + lamports,
      owner: existing?.owner ?? SystemProgram.programId,
      data: existing?.data ?? new Uint8Array(),
      executable: existing?.executable ?? false,
    });
  }

  /**
   * Creates a mint (SPL Token unless `programId` says Token-2022) at the keypair's address, supply 0.
   * `authority: null` makes a mint nobody can mint from (the wrapped SOL mint).
   */
  createMint(args: {
    address: PublicKey | Keypair;
    decimals: number;
    authority: PublicKey | null;
    programId?: PublicKey;
  }): PublicKey {
    const address = args.address instanceof PublicKey ? args.address : args.address.publicKey;
    const data = encodeMint({ decimals: args.decimals, supply: 0n, authority: args.authority });
    this.setAccount({
      address,
      lamports: this.minimumBalanceForRentExemption(data.length),
      owner: args.programId ?? TOKEN_PROGRAM_ID,
      data,
    });
    return address;
  }

  /** Mints to the owner's associated token account, creating it if needed; raises the supply. */
  mintTo(mint: PublicKey, owner: PublicKey, amount: bigint): PublicKey {
    const [ata] = this.mintToMany(mint, [owner], amount);
    if (ata === undefined) throw new Error("mintTo: no account written");
    return ata;
  }

  /**
   * Mints `amount` to each owner's associated token account (genesis-style: no transaction), reading
   * and writing the mint once. For the wrapped SOL mint the accounts are native ones (lamports =
   * rent reserve + amount, as the SPL Token program keeps them) and the supply is left alone.
   */
  mintToMany(mint: PublicKey, owners: readonly PublicKey[], amount: bigint): PublicKey[] {
    const mintAccount = this.getAccount(mint);
    const mintState = mintAccount === null ? undefined : decodeMint(mintAccount.data);
    if (mintAccount === null || mintState === undefined) throw new Error(`not a mint: ${mint.toBase58()}`);
    const isNative = mint.equals(NATIVE_MINT);
    const reserve = this.minimumBalanceForRentExemption(ACCOUNT_SIZE);
    const atas: PublicKey[] = [];
    for (const owner of owners) {
      const ata = associatedAddress(mint, owner, mintAccount.owner);
      const current = this.getAccount(ata);
      const state = current === null ? undefined : decodeTokenAccount(current.data);
      const balance = (state?.amount ?? 0n) + amount;
      const data = encodeTokenAccount({
        mint,
        owner,
        amount: balance,
        ...(isNative ? { nativeReserve: reserve } : {}),
      });
      this.setAccount({
        address: ata,
        lamports: isNative ? reserve + balance : reserve,
        owner: mintAccount.owner,
        data,
      });
      atas.push(ata);
    }
    if (!isNative) {
      const mintData = encodeMint({
        decimals: mintState.decimals,
        supply: mintState.supply + amount * BigInt(owners.length),
        authority: mintState.mintAuthority,
      });
      this.setAccount({ ...mintAccount, data: mintData });
    }
    return atas;
  }

  /** Deploys a program's shared object at `programId` (no transaction: genesis-style). */
  addProgram(programId: PublicKey, elf: Uint8Array): void {
    this.svm.addProgram(programId.toBase58() as Parameters<LiteSVM["addProgram"]>[0], elf);
  }

  /**
   * Approves `delegate` for `amount` on a token account by writing its state (no transaction): for
   * accounts owned by a program-derived address, which only a program could approve for.
   */
  setTokenDelegate(account: PublicKey, delegate: PublicKey, amount: bigint): void {
    const current = this.getAccount(account);
    if (current === null || !isTokenProgram(current.owner))
      throw new Error(`no token account at ${account.toBase58()}`);
    this.setAccount({ ...current, data: withDelegate(current.data, delegate, amount) });
  }

  tokenAccount(address: PublicKey): TokenAccountState | undefined {
    const account = this.getAccount(address);
    if (account === null || !isTokenProgram(account.owner)) return undefined;
    return decodeTokenAccount(account.data);
  }

  mintDecimals(mint: PublicKey): number | undefined {
    const account = this.getAccount(mint);
    return account === null ? undefined : decodeMint(account.data)?.decimals;
  }

  /** The owner's balance in their associated token account for `mint` (0 if it has none). */
  tokenBalance(owner: PublicKey, mint: PublicKey): bigint {
    const programId = this.getAccount(mint)?.owner ?? TOKEN_PROGRAM_ID;
    const ata = associatedAddress(mint, owner, programId);
    return this.tokenAccount(ata)?.amount ?? 0n;
  }

  /** Every token account of `owner`, from both token programs. */
  tokenAccountsByOwner(
    owner: PublicKey,
  ): { address: PublicKey; account: ChainAccount; state: TokenAccountState }[] {
    const found: { address: PublicKey; account: ChainAccount; state: TokenAccountState }[] = [];
    for (const programId of TOKEN_PROGRAM_IDS) {
      for (const encoded of this.svm.getProgramAccounts(
        programId.toBase58() as Parameters<LiteSVM["getProgramAccounts"]>[0],
      )) {
        const data = Uint8Array.from(encoded.data);
        const state = decodeTokenAccount(data);
        if (state === undefined || !state.owner.equals(owner)) continue;
        const address = new PublicKey(encoded.address);
        found.push({
          address,
          state,
          account: {
            address,
            lamports: BigInt(encoded.lamports),
            owner: programId,
            data,
            executable: encoded.executable,
          },
        });
      }
    }
    return found;
  }

  /**
   * Writes an active, frozen address lookup table holding `addresses` (the ALT program's layout), so
   * `getAddressLookupTable` decodes it and v0 transactions can use it at once (it is marked as last
   * extended in the previous slot; entries added in the current slot would not be usable yet).
   */
  createLookupTable(addresses: readonly PublicKey[], address?: PublicKey): PublicKey {
    const tableAddress =
      address ??
      new PublicKey(
        createHash("sha256")
          .update(`lookup-table:${addresses.map((a) => a.toBase58()).join(",")}`)
          .digest(),
      );
    const data = encodeLookupTable({
      addresses,
      lastExtendedSlot: BigInt(Math.max(0, this.currentSlot - 1)),
    });
    this.setAccount({
      address: tableAddress,
      lamports: this.minimumBalanceForRentExemption(data.length),
      owner: ADDRESS_LOOKUP_TABLE_PROGRAM_ID,
      data,
    });
    return tableAddress;
  }

  /** Lamports and token balances of the transaction's accounts, from reads of them taken together. */
  private balancesOf(
    accounts: readonly (ChainAccount | null)[],
    decimals: Map<string, number>,
  ): { lamports: number[]; tokens: TokenBalanceEntry[] } {
    const tokens: TokenBalanceEntry[] = [];
    accounts.forEach((account, accountIndex) => {
      if (account === null || !isTokenProgram(account.owner)) return;
      const state = decodeTokenAccount(account.data);
      if (state === undefined) return;
      const mint = state.mint.toBase58();
      let mintDecimals = decimals.get(mint);
      if (mintDecimals === undefined) {
        mintDecimals = this.mintDecimals(state.mint) ?? 0;
        decimals.set(mint, mintDecimals);
      }
      tokens.push({
        accountIndex,
        mint,
        owner: state.owner.toBase58(),
        programId: account.owner.toBase58(),
        amount: state.amount,
        decimals: mintDecimals,
      });
    });
    return { lamports: accounts.map((account) => Number(account?.lamports ?? 0n)), tokens };
  }
}

/** LiteSVM's native side, which takes and gives addresses as bytes. */
interface NativeSvm {
  getAccount(pubkey: Uint8Array): Account | null;
}

/**
 * The native side under LiteSVM's wrapper, when it has the shape this version (pinned) has. The
 * wrapper's account read turns the address into base58 and back, and the owner too, with a BigInt
 * codec: on a claim burst that was a quarter of the sandbox's CPU, on the same machine as the keeper.
 * Another shape falls back to the wrapper.
 */
function nativeSide(svm: LiteSVM): NativeSvm | undefined {
  const inner = (svm as unknown as { inner?: Partial<NativeSvm> }).inner;
  return typeof inner?.getAccount === "function" ? (inner as NativeSvm) : undefined;
}

function innerGroups(meta: TransactionMetadata): InnerInstructionGroup[] {
  const groups: InnerInstructionGroup[] = [];
  meta.innerInstructions().forEach((inner, index) => {
    if (inner.length === 0) return;
    groups.push({
      index,
      instructions: inner.map((entry) => {
        const compiled = entry.instruction();
        return {
          programIdIndex: compiled.programIdIndex(),
          accounts: [...compiled.accounts()],
          data: compiled.data(),
          stackHeight: entry.stackHeight(),
        };
      }),
    });
  });
  return groups;
}

/** The same transaction with another recent blockhash (signatures kept; they no longer verify). */
function withBlockhash(tx: WireTransaction, blockhash: string): WireTransaction {
  const message = VersionedMessage.deserialize(tx.messageBytes);
  message.recentBlockhash = blockhash;
  return { ...tx, message, messageBytes: message.serialize(), blockhash };
}
