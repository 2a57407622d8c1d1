import { getAssociatedTokenAddressSync } from "@solana/spl-token";
import { PublicKey } from "@solana/web3.js";
import { PolicyRefusal } from "../core/errors.js";
import type { OutflowAllowance } from "../core/intent.js";
import type { InstructionEffect } from "./instruction-effects.js";
import {
  ASSOCIATED_TOKEN_PROGRAM,
  isTokenProgram,
  NATIVE_MINT,
  SYSTEM_PROGRAM,
  TOKEN_PROGRAM,
} from "./programs.js";

/**
 * Rules on what single instructions do to the wallet. The simulation would catch most outflows
 * anyway; these name the attack precisely and catch what a balance comparison cannot see (a delegate,
 * a new owner, a durable nonce that keeps a transaction alive past its blockhash, SOL paid to a
 * stranger while the same amount comes back from elsewhere).
 *
 * The policy runs them twice: on the top-level instructions before simulating (`simulated: false`),
 * then on every instruction, inner ones included, with the simulation's post-state known.
 */
export interface EffectContext {
  wallet: string;
  /**
   * The wallet's token accounts by address, with their mint: those it owns before the transaction,
   * those the transaction creates for it (createdWalletTokenAccounts), and, once simulated, those it
   * owns afterwards. Lamports that go into them stay the wallet's.
   */
  walletTokens: ReadonlyMap<string, { readonly mint: string }>;
  allowance: OutflowAllowance;
  /**
   * Whether walletTokens is final (the simulation's post-state is in it). Before, an account missing
   * from it may still become the wallet's, so the rules that depend on that wait for the second pass.
   */
  simulated: boolean;
  /**
   * New token accounts of the wallet that stay open after the transaction and whose mint the intent
   * neither receives nor spends (chargedNewAccounts): their rent is spent, not kept. Known once simulated.
   */
  rentCharged?: ReadonlyMap<string, { readonly mint: string }>;
  /**
   * Lamports a token account of the wallet lacked of its rent exemption before the transaction (for
   * its size after): the most a System transfer from the wallet may pay into it. Known once simulated.
   */
  rentLacking?: (account: string) => bigint;
}

/** Running totals across every instruction of one transaction. */
export interface EffectTotals {
  /** Lamports the wallet sends with plain System transfers (only ever to wrap SOL an order spends). */
  transferredLamports: bigint;
  /** Lamports the wallet puts into new accounts that are not its own (rent an order leaves behind). */
  foreignLamports: bigint;
  /**
   * Lamports the wallet puts toward the rent of each of its token accounts: System transfers counted
   * as rent, and what createAccount funded it with (after which it lacks nothing).
   */
  rentPaid: Map<string, bigint>;
  tokens: Map<string, bigint>;
}

const NONCE_OPS = new Set([
  "advanceNonce",
  "withdrawFromNonce",
  "initializeNonce",
  "authorizeNonce",
  "upgradeNonce",
]);
// Token operations that cannot take anything from the wallet (outflows are counted separately).
const HARMLESS_TOKEN_OPS = new Set([
  "initializeAccount",
  "initializeAccount2",
  "initializeAccount3",
  "initializeImmutableOwner",
  "syncNative",
  "revoke",
  "mintTo",
  "mintToChecked",
  "thawAccount",
  "getAccountDataSize",
]);
const SPEND_TOKEN_OPS = new Set(["transfer", "transferChecked", "burn", "burnChecked"]);
const INITIALIZE_ACCOUNT_OPS = new Set(["initializeAccount", "initializeAccount2", "initializeAccount3"]);

/** Whether an instruction is a durable nonce operation (System advance, withdraw, initialize, ...). */
export function isNonceOp(effect: InstructionEffect): boolean {
  return effect.programId === SYSTEM_PROGRAM && NONCE_OPS.has(effect.op);
}

export function newTotals(): EffectTotals {
  return { transferredLamports: 0n, foreignLamports: 0n, rentPaid: new Map(), tokens: new Map() };
}

/**
 * The token accounts the instructions create for the wallet (address → mint): associated token
 * accounts for it as owner (checked against their derivation) and accounts initialized with it as
 * owner. The wallet owns them from that instruction on, so lamports paid into them stay the wallet's
 * even when the transaction closes them again (closing pays the wallet).
 *
 * `isKnown(account, mint)`: the caller already counts the account as the wallet's, of that mint (read
 * from the chain), so an associated account's derivation could add nothing to what the caller merges
 * and is skipped. A claim's `createIdempotent` of the wallet's existing payout account is the common
 * case, and a derivation is the check's costliest arithmetic (~0.5 ms of curve checks).
 */
