import { PolicyRefusal } from "../core/errors.js";
import type { OutflowAllowance } from "../core/intent.js";
import type { InstructionEffect } from "./instruction-effects.js";
import { isTokenProgram, NATIVE_MINT, SYSTEM_PROGRAM } from "./programs.js";
import type { TokenAccountState } from "./token-account.js";

/**
 * Rules on what single instructions do to the wallet. The simulation would catch most outflows
 * anyway; these name the attack precisely and catch what a balance comparison cannot see (a delegate,
 * a new owner, a durable nonce that keeps a transaction alive past its blockhash).
 */
export interface EffectContext {
  wallet: string;
  /** The wallet's token accounts (owner = wallet) among the transaction's accounts, before it runs. */
  walletTokens: ReadonlyMap<string, TokenAccountState>;
  allowance: OutflowAllowance;
}

/** Running totals across every instruction of one transaction. */
export interface EffectTotals {
  /** Lamports the wallet funds: transfers and new accounts. */
  lamports: bigint;
  /** Of which plain transfers. */
  transferredLamports: bigint;
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

export function newTotals(): EffectTotals {
  return { lamports: 0n, transferredLamports: 0n, tokens: new Map() };
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
      if (isWallet(roles.source) || isWallet(roles.sourceBase)) {
        // Plain SOL transfers out are for wrapping SOL an order spends, nothing else: the rent
        // allowance is for accounts the transaction creates, not a budget for payments to anyone.
        totals.transferredLamports += effect.lamports ?? 0n;
        const wrapAllowance = ctx.allowance.tokens.get(NATIVE_MINT) ?? 0n;
        if (totals.transferredLamports > wrapAllowance) {
          throw new PolicyRefusal(
            "outflow_sol",
            `instruction ${where}: System ${op} sends ${totals.transferredLamports} lamports from the wallet in all, allowed ${wrapAllowance}`,
          );
        }
      }
      checkSystemFunding(effect, ctx, totals);
      return;
    case "createAccount":
    case "createAccountWithSeed":
      if (isWallet(roles.newAccount)) {
        throw new PolicyRefusal("system_assign", `instruction ${where}: creates an account at the wallet`);
      }
      checkSystemFunding(effect, ctx, totals);
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

/** Every lamport the wallet funds (transfers and new accounts) stays within the allowance. */
function checkSystemFunding(effect: InstructionEffect, ctx: EffectContext, totals: EffectTotals): void {
  const { roles, op, where } = effect;
  if (roles.source !== ctx.wallet && roles.sourceBase !== ctx.wallet) return;
  totals.lamports += effect.lamports ?? 0n;
  if (totals.lamports > ctx.allowance.maxLamports) {
    throw new PolicyRefusal(
      "outflow_sol",
      `instruction ${where}: System ${op} moves ${totals.lamports} lamports from the wallet in all, allowed ${ctx.allowance.maxLamports}`,
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
    if (!account) return;
    const mint = account.mint;
    if (roles.mint !== undefined && roles.mint !== mint) {
      throw new PolicyRefusal(
        "outflow_token",
        `instruction ${where}: ${op} names mint ${roles.mint} for a ${mint} account`,
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
