import { ACCOUNT_SIZE as TOKEN_ACCOUNT_SIZE } from "@solana/spl-token";
import {
  type AccountInfo,
  type Commitment,
  type Connection,
  PublicKey,
  type SimulatedTransactionResponse,
} from "@solana/web3.js";
import { PolicyRefusal, StaleTransaction, TransientError } from "../core/errors.js";
import type { Intent, OutflowAllowance } from "../core/intent.js";
import { addressOf, addressOrEmpty } from "./address-text.js";
import { type AllowanceOptions, allowanceFor } from "./allowance.js";
import { type ComputeBudget, readComputeBudget } from "./compute-budget.js";
import type { DecodedTransaction } from "./decode.js";
import { verifyEd25519 } from "./ed25519.js";
import {
  checkEffect,
  createdWalletTokenAccounts,
  type EffectContext,
  isNonceOp,
  newTotals,
} from "./effect-rules.js";
import { checkWhereFundsGo } from "./funds-destinations.js";
import { checkInflow, DEFAULT_PAYOUT_MINTS, type InflowExpectation } from "./inflow-rules.js";
import {
  type InstructionEffect,
  innerEffect,
  type RpcInnerInstruction,
  rawEffect,
} from "./instruction-effects.js";
import type { MintAccount } from "./mint-extensions.js";
import { DEFAULT_ALLOWED_PROGRAMS, NATIVE_MINT, SYSTEM_PROGRAM } from "./programs.js";
import { chargedNewAccounts, rentExemptMinimum, rentFreeMints } from "./rent-rules.js";
import { rpcCall } from "./rpc.js";
import {
  checkOutflow,
  compareStates,
  keptTokenAccounts,
  type PostAccount,
  tokensGained,
} from "./simulated-effects.js";
import { readTokenAccount, type TokenAccountState } from "./token-account.js";
import { transactionOfWire } from "./wire-transaction.js";

export interface PolicyConfig {
  /** Program ids of the service, on top of the allowed programs. */
  extraPrograms?: readonly string[];
  /** Replaces DEFAULT_ALLOWED_PROGRAMS (a stricter deployment may drop some). */
  allowedPrograms?: readonly string[];
  /** Refuse a SetComputeUnitPrice above this many micro-lamports per compute unit. */
  maxComputeUnitPriceMicroLamports: bigint;
  /**
   * The fee budget of one transaction, in lamports: refuse one whose priority fee (unit limit x unit
   * price, rounded up) plus base fee (lamportsPerSignature per required signature) is above it.
   */
  maxPriorityFeeLamports: bigint;
  /** Base fee per signature (5,000 lamports on mainnet). */
  lamportsPerSignature?: bigint;
  /** Commitment of the reads and the simulation (default confirmed). */
  commitment?: Commitment;
  /**
   * Ask the node `isBlockhashValid` too (default on): the caller's lastValidBlockHeight says nothing
   * about a blockhash the chain never issued. Off only for a node that does not answer the method.
   */
  checkBlockhashWithRpc?: boolean;
  allowance?: AllowanceOptions;
  /**
   * Mints a claim or close pays in (signer.payoutMints): a new wallet account of one of them costs a
   * claim nothing (rent-rules). Default: mainnet USDC and JupUSD.
   */
  payoutMints?: readonly string[];
  /** Token-2022 mints the wallet may receive whatever their extensions (signer.allowedToken2022Mints). */
  allowedToken2022Mints?: readonly string[];
  /**
   * Keys that sign after Keeper: the service's, at its execute endpoint (a Forecast swap). Their
   * signatures may be missing; set only for a transaction that goes there, from the signer's config.
   */
  laterSigners?: readonly string[];
}

/** The narrow view of a wallet holder the policy needs: which keys Keeper can sign for. */
export interface KeyHolder {
  has(publicKey: PublicKey | string): boolean;
}

export interface PolicyInput {
  decoded: DecodedTransaction;
  intent: Intent;
  wallets: KeyHolder;
  connection: Connection;
  config: PolicyConfig;
  /**
   * Already capped by the signer (capLastValidBlockHeight): a far-off height from the service is no
   * reason to refuse, it says nothing of what the transaction does; only the wait must not trust it.
   */
  lastValidBlockHeight: number;
  /**
   * The node's block height, when the caller just read it (the signer reads it once, at processed, for
   * the cap too); otherwise read here at the policy's commitment.
   */
  blockHeight?: number;
  /** Defaults to allowanceFor(intent). */
  allowance?: OutflowAllowance;
  /** What the simulation must show coming in (expectedInflow); none checked when absent. */
  inflow?: InflowExpectation;
  /** The order account the build named (a trigger order's `order`): its escrow must get the deposit. */
  order?: string;
}