export function createdWalletTokenAccounts(
  effects: readonly InstructionEffect[],
  wallet: string,
  isKnown: (account: string, mint: string) => boolean = () => false,
): Map<string, { mint: string }> {
  const created = new Map<string, { mint: string }>();
  for (const effect of effects) {
    const { account, mint } = effect.roles;
    if (account === undefined || mint === undefined) continue;
    if (isTokenProgram(effect.programId) && INITIALIZE_ACCOUNT_OPS.has(effect.op)) {
      if (effect.roles.owner === wallet) created.set(account, { mint });
      continue;
    }
    if (effect.programId !== ASSOCIATED_TOKEN_PROGRAM) continue;
    if (effect.op !== "create" && effect.op !== "createIdempotent") continue;
    const tokenProgram = effect.roles.tokenProgram ?? TOKEN_PROGRAM;
    if (effect.roles.wallet !== wallet || !isTokenProgram(tokenProgram)) continue;
    if (isKnown(account, mint)) continue;
    if (associatedTokenAddress(mint, wallet, tokenProgram) === account) created.set(account, { mint });
  }
  return created;
}

/** Derivations already made: each costs ~0.5 ms of hashing, and a check derives the same ones 2-3 times. */
const derivedAddresses = new Map<string, string | undefined>();
const MAX_DERIVED_ADDRESSES = 4_096;

/** The associated token address of `owner` for `mint`; undefined when an input is not an address. */
function associatedTokenAddress(mint: string, owner: string, tokenProgram: string): string | undefined {
  const key = `${mint} ${owner} ${tokenProgram}`;
  if (derivedAddresses.has(key)) return derivedAddresses.get(key);
  let derived: string | undefined;
  try {
    derived = getAssociatedTokenAddressSync(
      new PublicKey(mint),
      new PublicKey(owner),
      true,
      new PublicKey(tokenProgram),
    ).toBase58();
  } catch {
    derived = undefined; // not addresses: not an account of the wallet
  }
  // Bounded by dropping all: a fleet's wallets and mints, derived again on a miss, not a leak.
  if (derivedAddresses.size >= MAX_DERIVED_ADDRESSES) derivedAddresses.clear();
  derivedAddresses.set(key, derived);
  return derived;
}

export function checkEffect(effect: InstructionEffect, ctx: EffectContext, totals: EffectTotals): void {
  if (effect.programId === SYSTEM_PROGRAM) checkSystem(effect, ctx, totals);
  else if (isTokenProgram(effect.programId)) checkToken(effect, ctx, totals);
}

function checkSystem(effect: InstructionEffect, ctx: EffectContext, totals: EffectTotals): void {
  const { roles, op, where } = effect;
  const isWallet = (key: string | undefined) => key === ctx.wallet;
  if (NONCE_OPS.has(op)) {
    // A nonce transaction never expires: rebuilding after "expiry" could land it twice.
    throw new PolicyRefusal("durable_nonce", `instruction ${where}: System ${op}`);
  }
  switch (op) {
    case "assign":
    case "assignWithSeed":
      if (isWallet(roles.account) || isWallet(roles.base)) {
        throw new PolicyRefusal(
          "system_assign",
          `instruction ${where}: assigns the wallet to another program`,
        );
      }
      return;
    case "allocate":
    case "allocateWithSeed":
      if (isWallet(roles.account) || isWallet(roles.base)) {
        throw new PolicyRefusal(
          "system_allocate",
          `instruction ${where}: allocates data in the wallet account`,
        );
      }
      return;
    case "transfer":
    case "transferWithSeed":
      if (isWallet(roles.source) || isWallet(roles.sourceBase)) checkSolTransfer(effect, ctx, totals);
      return;
    case "createAccount":
    case "createAccountWithSeed":
      if (isWallet(roles.newAccount)) {
        throw new PolicyRefusal("system_assign", `instruction ${where}: creates an account at the wallet`);
      }
      if (isWallet(roles.source)) checkAccountFunding(effect, ctx, totals);
      return;
    default:
      if (effect.accounts.includes(ctx.wallet)) {
        throw new PolicyRefusal(
          "system_instruction_not_allowed",
          `instruction ${where}: System ${op} on the wallet`,
        );
      }
  }
}

