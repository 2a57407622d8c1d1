import type { AccountInfo, Commitment, Connection } from "@solana/web3.js";
import { PublicKey } from "@solana/web3.js";
import { PolicyRefusal } from "../core/errors.js";
import type { Intent, OutflowAllowance } from "../core/intent.js";
import { type AllowanceOptions, allowanceFor } from "./allowance.js";
import { type ComputeBudget, readComputeBudget } from "./compute-budget.js";
import type { DecodedTransaction } from "./decode.js";
import { verifyEd25519 } from "./ed25519.js";
import { checkEffect, type EffectContext, newTotals } from "./effect-rules.js";
import { innerEffect, type RpcInnerInstruction, rawEffect } from "./instruction-effects.js";
import { DEFAULT_ALLOWED_PROGRAMS } from "./programs.js";
import { rpcCall } from "./rpc.js";
import { readTokenAccount, type TokenAccountState } from "./token-account.js";

export interface PolicyConfig {
  /** Program ids of the service, on top of the allowed programs. */
  extraPrograms?: readonly string[];
  /** Replaces DEFAULT_ALLOWED_PROGRAMS (a stricter deployment may drop some). */
  allowedPrograms?: readonly string[];
  /** Refuse a SetComputeUnitPrice above this many micro-lamports per compute unit. */
  maxComputeUnitPriceMicroLamports: bigint;
  /** Base fee per signature (5,000 lamports on mainnet). */
  lamportsPerSignature?: bigint;
  /** Commitment of the reads and the simulation (default confirmed). */
  commitment?: Commitment;
  /** Also ask the node `isBlockhashValid` (not every RPC answers it). */
  checkBlockhashWithRpc?: boolean;
  allowance?: AllowanceOptions;
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
  lastValidBlockHeight: number;
  /** Defaults to allowanceFor(intent). */
  allowance?: OutflowAllowance;
}

export interface PolicyReport {
  wallet: string;
  feeLamports: bigint;
  budget: ComputeBudget;
  walletTokenAccounts: string[];
  innerPrograms: string[];
  unitsConsumed?: number;
  /** What the wallet loses (positive) or gains (negative) by the simulation, fees included. */
  lamportsOut: bigint;
  tokensOut: Record<string, string>;
}

/**
 * Everything checked before the wallet signs. Every refusal is a PolicyRefusal with a bounded reason;
 * RPC failures are TransientError / PermanentError (nothing was decided, the caller may retry).
 */