export interface PolicyReport {
  wallet: string;
  feeLamports: bigint;
  budget: ComputeBudget;
  walletTokenAccounts: string[];
  innerPrograms: string[];
  unitsConsumed?: number;
  /**
   * Lamports the wallet loses (positive) or gains (negative) by the simulation, fees included: SOL
   * and wrapped SOL, across the wallet and its token accounts.
   */
  lamportsOut: bigint;
  tokensOut: Record<string, string>;
}

/**
 * Everything checked before the wallet signs. Every refusal is a PolicyRefusal with a bounded reason,
 * and says what is wrong with the transaction. What says nothing about it is not a refusal: a blockhash
 * the node no longer (or never) accepts is a StaleTransaction (rebuild), RPC failures and simulations
 * that could not run are TransientError / PermanentError (nothing was decided, the caller may retry).
 */
export async function checkTransaction(input: PolicyInput): Promise<PolicyReport> {
  const { decoded, intent, config, connection } = input;
  const commitment = config.commitment ?? "confirmed";
  const wallet = intent.wallet;
  const allowance = input.allowance ?? allowanceFor(intent, config.allowance);
  const budget = checkStatic(decoded, { wallet, wallets: input.wallets, config });

  await checkBlockhash(decoded, input.lastValidBlockHeight, connection, config, input.blockHeight);

  const keys = decoded.accountKeys.map((k) => k.pubkey);
  const programs = programKeys(decoded, allowedPrograms(config));
  let steady: SteadySimulation | undefined;
  for (let round = 1; steady === undefined; round += 1) {
    steady = await simulateOnSteadyState(input, allowance, keys, programs, commitment);
    if (steady === undefined && round >= STEADY_STATE_ROUNDS) {
      // Not a refusal: nothing is wrong with the transaction, the wallet was busy. The job retries.
      throw new TransientError(
        `the wallet's accounts changed during each of ${round} simulations (another transaction landing)`,
      );
    }
  }
  const { infos, walletTokens, topLevel, watched, sim } = steady;
  // The fee payer is never a program key (programKeys), so its account was read.
  const walletInfo = infos[0] === PROGRAM ? null : infos[0];

  const allowed = allowedPrograms(config);
  const { everyEffect, innerPrograms } = withInnerEffects(topLevel, sim.innerInstructions, allowed);
  const post = postState(sim.accounts, watched);
  const newAccounts = new Set(
    decoded.accountKeys.filter((_, i) => isBlank(infos[i])).map((k) => addressOf(k.pubkey)),
  );
  const walletTokensAfter = keptTokenAccounts(post, walletTokens, newAccounts, wallet);
  const rentCharged = chargedNewAccounts(
    walletTokens,
    walletTokensAfter,
    rentFreeMints(intent, config.payoutMints ?? DEFAULT_PAYOUT_MINTS),
  );
  const everyWalletToken = new Map<string, { mint: string }>([
    ...walletTokens,
    // An account the wallet held before with that mint, or holds after (merged last), needs no derivation.
    ...createdWalletTokenAccounts(
      everyEffect,
      wallet,
      (account, mint) => walletTokensAfter.has(account) || walletTokens.get(account)?.mint === mint,
    ),
    ...walletTokensAfter,
  ]);

  // Second pass, every instruction in execution order, with what the simulation showed is the
  // wallet's: SOL may only go into the wallet's own token accounts, rent only for the order's accounts
  // and the wallet's accounts of the mints the intent receives or spends.
  checkEffects(everyEffect, {
    wallet,
    allowance,
    simulated: true,
    walletTokens: everyWalletToken,
    rentCharged,
    rentLacking: (account) => rentLacking(account, decoded, infos, post, everyWalletToken.get(account)?.mint),
  });

  const feeLamports =
    (config.lamportsPerSignature ?? 5_000n) * BigInt(decoded.header.numRequiredSignatures) +
    budget.priorityFeeLamports;
  const { lamportsOut, tokensOut } = compareStates(
    walletInfo,
    post.get(wallet),
    walletTokens,
    walletTokensAfter,
    post,
    wallet,
    new Set(rentCharged.keys()),
  );
  checkOutflow({ lamportsOut, tokensOut }, feeLamports, allowance);
  await checkWhereFundsGo(
    {
      intent,
      wallet,
      ...(input.order !== undefined ? { order: input.order } : {}),
      effects: everyEffect,
      walletTokens: everyWalletToken,
      walletTokensBefore: walletTokens,
      ...accountsBefore(decoded, infos),
      post,
    },
    {
      allowedPrograms: allowed,
      allowedToken2022Mints: new Set(config.allowedToken2022Mints ?? []),
      readAccounts: (addresses) => readAccounts(connection, addresses, commitment),
      readEpoch: async () =>
        BigInt((await rpcCall("getEpochInfo", () => connection.getEpochInfo(commitment))).epoch),
    },
  );
  if (input.inflow) {
    const gained = tokensGained(walletTokens, walletTokensAfter);
    // SOL comes back as lamports (a swap to SOL unwraps), fees not counted against it.
    gained.set(NATIVE_MINT, feeLamports - lamportsOut);
    checkInflow(input.inflow, gained);
  }
  const report: PolicyReport = {
    wallet,
    feeLamports,
    budget,
    walletTokenAccounts: [...walletTokens.keys()],
    innerPrograms: [...innerPrograms],
    lamportsOut,
    tokensOut: Object.fromEntries([...tokensOut].map(([m, v]) => [m, v.toString()])),
  };
  if (sim.unitsConsumed !== undefined) report.unitsConsumed = sim.unitsConsumed;
  return report;
}