/**
 * Plain SOL transfers out are for wrapping SOL an order spends, at most the order's wrapped SOL amount
 * in all, and only into the wallet's own token accounts, or rent for a token account of the wallet of
 * another mint (checkRentTransfer) or for its wrapped SOL account (wrapRent). A payment to anyone else
 * is refused whatever its size (an order's SOL budget is spent once, by the order's own transfer).
 */
function checkSolTransfer(effect: InstructionEffect, ctx: EffectContext, totals: EffectTotals): void {
  const { roles, op, where } = effect;
  const to = roles.destination;
  const account = to !== undefined ? ctx.walletTokens.get(to) : undefined;
  if (to !== undefined && account !== undefined && account.mint !== NATIVE_MINT) {
    checkRentTransfer(effect, to, account.mint, ctx, totals);
    return;
  }
  const rent = to !== undefined && account !== undefined ? wrapRent(effect, to, ctx, totals) : 0n;
  const lamports = (effect.lamports ?? 0n) - rent;
  totals.transferredLamports += lamports;
  const wrapAllowance = ctx.allowance.tokens.get(NATIVE_MINT) ?? 0n;
  if (totals.transferredLamports > wrapAllowance) {
    throw new PolicyRefusal(
      "outflow_sol",
      `instruction ${where}: System ${op} sends ${totals.transferredLamports} lamports from the wallet in all, allowed ${wrapAllowance}`,
    );
  }
  const ours = to === ctx.wallet || (to !== undefined && ctx.walletTokens.has(to));
  if (ctx.simulated && lamports > 0n && !ours) {
    throw new PolicyRefusal(
      "outflow_sol",
      `instruction ${where}: System ${op} sends ${lamports} lamports from the wallet to ${to ?? "an unnamed account"}, not a token account of the wallet`,
    );
  }
}

/**
 * A transfer into a token account of the wallet that holds no wrapped SOL wraps nothing: it is rent.
 * The associated token program opens an account at an address that already holds lamports (anyone can
 * send some there) with a transfer of the rent it lacks (then allocate and assign), not createAccount,
 * so a claim opening its payout account there must pass. At most what the account lacked of its rent:
 * more would sit in it out of the wallet's reach (a token account holding tokens cannot be closed).
 * The rent itself counts as checkAccountFunding counts a new account's.
 */
function checkRentTransfer(
  effect: InstructionEffect,
  account: string,
  mint: string,
  ctx: EffectContext,
  totals: EffectTotals,
): void {
  // What the account lacked is read with the simulation (its size after, its lamports before).
  if (!ctx.simulated) return;
  const lamports = effect.lamports ?? 0n;
  const paid = (totals.rentPaid.get(account) ?? 0n) + lamports;
  totals.rentPaid.set(account, paid);
  const lacking = ctx.rentLacking?.(account) ?? 0n;
  if (paid > lacking) {
    throw new PolicyRefusal(
      "outflow_sol",
      `instruction ${effect.where}: System ${effect.op} pays ${paid} lamports in all into ${account}, the wallet's token account of mint ${mint}, which lacked ${lacking} of its rent`,
    );
  }
  countRent(account, lamports, effect, ctx, totals);
}

/**
 * The part of a transfer into the wallet's wrapped SOL account that pays the rent the account still
 * lacks: the associated token program opens it at an address someone sent lamports to with a transfer
 * of the rent it lacks, on top of the transfer that wraps the SOL an order or swap spends, and a
 * stranger's few lamports must not turn that rent into SOL spent (every SOL-input swap and order
 * refused). That part counts as rent (countRent); the rest wraps, as any transfer into it. Known only
 * once simulated: before, the whole transfer counts as wrapping.
 */
function wrapRent(
  effect: InstructionEffect,
  account: string,
  ctx: EffectContext,
  totals: EffectTotals,
): bigint {
  if (!ctx.simulated) return 0n;
  const paid = totals.rentPaid.get(account) ?? 0n;
  const stillLacking = (ctx.rentLacking?.(account) ?? 0n) - paid;
  const lamports = effect.lamports ?? 0n;
  const rent = lamports < stillLacking ? lamports : stillLacking;
  if (rent <= 0n) return 0n;
  totals.rentPaid.set(account, paid + rent);
  countRent(account, rent, effect, ctx, totals);
  return rent;
}

/**
 * Rent the wallet pays for a new account: free when the account is the wallet's own token account
 * for a mint the intent receives or spends (the lamports stay the wallet's), otherwise counted
 * against the allowance (an order's account, or the escrow's token account an order opens), which is
 * zero for claims, closes and cancels.
 */
