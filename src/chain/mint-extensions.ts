import {
  AccountState,
  ExtensionType,
  getDefaultAccountState,
  getExtensionTypes,
  getNonTransferable,
  getPausableConfig,
  getPermanentDelegate,
  getTransferFeeConfig,
  getTransferHook,
  type Mint,
  TOKEN_2022_PROGRAM_ID,
  type TransferFee,
  unpackMint,
} from "@solana/spl-token";
import { PublicKey } from "@solana/web3.js";
import { PolicyRefusal } from "../core/errors.js";
import { TOKEN_2022_PROGRAM } from "./programs.js";
import type { PostAccount } from "./simulated-effects.js";
import { readTokenAccount, type TokenAccountState } from "./token-account.js";

/**
 * Token-2022 mints can carry extensions that take from whoever holds them: a permanent delegate
 * moves or burns anyone's balance, a transfer hook runs its program on every transfer (it may refuse
 * them all), confidential transfers hide balances the policy reads, a transfer fee keeps part of each
 * transfer. Others keep the holder from ever selling: a non-transferable token cannot leave the
 * account it lands in, a pausable mint's authority can stop every transfer whenever it likes, and a
 * mint whose accounts start frozen lets its freeze authority decide who may move it at all. A mint the
 * wallet receives with one of these is refused unless the operator lists it.
 *
 * Harmless to a holder, so not named: a close authority (a mint closes only at zero supply),
 * metadata, group and member pointers, interest-bearing and scaled UI amounts (display only, raw
 * amounts never change), and the account-side extensions (set by the account's owner). Confidential
 * mint and burn (24) and the confidential fee config (16) come only with ConfidentialTransferMint.
 */

/** An account as the node returns it: owner program, lamports and data. */
export interface MintAccount {
  owner: string;
  lamports: number;
  data: Buffer;
}

/**
 * The Token-2022 mints the wallet receives in the transaction: those of its token accounts after the
 * simulation whose balance rose or that are new to it.
 */
export function receivedToken2022Mints(
  before: ReadonlyMap<string, TokenAccountState>,
  post: ReadonlyMap<string, PostAccount | null>,
  wallet: string,
): string[] {
  const mints = new Set<string>();
  for (const [address, raw] of post) {
    if (!raw || raw.owner !== TOKEN_2022_PROGRAM) continue;
    const after = readTokenAccount({ owner: raw.owner, lamports: raw.lamports, data: raw.data });
    if (after?.owner !== wallet) continue;
    const was = before.get(address);
    if (was === undefined || was.mint !== after.mint || after.amount > was.amount) mints.add(after.mint);
  }
  return [...mints];
}

function parseMint(address: string, account: MintAccount | null | undefined): Mint | undefined {
  if (!account) return undefined;
  try {
    return unpackMint(
      new PublicKey(address),
      {
        owner: new PublicKey(account.owner),
        lamports: account.lamports,
        data: account.data,
        executable: false,
      },
      TOKEN_2022_PROGRAM_ID,
    );
  } catch {
    return undefined;
  }
}

const isZeroFee = (fee: TransferFee) => fee.transferFeeBasisPoints === 0 || fee.maximumFee === 0n;

/**
 * Whether the fee in force depends on the epoch: the older fee is not zero and the newer one is (a
 * fee lowered to zero lasts until the newer one's epoch comes). Only then is the epoch worth a call.
 */
export function feeDependsOnEpoch(address: string, account: MintAccount | null | undefined): boolean {
  const mint = parseMint(address, account);
  const config = mint ? getTransferFeeConfig(mint) : null;
  return config !== null && !isZeroFee(config.olderTransferFee) && isZeroFee(config.newerTransferFee);
}

/**
 * The extensions of a Token-2022 mint that take from a holder, each named with its setting; an
 * unreadable mint is one too. `epoch` is the current epoch when read (feeDependsOnEpoch); without it
 * the older fee counts as in force.
 */
export function dangerousExtensions(
  address: string,
  account: MintAccount | null | undefined,
  epoch?: bigint,
): string[] {
  const mint = parseMint(address, account);
  if (!mint) return ["unreadable (no Token-2022 mint at that address)"];
  const found: string[] = [];
  const delegate = getPermanentDelegate(mint);
  if (delegate && !delegate.delegate.equals(PublicKey.default)) {
    found.push(`PermanentDelegate ${delegate.delegate.toBase58()}`);
  }
  const hook = getTransferHook(mint);
  if (hook && !hook.programId.equals(PublicKey.default)) {
    found.push(`TransferHook program ${hook.programId.toBase58()}`);
  }
  if (getExtensionTypes(mint.tlvData).includes(ExtensionType.ConfidentialTransferMint)) {
    found.push("ConfidentialTransferMint");
  }
  found.push(...lockingExtensions(mint));
  const fees = getTransferFeeConfig(mint);
  if (fees) {
    const { olderTransferFee: older, newerTransferFee: newer } = fees;
    const current = epoch !== undefined && epoch >= newer.epoch ? newer : older;
    const charged = [current, newer].find((fee) => !isZeroFee(fee));
    if (charged) {
      found.push(
        `TransferFeeConfig ${charged.transferFeeBasisPoints} bps up to ${charged.maximumFee} (from epoch ${charged.epoch})`,
      );
    }
  }
  return found;
}

/**
 * The extensions that can lock the holder's balance in: NonTransferable (9), Pausable (26, named
 * PausableConfig in @solana/spl-token; the Token-2022 program's ExtensionType::Pausable) with an
 * authority that can pause it or paused already, DefaultAccountState (6) frozen.
 */
function lockingExtensions(mint: Mint): string[] {
  const found: string[] = [];
  if (getNonTransferable(mint)) found.push("NonTransferable");
  const pausable = getPausableConfig(mint);
  if (pausable) {
    const hasAuthority = !pausable.authority.equals(PublicKey.default);
    const by = hasAuthority ? ` by ${pausable.authority.toBase58()}` : "";
    if (hasAuthority || pausable.paused) found.push(`Pausable${by}${pausable.paused ? ", paused" : ""}`);
  }
  if (getDefaultAccountState(mint)?.state === AccountState.Frozen) found.push("DefaultAccountState frozen");
  return found;
}

/** Refuses the first received mint with a dangerous extension that the operator did not allow. */
export function checkReceivedMints(
  mints: readonly string[],
  accounts: ReadonlyMap<string, MintAccount | null>,
  options: { allowed: ReadonlySet<string>; epoch?: bigint },
): void {
  for (const mint of mints) {
    if (options.allowed.has(mint)) continue;
    const found = dangerousExtensions(mint, accounts.get(mint), options.epoch);
    if (found.length === 0) continue;
    throw new PolicyRefusal(
      "mint_extension",
      `simulation: the wallet receives Token-2022 mint ${mint} with ${found.join(", ")}; not in signer.allowedToken2022Mints`,
    );
  }
}