/**
 * Every instruction in execution order: each top-level one followed by the ones it invoked (inner
 * groups under an index past the top-level ones last). A CPI to a program off the allow-list is refused.
 */
function withInnerEffects(
  topLevel: readonly InstructionEffect[],
  groups: NonNullable<SimulatedTransactionResponse["innerInstructions"]>,
  allowed: ReadonlySet<string>,
): { everyEffect: InstructionEffect[]; innerPrograms: Set<string> } {
  const innerPrograms = new Set<string>();
  const innerOf = new Map<number, InstructionEffect[]>();
  for (const group of groups) {
    const effects = innerOf.get(group.index) ?? [];
    group.instructions.forEach((ix, j) => {
      const effect = innerEffect(`${group.index}.${j}`, ix as RpcInnerInstruction);
      innerPrograms.add(effect.programId);
      if (!allowed.has(effect.programId)) {
        throw new PolicyRefusal(
          "program_not_allowed",
          `inner instruction ${effect.where} calls ${effect.programId}, not on the allow-list`,
        );
      }
      effects.push(effect);
    });
    innerOf.set(group.index, effects);
  }
  const everyEffect = [
    ...topLevel.flatMap((effect, i) => [effect, ...(innerOf.get(i) ?? [])]),
    ...[...innerOf].filter(([i]) => i >= topLevel.length).flatMap(([, effects]) => effects),
  ];
  return { everyEffect, innerPrograms };
}

/** The simulation's post-state of the watched accounts, by address (null: none there after it). */
function postState(
  accounts: NonNullable<SimulatedTransactionResponse["accounts"]>,
  watched: readonly string[],
): Map<string, PostAccount | null> {
  const post = new Map<string, PostAccount | null>();
  accounts.forEach((a, i) => {
    // Stryker disable next-line StringLiteral: only for a node that sends no data; any short bytes read as no token account, like none.
    const base64 = a?.data[0] ?? "";
    post.set(
      watched[i] as string,
      a ? { owner: a.owner, lamports: a.lamports, data: Buffer.from(base64, "base64") } : null,
    );
  });
  return post;
}

/** Simulations tried before a wallet that keeps changing is left to the job's retry. */
const STEADY_STATE_ROUNDS = 3;

/** An account not read because it is a program (programKeys): its data is code, which no check reads. */
const PROGRAM = "program";
type AccountRead = AccountInfo<Buffer> | null | typeof PROGRAM;