function checkAccountFunding(effect: InstructionEffect, ctx: EffectContext, totals: EffectTotals): void {
  if (!ctx.simulated) return;
  const { newAccount } = effect.roles;
  const lamports = effect.lamports ?? 0n;
  // Funded here, it lacks that much less: a later transfer into it is no rent up to that much.
  if (newAccount !== undefined && ctx.walletTokens.has(newAccount)) {
    totals.rentPaid.set(newAccount, (totals.rentPaid.get(newAccount) ?? 0n) + lamports);
  }
  countRent(newAccount, lamports, effect, ctx, totals);
}

function countRent(
  account: string | undefined,
  lamports: bigint,
  effect: InstructionEffect,
  ctx: EffectContext,
  totals: EffectTotals,
): void {
  const { op, where } = effect;
  const charged = account !== undefined ? ctx.rentCharged?.get(account) : undefined;
  if (account !== undefined && ctx.walletTokens.has(account) && charged === undefined) return;
  totals.foreignLamports += lamports;
  if (totals.foreignLamports > ctx.allowance.maxLamports) {
    const what = charged
      ? `a new token account of the wallet for mint ${charged.mint}, which the intent neither receives nor spends`
      : "that is not a token account of the wallet";
    throw new PolicyRefusal(
      "outflow_sol",
      `instruction ${where}: System ${op} funds ${account ?? "an account"} ${what}; ${totals.foreignLamports} lamports in all into such accounts, allowed ${ctx.allowance.maxLamports}`,
    );
  }
}

function checkToken(effect: InstructionEffect, ctx: EffectContext, totals: EffectTotals): void {
  const { roles, op, where } = effect;
  const ours = (key: string | undefined) => key !== undefined && ctx.walletTokens.has(key);
  const isWallet = (key: string | undefined) => key === ctx.wallet;
  if (SPEND_TOKEN_OPS.has(op)) {
    const source = roles.source ?? roles.account;
    const account = source !== undefined ? ctx.walletTokens.get(source) : undefined;
    // The wallet's account, or any account the wallet signs for (as owner or delegate).
    if (!account && !isWallet(roles.authority) && !isWallet(roles.owner)) return;
    if (account && roles.mint !== undefined && roles.mint !== account.mint) {
      throw new PolicyRefusal(
        "outflow_token",
        `instruction ${where}: ${op} names mint ${roles.mint} for a ${account.mint} account`,
      );
    }
    const mint = account?.mint ?? roles.mint;
    if (mint === undefined) {
      if (!ctx.simulated) return;
      throw new PolicyRefusal(
        "outflow_token",
        `instruction ${where}: ${op} signed by the wallet takes from ${source ?? "an account"} of unknown mint`,
      );
    }
    const spent = (totals.tokens.get(mint) ?? 0n) + (effect.amount ?? 0n);
    totals.tokens.set(mint, spent);
    const allowed = ctx.allowance.tokens.get(mint) ?? 0n;
    if (spent > allowed) {
      throw new PolicyRefusal(
        "outflow_token",
        `instruction ${where}: ${op} takes ${spent} of mint ${mint} from the wallet in all, allowed ${allowed}`,
      );
    }
    return;
  }
  switch (op) {
    case "approve":
    case "approveChecked":
      if (ours(roles.source) || isWallet(roles.owner)) {
        throw new PolicyRefusal(
          "token_approve",
          `instruction ${where}: ${op} gives ${roles.delegate ?? "someone"} a delegate`,
        );
      }
      return;
    case "setAuthority":
      if (ours(roles.account) || isWallet(roles.authority)) {
        throw new PolicyRefusal(
          "token_authority_change",
          `instruction ${where}: setAuthority on ${roles.account ?? "an account"} of the wallet`,
        );
      }
      return;
    case "closeAccount":
      if ((ours(roles.account) || isWallet(roles.owner)) && !isWallet(roles.destination)) {
        throw new PolicyRefusal(
          "token_close_account",
          `instruction ${where}: closes ${roles.account ?? "an account"} of the wallet to ${roles.destination ?? "someone else"}`,
        );
      }
      return;
    default:
      if (HARMLESS_TOKEN_OPS.has(op)) return;
      if (effect.accounts.some((a) => isWallet(a) || ours(a))) {
        throw new PolicyRefusal(
          "token_instruction_not_allowed",
          `instruction ${where}: token ${op} on the wallet's accounts`,
        );
      }
  }
}