export async function checkTransaction(input: PolicyInput): Promise<PolicyReport> {
  const { decoded, intent, config, connection } = input;
  const commitment = config.commitment ?? "confirmed";
  const wallet = intent.wallet;
  const allowance = input.allowance ?? allowanceFor(intent, config.allowance);
  const budget = checkStatic(decoded, { wallet, wallets: input.wallets, config });

  await checkBlockhash(decoded, input.lastValidBlockHeight, connection, config);

  // Pre-state of every account the transaction names, lookup-table accounts included.
  const keys = decoded.accountKeys.map((k) => k.pubkey);
  const infos = await getAccounts(connection, keys, commitment);
  const walletTokens = new Map<string, TokenAccountState>();
  keys.forEach((key, i) => {
    const token = readTokenAccount(infos[i]);
    if (token && token.owner === wallet) walletTokens.set(key.toBase58(), token);
  });
  const walletInfo = infos[0];
  const ctx: EffectContext = { wallet, walletTokens, allowance };
  const totals = newTotals();
  for (const ix of decoded.instructions) {
    checkEffect(
      rawEffect(
        String(ix.index),
        ix.programId.toBase58(),
        ix.accounts.map((a) => a.toBase58()),
        ix.data,
      ),
      ctx,
      totals,
    );
  }

  // Simulate with the wallet's accounts returned after execution; inner instructions show every CPI.
  const watched = [wallet, ...walletTokens.keys()];
  const simulation = await rpcCall("simulateTransaction", () =>
    connection.simulateTransaction(decoded.transaction, {
      sigVerify: false,
      replaceRecentBlockhash: false,
      commitment,
      innerInstructions: true,
      accounts: { encoding: "base64", addresses: watched },
    }),
  );
  const sim = simulation.value;
  if (sim.err) {
    const logs = (sim.logs ?? []).slice(-5).join(" | ");
    throw new PolicyRefusal(
      "simulation_failed",
      `${JSON.stringify(sim.err)}${logs ? `; logs: ${logs}` : ""}`,
    );
  }
  if (!sim.innerInstructions)
    throw new PolicyRefusal("simulation_failed", "the node returned no inner instructions");
  if (!sim.accounts || sim.accounts.length !== watched.length) {
    throw new PolicyRefusal("simulation_failed", "the node returned no post-state for the wallet's accounts");
  }

  const allowed = allowedPrograms(config);
  const innerPrograms = new Set<string>();
  for (const group of sim.innerInstructions) {
    group.instructions.forEach((ix, j) => {
      const effect = innerEffect(`${group.index}.${j}`, ix as RpcInnerInstruction);
      innerPrograms.add(effect.programId);
      if (!allowed.has(effect.programId)) {
        throw new PolicyRefusal(
          "program_not_allowed",
          `inner instruction ${effect.where} calls ${effect.programId}, not on the allow-list`,
        );
      }
      checkEffect(effect, ctx, totals);
    });
  }

  const post = sim.accounts.map((a) =>
    a ? { owner: a.owner, lamports: a.lamports, data: Buffer.from(a.data[0] ?? "", "base64") } : null,
  );
  const feeLamports =
    (config.lamportsPerSignature ?? 5_000n) * BigInt(decoded.header.numRequiredSignatures) +
    budget.priorityFeeLamports;
  const { lamportsOut, tokensOut } = compareStates(watched, walletInfo, walletTokens, post, wallet);
  if (lamportsOut > feeLamports + allowance.maxLamports) {
    throw new PolicyRefusal(
      "outflow_sol",
      `simulation: the wallet loses ${lamportsOut} lamports, allowed ${feeLamports} fees + ${allowance.maxLamports}`,
    );
  }
  for (const [mint, out] of tokensOut) {
    const limit = allowance.tokens.get(mint) ?? 0n;
    if (out > limit) {
      throw new PolicyRefusal(
        "outflow_token",
        `simulation: the wallet loses ${out} of mint ${mint}, allowed ${limit}`,
      );
    }
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

interface StaticContext {
  wallet: string;
  wallets: KeyHolder;
  config: PolicyConfig;
}

/** The checks that need no RPC: fee payer, signers and signatures, programs, compute-unit price. */
export function checkStatic(decoded: DecodedTransaction, ctx: StaticContext): ComputeBudget {
  const { wallet, wallets, config } = ctx;
  if (!wallets.has(wallet)) throw new PolicyRefusal("wallet_not_held", `Keeper holds no key for ${wallet}`);
  const feePayer = decoded.feePayer.toBase58();
  if (feePayer !== wallet) {
    throw new PolicyRefusal("fee_payer", `fee payer ${feePayer} is not the intent's wallet ${wallet}`);
  }
  for (const signer of decoded.signers) {
    const key = signer.pubkey.toBase58();
    if (signer.isSigned) {
      // A co-signature must be valid for these exact bytes, or the transaction could never land
      // (and a crafted one must not be passed on under our signature).
      if (!verifyEd25519(signer.pubkey.toBytes(), decoded.messageBytes, signer.signature)) {
        throw new PolicyRefusal("invalid_signature", `the existing signature of ${key} does not verify`);
      }
    } else if (key !== wallet) {
      const whose = wallets.has(key) ? "another wallet Keeper holds" : "a key Keeper does not hold";
      throw new PolicyRefusal("foreign_signer", `${key} must sign and has not: ${whose}`);
    }
  }
  const allowed = allowedPrograms(config);
  for (const ix of decoded.instructions) {
    const program = ix.programId.toBase58();
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
  return budget;
}

function allowedPrograms(config: PolicyConfig): Set<string> {
  return new Set([...(config.allowedPrograms ?? DEFAULT_ALLOWED_PROGRAMS), ...(config.extraPrograms ?? [])]);
}

async function checkBlockhash(
  decoded: DecodedTransaction,
  lastValidBlockHeight: number,
  connection: Connection,
  config: PolicyConfig,
): Promise<void> {
  const commitment = config.commitment ?? "confirmed";
  const height = await rpcCall("getBlockHeight", () => connection.getBlockHeight(commitment));
  if (height > lastValidBlockHeight) {
    throw new PolicyRefusal(
      "blockhash_expired",
      `block height ${height} is past the transaction's last valid block height ${lastValidBlockHeight}`,
    );
  }
  if (config.checkBlockhashWithRpc) {
    const valid = await rpcCall("isBlockhashValid", () =>
      connection.isBlockhashValid(decoded.recentBlockhash, { commitment }),
    );
    if (!valid.value) throw new PolicyRefusal("blockhash_expired", `the node no longer knows the blockhash`);
  }
}

const MAX_ACCOUNTS_PER_CALL = 100;

async function getAccounts(
  connection: Connection,
  keys: readonly PublicKey[],
  commitment: Commitment,
): Promise<(AccountInfo<Buffer> | null)[]> {
  const out: (AccountInfo<Buffer> | null)[] = [];
  for (let i = 0; i < keys.length; i += MAX_ACCOUNTS_PER_CALL) {
    const chunk = keys.slice(i, i + MAX_ACCOUNTS_PER_CALL);
    out.push(
      ...(await rpcCall("getMultipleAccountsInfo", () =>
        connection.getMultipleAccountsInfo(chunk, commitment),
      )),
    );
  }
  return out;
}

interface PostAccount {
  owner: string;
  lamports: number;
  data: Buffer;
}

/**
 * What the wallet loses, by comparing its accounts before and after the simulation. Lamports count the
 * wallet and the rent of its token accounts (wrapped SOL counts as tokens); a token account that is
 * closed or no longer the wallet's counts as zero.
 */
function compareStates(
  watched: readonly string[],
  walletBefore: AccountInfo<Buffer> | null | undefined,
  tokensBefore: ReadonlyMap<string, TokenAccountState>,
  post: readonly (PostAccount | null)[],
  wallet: string,
): { lamportsOut: bigint; tokensOut: Map<string, bigint> } {
  let lamportsOut = BigInt(walletBefore?.lamports ?? 0) - BigInt(post[0]?.lamports ?? 0);
  const tokensOut = new Map<string, bigint>();
  watched.forEach((address, i) => {
    if (i === 0) return;
    const before = tokensBefore.get(address);
    if (!before) return;
    const raw = post[i];
    const after = raw
      ? readTokenAccount({ owner: new PublicKey(raw.owner), lamports: raw.lamports, data: raw.data })
      : undefined;
    if (after && after.owner !== wallet) {
      throw new PolicyRefusal(
        "token_authority_change",
        `simulation: the owner of ${address} changes to ${after.owner}`,
      );
    }
    if (
      after &&
      after.delegate !== undefined &&
      after.delegate !== before.delegate &&
      after.delegate !== wallet
    ) {
      throw new PolicyRefusal("token_approve", `simulation: ${address} gets the delegate ${after.delegate}`);
    }
    if (after && after.closeAuthority !== before.closeAuthority) {
      throw new PolicyRefusal(
        "token_authority_change",
        `simulation: the close authority of ${address} changes`,
      );
    }
    const rentBefore = before.lamports - (before.nativeAmount ?? 0n);
    const rentAfter = after ? after.lamports - (after.nativeAmount ?? 0n) : BigInt(raw?.lamports ?? 0);
    lamportsOut += rentBefore - rentAfter;
    const mintAfter = after?.mint === before.mint ? after.amount : 0n;
    tokensOut.set(before.mint, (tokensOut.get(before.mint) ?? 0n) + before.amount - mintAfter);
  });
  return { lamportsOut, tokensOut };
}