interface SteadySimulation {
  infos: AccountRead[];
  walletTokens: Map<string, TokenAccountState>;
  topLevel: InstructionEffect[];
  watched: string[];
  /** A simulation that succeeded with inner instructions and the watched accounts' post-state. */
  sim: SimulatedTransactionResponse & {
    innerInstructions: NonNullable<SimulatedTransactionResponse["innerInstructions"]>;
    accounts: NonNullable<SimulatedTransactionResponse["accounts"]>;
  };
}

/**
 * Reads the pre-state of every account the transaction names (lookup-table accounts included),
 * checks the top-level instructions, simulates, and reads the pre-state again. The outflow is the
 * difference between the pre-state and the simulation's post-state, so both must describe the same
 * state: when another transaction of the wallet lands in between (a second close of the same wallet,
 * say), its fee or transfer would be counted as this one's. Undefined when the accounts moved.
 */
async function simulateOnSteadyState(
  input: PolicyInput,
  allowance: OutflowAllowance,
  keys: readonly PublicKey[],
  programs: ReadonlySet<string>,
  commitment: Commitment,
): Promise<SteadySimulation | undefined> {
  const { decoded, connection } = input;
  const wallet = input.intent.wallet;
  const infos = await getAccounts(connection, keys, programs, commitment);
  const walletTokens = new Map<string, TokenAccountState>();
  decoded.accountKeys.forEach((key, i) => {
    const info = infos[i];
    const token = info === PROGRAM ? null : readTokenAccount(info);
    if (token && token.owner === wallet) walletTokens.set(addressOf(key.pubkey), token);
  });

  // First pass, top-level instructions only: what needs no simulation is refused before one (a
  // simulation that fails would hide the reason).
  const topLevel = decoded.instructions.map((ix) =>
    rawEffect(
      String(ix.index),
      addressOf(ix.programId),
      ix.accounts.map((a) => addressOf(a)),
      ix.data,
    ),
  );
  checkEffects(topLevel, {
    wallet,
    allowance,
    simulated: false,
    walletTokens: new Map<string, { mint: string }>([
      ...walletTokens,
      ...createdWalletTokenAccounts(
        topLevel,
        wallet,
        (account, mint) => walletTokens.get(account)?.mint === mint,
      ),
    ]),
  });

  // Simulate with the post-state of every account whose lamports or data can change (the writable
  // ones, the wallet first as fee payer) and of the wallet's token accounts; inner instructions show
  // every CPI.
  const watched = decoded.accountKeys
    .filter((k) => k.isWritable || walletTokens.has(addressOf(k.pubkey)))
    .map((k) => addressOf(k.pubkey));
  if (watched[0] !== wallet) throw new PolicyRefusal("fee_payer", "the fee payer is not writable");
  const simulation = await rpcCall("simulateTransaction", () =>
    connection.simulateTransaction(transactionOfWire(decoded.wire.bytes), {
      sigVerify: false,
      replaceRecentBlockhash: false,
      commitment,
      innerInstructions: true,
      accounts: { encoding: "base64", addresses: watched },
    }),
  );
  const sim = simulation.value;
  if (sim.err) throw simulationError(sim.err, sim.logs);
  // A node that leaves these out did not run the checks we asked for: not the transaction's fault.
  if (!sim.innerInstructions) throw new TransientError("simulation: the node returned no inner instructions");
  if (!sim.accounts || sim.accounts.length !== watched.length) {
    throw new TransientError("simulation: the node returned no post-state for the wallet's accounts");
  }
  const again = await getAccounts(connection, keys, programs, commitment);
  if (!heldStill(keys, wallet, walletTokens, infos, again)) return undefined;
  const { innerInstructions, accounts } = sim;
  return { infos, walletTokens, topLevel, watched, sim: { ...sim, innerInstructions, accounts } };
}

/**
 * Transaction errors of a simulation that say nothing about what the transaction does: the node could
 * not run it now (its blockhash is gone, the block or the cluster is busy, the fee payer cannot pay
 * the fee yet). Any other error is the transaction's own (an instruction fails): a refusal.
 */
const STALE_SIMULATION_ERRORS = new Set(["BlockhashNotFound"]);
const TRANSIENT_SIMULATION_ERRORS = new Set([
  "AccountInUse",
  "AccountNotFound",
  "AlreadyProcessed",
  "ClusterMaintenance",
  "InsufficientFundsForFee",
  "ProgramCacheHitMaxLimit",
  "ResanitizationNeeded",
  "WouldExceedAccountDataBlockLimit",
  "WouldExceedAccountDataTotalLimit",
  "WouldExceedMaxAccountCostLimit",
  "WouldExceedMaxBlockCostLimit",
  "WouldExceedMaxVoteCostLimit",
]);

