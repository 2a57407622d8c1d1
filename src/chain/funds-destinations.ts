import type { Intent } from "../core/intent.js";
import { checkEscrow } from "./escrow-rule.js";
import type { InstructionEffect } from "./instruction-effects.js";
import {
  checkReceivedMints,
  feeDependsOnEpoch,
  type MintAccount,
  receivedToken2022Mints,
} from "./mint-extensions.js";
import { checkDebitDestinations, offCurveAuthorities, walletTokenDebits } from "./outflow-destinations.js";
import type { PostAccount } from "./simulated-effects.js";
import type { TokenAccountState } from "./token-account.js";

/**
 * The checks on where a simulated transaction sends what it moves, run after the amounts passed:
 * every token the wallet spends lands in its own account or a program's (outflow-destinations), an
 * order's deposit reaches its escrow (escrow-rule), every Token-2022 mint it receives is free of
 * extensions that take from a holder (mint-extensions). The accounts these need beyond the
 * simulation's post-state and the transaction's own accounts are read in one batch.
 */
export interface SimulatedView {
  intent: Intent;
  wallet: string;
  /** The order account the build named, when it did. */
  order?: string;
  /** Every instruction, inner ones included, in execution order. */
  effects: readonly InstructionEffect[];
  /** Every token account of the wallet the transaction touches: before, created, after. */
  walletTokens: ReadonlyMap<string, { readonly mint: string }>;
  /** The wallet's token accounts before the transaction. */
  walletTokensBefore: ReadonlyMap<string, TokenAccountState>;
  /** Every token account the transaction names, before it. */
  tokensBefore: ReadonlyMap<string, TokenAccountState>;
  /** The transaction's accounts as read before it (programs left out). */
  accountsBefore: ReadonlyMap<string, MintAccount | null>;
  /** The watched accounts after the simulation. */
  post: ReadonlyMap<string, PostAccount | null>;
}

export interface DestinationOptions {
  allowedPrograms: ReadonlySet<string>;
  allowedToken2022Mints: ReadonlySet<string>;
  /** Reads accounts in one batch (null where there is none). */
  readAccounts(addresses: readonly string[]): Promise<Map<string, MintAccount | null>>;
  readEpoch(): Promise<bigint>;
}

export async function checkWhereFundsGo(view: SimulatedView, options: DestinationOptions): Promise<void> {
  const { wallet, post } = view;
  const debits = walletTokenDebits(view.effects, view.walletTokens);
  const authorities = offCurveAuthorities(debits, post, wallet);
  const mints = receivedToken2022Mints(view.walletTokensBefore, post, wallet).filter(
    (mint) => !options.allowedToken2022Mints.has(mint),
  );

  // What the simulation or the first read already shows needs no call; the rest goes in one.
  const known = new Map<string, MintAccount | null>();
  const toRead: string[] = [];
  for (const address of new Set([...authorities, ...mints])) {
    const seen = post.has(address) ? post.get(address) : view.accountsBefore.get(address);
    if (seen !== undefined) known.set(address, seen);
    else toRead.push(address);
  }
  if (toRead.length > 0)
    for (const [address, account] of await options.readAccounts(toRead)) known.set(address, account);

  checkDebitDestinations(debits, {
    wallet,
    walletTokens: view.walletTokens,
    post,
    authorities: known,
    allowedPrograms: options.allowedPrograms,
  });
  checkEscrow({
    intent: view.intent,
    wallet,
    ...(view.order !== undefined ? { order: view.order } : {}),
    before: view.tokensBefore,
    post,
  });
  const epoch = mints.some((mint) => feeDependsOnEpoch(mint, known.get(mint)))
    ? await options.readEpoch()
    : undefined;
  checkReceivedMints(mints, known, {
    allowed: options.allowedToken2022Mints,
    ...(epoch !== undefined ? { epoch } : {}),
  });
}