export function simulationError(err: unknown, logs?: readonly string[] | null): Error {
  const detail = `simulation: ${JSON.stringify(err)}`;
  // The sets hold error names; an error that is an object (an instruction's) is in neither.
  if (STALE_SIMULATION_ERRORS.has(err as string)) return new StaleTransaction(detail);
  if (TRANSIENT_SIMULATION_ERRORS.has(err as string)) return new TransientError(detail);
  const tail = (logs ?? []).slice(-5).join(" | ");
  return new PolicyRefusal("simulation_failed", `${JSON.stringify(err)}${tail ? `; logs: ${tail}` : ""}`);
}

/**
 * Whether what the outflow is computed from held still between the two reads: the wallet and its
 * token accounts unchanged, and no account created or closed (one created meanwhile could be taken
 * for one this transaction creates). Someone else's account may change: a market's vault pays every
 * winner, and the claims of a resolved market land together; the simulated post-state of the
 * wallet's accounts does not depend on it, and comparing it failed most claims of a burst three times.
 */
function heldStill(
  keys: readonly PublicKey[],
  wallet: string,
  walletTokens: ReadonlyMap<string, TokenAccountState>,
  before: readonly AccountRead[],
  after: readonly AccountRead[],
): boolean {
  return before.every((info, i) => {
    const key = addressOrEmpty(keys[i]);
    if (key === wallet || walletTokens.has(key)) return sameAccount(info, after[i]);
    return isBlank(info) === isBlank(after[i]);
  });
}

function sameAccount(a: AccountRead, b: AccountRead | undefined): boolean {
  if (a === PROGRAM || b === PROGRAM) return a === b;
  if (!a || !b) return !a && !b;
  return a.lamports === b.lamports && a.owner.equals(b.owner) && a.data.equals(b.data);
}

function checkEffects(effects: readonly InstructionEffect[], ctx: EffectContext): void {
  const totals = newTotals();
  for (const effect of effects) checkEffect(effect, ctx, totals);
}

interface StaticContext {
  wallet: string;
  wallets: KeyHolder;
  config: PolicyConfig;
}

/** The checks that need no RPC: fee payer, signers and signatures, programs, compute budget and fee. */
export function checkStatic(decoded: DecodedTransaction, ctx: StaticContext): ComputeBudget {
  const { wallet, wallets, config } = ctx;
  if (!wallets.has(wallet)) throw new PolicyRefusal("wallet_not_held", `Keeper holds no key for ${wallet}`);
  const feePayer = addressOf(decoded.feePayer);
  if (feePayer !== wallet) {
    throw new PolicyRefusal("fee_payer", `fee payer ${feePayer} is not the intent's wallet ${wallet}`);
  }
  for (const signer of decoded.signers) {
    const key = addressOf(signer.pubkey);
    if (signer.isSigned) {
      // A co-signature must be valid for these exact bytes, or the transaction could never land
      // (and a crafted one must not be passed on under our signature).
      if (!verifyEd25519(signer.pubkey.toBytes(), decoded.messageBytes, signer.signature)) {
        throw new PolicyRefusal("invalid_signature", `the existing signature of ${key} does not verify`);
      }
    } else if (key !== wallet && !(config.laterSigners ?? []).includes(key)) {
      const whose = wallets.has(key) ? "another wallet Keeper holds" : "a key Keeper does not hold";
      throw new PolicyRefusal("foreign_signer", `${key} must sign and has not: ${whose}`);
    }
  }
  // A durable nonce keeps the transaction valid past its blockhash, so a rebuild after "expiry" could
  // land twice. Refused here, before the blockhash check: its blockhash is the nonce, which the node
  // never issued, and it would pass for a stale transaction instead of a refusal.
  for (const ix of decoded.instructions) {
    const effect = rawEffect(String(ix.index), addressOf(ix.programId), [], ix.data);
    if (isNonceOp(effect)) {
      throw new PolicyRefusal("durable_nonce", `instruction ${ix.index}: System ${effect.op}`);
    }
  }
  const allowed = allowedPrograms(config);
  for (const ix of decoded.instructions) {
    const program = addressOf(ix.programId);
    if (!allowed.has(program)) {
      throw new PolicyRefusal(
        "program_not_allowed",
        `instruction ${ix.index} calls ${program}, not on the allow-list`,
      );
    }
  }
  let budget: ComputeBudget;
  try {
    budget = readComputeBudget(decoded.instructions);
  } catch (error) {
    throw new PolicyRefusal("decode_failed", (error as Error).message);
  }
  if (budget.unitPriceMicroLamports > config.maxComputeUnitPriceMicroLamports) {
    throw new PolicyRefusal(
      "compute_price_too_high",
      `compute unit price ${budget.unitPriceMicroLamports} micro-lamports, ceiling ${config.maxComputeUnitPriceMicroLamports}`,
    );
  }
  // The budget is what the transaction can cost in all: the base fee counts, not only the priority fee.
  const signatures = BigInt(decoded.header.numRequiredSignatures);
  const baseFeeLamports = (config.lamportsPerSignature ?? 5_000n) * signatures;
  if (budget.priorityFeeLamports + baseFeeLamports > config.maxPriorityFeeLamports) {
    throw new PolicyRefusal(
      "priority_fee_too_high",
      `fee ${budget.priorityFeeLamports + baseFeeLamports} lamports: priority ${budget.priorityFeeLamports} (${budget.unitLimit} units x ${budget.unitPriceMicroLamports} micro-lamports) + base ${baseFeeLamports} (${signatures} signatures), budget ${config.maxPriorityFeeLamports}`,
    );
  }
  // The runtime refuses a transaction that repeats a compute budget instruction (DuplicateInstruction),
  // so such a one can never land: a builder that sends one is broken or is trying which of the values
  // gets read. Refused outright (after the fee checks above, which name the figures when one is too high).
  if (budget.priceInstructions > 1 || budget.limitInstructions > 1) {
    throw new PolicyRefusal(
      "compute_budget_duplicate",
      `${budget.priceInstructions} SetComputeUnitPrice and ${budget.limitInstructions} SetComputeUnitLimit instructions; at most one of each`,
    );
  }
  return budget;
}

function allowedPrograms(config: PolicyConfig): Set<string> {
  // Stryker disable next-line ArrayDeclaration: a program id is base58, never the mutant's "Stryker was here" (it has spaces).
  const extra = config.extraPrograms ?? [];
  return new Set([...(config.allowedPrograms ?? DEFAULT_ALLOWED_PROGRAMS), ...extra]);
}

async function checkBlockhash(
  decoded: DecodedTransaction,
  lastValidBlockHeight: number,
  connection: Connection,
  config: PolicyConfig,
  blockHeight: number | undefined,
): Promise<void> {
  const commitment = config.commitment ?? "confirmed";
  const height =
    blockHeight ?? (await rpcCall("getBlockHeight", () => connection.getBlockHeight(commitment)));
  if (height > lastValidBlockHeight) {
    throw new StaleTransaction(
      `block height ${height} is past the transaction's last valid block height ${lastValidBlockHeight}`,
    );
  }
  if (config.checkBlockhashWithRpc !== false) {
    const valid = await rpcCall("isBlockhashValid", () =>
      connection.isBlockhashValid(decoded.recentBlockhash, { commitment }),
    );
    if (!valid.value) {
      throw new StaleTransaction(
        `the node does not accept the blockhash ${decoded.recentBlockhash} (expired or never issued)`,
      );
    }
  }
}

const MAX_ACCOUNTS_PER_CALL = 100;

/**
 * The account keys that are programs: those the top-level instructions invoke and the allow-listed
 * ones (which inner instructions invoke), but never the fee payer. Their data is their code (the
 * associated-token program's is ~105 KB here, the token program's ~134 KB on mainnet), read twice per
 * check for nothing: a program is no token account of the wallet, exists (never new) and cannot be
 * changed by the transaction.
 */
function programKeys(decoded: DecodedTransaction, allowed: ReadonlySet<string>): Set<string> {
  const programs = new Set(decoded.instructions.map((ix) => addressOf(ix.programId)));
  for (const key of decoded.accountKeys)
    if (allowed.has(addressOf(key.pubkey))) programs.add(addressOf(key.pubkey));
  programs.delete(addressOrEmpty(decoded.accountKeys[0]?.pubkey));
  return programs;
}

/** Each key's account, in order; a program key (in `programs`) is not read and stands as PROGRAM. */
async function getAccounts(
  connection: Connection,
  keys: readonly PublicKey[],
  programs: ReadonlySet<string>,
  commitment: Commitment,
): Promise<AccountRead[]> {
  const toRead = keys.filter((k) => !programs.has(addressOf(k)));
  const read: (AccountInfo<Buffer> | null)[] = [];
  for (let i = 0; i < toRead.length; i += MAX_ACCOUNTS_PER_CALL) {
    const chunk = toRead.slice(i, i + MAX_ACCOUNTS_PER_CALL);
    read.push(
      ...(await rpcCall("getMultipleAccountsInfo", () =>
        connection.getMultipleAccountsInfo(chunk, commitment),
      )),
    );
  }
  let next = 0;
  return keys.map((k) => (programs.has(addressOf(k)) ? PROGRAM : (read[next++] ?? null)));
}

/** The transaction's accounts as read before the simulation (programs left out), and its token accounts. */
function accountsBefore(
  decoded: DecodedTransaction,
  infos: readonly AccountRead[],
): { accountsBefore: Map<string, MintAccount | null>; tokensBefore: Map<string, TokenAccountState> } {
  const accounts = new Map<string, MintAccount | null>();
  const tokens = new Map<string, TokenAccountState>();
  decoded.accountKeys.forEach((key, i) => {
    const info = infos[i];
    if (info === PROGRAM || info === undefined) return;
    const address = addressOf(key.pubkey);
    accounts.set(address, info ? asRawAccount(info) : null);
    const token = readTokenAccount(info);
    if (token) tokens.set(address, token);
  });
  return { accountsBefore: accounts, tokensBefore: tokens };
}

function asRawAccount(info: AccountInfo<Buffer>): MintAccount {
  return { owner: addressOf(info.owner), lamports: info.lamports, data: info.data };
}

/** Accounts outside the transaction (an authority, a mint), in as few calls as the node allows. */
async function readAccounts(
  connection: Connection,
  addresses: readonly string[],
  commitment: Commitment,
): Promise<Map<string, MintAccount | null>> {
  const keys = addresses.map((address) => new PublicKey(address));
  const infos = await getAccounts(connection, keys, new Set(), commitment);
  return new Map(
    addresses.map((address, i) => {
      const info = infos[i];
      return [address, info && info !== PROGRAM ? asRawAccount(info) : null];
    }),
  );
}

/**
 * What `account` lacked of its rent exemption before the transaction, for its size after: the rent
 * the associated token program pays into it by transfer when the address already held lamports. Read
 * only for a transfer into a token account of the wallet, which honest transactions make rarely.
 */
function rentLacking(
  account: string,
  decoded: DecodedTransaction,
  infos: readonly AccountRead[],
  post: ReadonlyMap<string, PostAccount | null>,
  mint: string | undefined,
): bigint {
  const before = infos[decoded.accountKeys.findIndex((k) => addressOf(k.pubkey) === account)];
  const size = sizeAfter(post, account, mint);
  // Not watched, or gone after it with no size known: nothing of it to fund.
  if (size === undefined || before === undefined || before === PROGRAM) return 0n;
  const lacked = rentExemptMinimum(size) - BigInt(before?.lamports ?? 0);
  return lacked > 0n ? lacked : 0n;
}

/**
 * The size of `account` after the transaction. One the transaction closed (back to the wallet: the
 * close rule) has none left; a wrapped SOL account, opened and closed around a SOL-input swap, had
 * the size of every SPL Token account (the native mint is SPL Token's, which takes no other size).
 */
function sizeAfter(
  post: ReadonlyMap<string, PostAccount | null>,
  account: string,
  mint: string | undefined,
): number | undefined {
  if (!post.has(account)) return undefined;
  const after = post.get(account);
  if (after && after.lamports > 0) return after.data.length;
  return mint === NATIVE_MINT ? TOKEN_ACCOUNT_SIZE : undefined;
}

/** No account yet: absent, or bare lamports (a System account without data, e.g. pre-funded). */
function isBlank(info: AccountRead | undefined): boolean {
  if (info === PROGRAM) return false;
  return !info || (addressOf(info.owner) === SYSTEM_PROGRAM && info.data.length === 0);
}
