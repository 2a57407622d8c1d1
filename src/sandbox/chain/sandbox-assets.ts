import { createHash } from "node:crypto";
import { NATIVE_MINT, TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from "@solana/spl-token";
import { Keypair, LAMPORTS_PER_SOL, PublicKey } from "@solana/web3.js";
import { MAINNET_MINTS } from "../world/tokens.js";
import type { LocalChain } from "./local-chain.js";
import { POOL_SEED, poolProgramElf, SANDBOX_POOL_PROGRAM_ID } from "./pool-program.js";

/** 6 decimals: one raw unit is one micro-USD. */
export const USDC_DECIMALS = 6;
const DEFAULT_VAULT_USDC_RAW = 10_000_000n * 1_000_000n; // $10M
const DEFAULT_POOL_TOKEN_WHOLE_UNITS = 1_000_000_000n;
/** Wrapped SOL the pool holds for swap outputs: 1M SOL (lamports are real, so less than other tokens). */
const DEFAULT_POOL_WRAPPED_SOL_RAW = 1_000_000n * BigInt(LAMPORTS_PER_SOL);
/** The wrapped SOL mint has 9 decimals, like SOL itself. */
export const WRAPPED_SOL_DECIMALS = 9;

/** A deterministic keypair: `Keypair.fromSeed(sha256(label + seed))`. */
export function deriveKeypair(label: string, seed: number): Keypair {
  return Keypair.fromSeed(createHash("sha256").update(`${label}${seed}`).digest());
}

export interface ChainTokenSpec {
  readonly symbol: string;
  readonly decimals: number;
  /** Derives the mint address: the mint keypair is `deriveKeypair("mint:" + seedLabel, seed)`. */
  readonly seedLabel: string;
  /**
   * A fixed address instead (a mainnet mint such as USDT's): the mint is written there unless one
   * exists already (the wrapped SOL mint `So111…112` exists from genesis). LiteSVM writes any account,
   * so no keypair of the address is needed.
   */
  readonly address?: PublicKey;
  readonly tokenProgram?: "token" | "token-2022";
  /** What the pool holds of it, for swap outputs (default 1e9 whole tokens). */
  readonly vaultAmountRaw?: bigint;
}

export interface SandboxAssets {
  readonly seed: number;
  readonly usdcMint: PublicKey;
  readonly mintAuthority: Keypair;
  /** Pays claims and close proceeds; signs its transfers in the transactions it builds. */
  readonly vault: Keypair;
  readonly vaultUsdcAccount: PublicKey;
  /**
   * The swap pool: a PDA of the sandbox pool program (off-curve, as a live pool's authority is) whose
   * associated token accounts take swap inputs and hold the liquidity that pays swap outputs; the
   * program signs the payouts for it (see pool-program.ts).
   */
  readonly pool: PublicKey;
  /** The bump of the pool's PDA (its last seed). */
  readonly poolBump: number;
  readonly poolProgram: PublicKey;
  /**
   * Approved as delegate of each order's escrow account (owned by the order's PDA) once its deposit
   * lands: signs refunds.
   */
  readonly escrowDelegate: Keypair;
  /** An on-curve key that is nobody's: the `redirectFunds` fault sends users' inputs to its accounts. */
  readonly stranger: Keypair;
  /** Creates (or tops up the pool of) extra mints; returns symbol → mint. Same seed, same addresses. */
  createTokenMints(specs: readonly ChainTokenSpec[]): Record<string, PublicKey>;
  /** Gives a wallet SOL (whole SOL) and USDC (raw micro-USD). */
  fundWallet(owner: PublicKey, amounts: { sol?: number; usdc?: bigint }): void;
  /**
   * The same for many wallets at once (one read and write of each mint): SOL, USDC, and raw amounts
   * of other mints (`tokens`, by mint address; wrapped SOL lands in a native token account).
   */
  fundWallets(
    owners: readonly PublicKey[],
    amounts: { sol?: number; usdc?: bigint; tokens?: ReadonlyMap<string, bigint> },
  ): void;
}

export function createSandboxAssets(
  chain: LocalChain,
  /** `vaultUsdcRaw`: the vault's USDC, and the pool's. */
  options: { seed: number; vaultUsdcRaw?: bigint },
): SandboxAssets {
  const { seed } = options;
  const mintAuthority = deriveKeypair("mint-authority", seed);
  const vault = deriveKeypair("vault", seed);
  const escrowDelegate = deriveKeypair("escrow-delegate", seed);
  const stranger = deriveKeypair("stranger", seed);
  chain.addProgram(SANDBOX_POOL_PROGRAM_ID, poolProgramElf());
  const [pool, poolBump] = PublicKey.findProgramAddressSync(
    [Buffer.from(POOL_SEED, "utf8")],
    SANDBOX_POOL_PROGRAM_ID,
  );
  const fundPool = (mint: PublicKey, amount: bigint) => chain.mintTo(mint, pool, amount);
  // At mainnet USDC's address, so configs naming it run unchanged on the sandbox and the live service.
  const usdcMint = chain.createMint({
    address: new PublicKey(MAINNET_MINTS.usdc ?? ""),
    decimals: USDC_DECIMALS,
    authority: mintAuthority.publicKey,
  });
  // The wrapped SOL mint, as on mainnet: SPL Token, 9 decimals, no mint authority. Its token accounts
  // are native ones (see LocalChain.mintToMany), so SyncNative and CloseAccount unwrap for real.
  if (chain.getAccount(NATIVE_MINT) === null)
    chain.createMint({ address: NATIVE_MINT, decimals: WRAPPED_SOL_DECIMALS, authority: null });
  const vaultUsdcAccount = chain.mintTo(
    usdcMint,
    vault.publicKey,
    options.vaultUsdcRaw ?? DEFAULT_VAULT_USDC_RAW,
  );
  fundPool(usdcMint, options.vaultUsdcRaw ?? DEFAULT_VAULT_USDC_RAW);
  // The stranger's token accounts exist (empty) from genesis, as a thief's would: a redirected
  // transfer then needs no account created at the user's expense, only the transfer itself.
  chain.mintTo(usdcMint, stranger.publicKey, 0n);
  // The vault pays fees only for the service's own automatic claims (the user pays for the rest).
  chain.airdrop(vault.publicKey, BigInt(LAMPORTS_PER_SOL));
  // The escrow delegate pays for the fills it settles (fees, the maker's output account).
  chain.airdrop(escrowDelegate.publicKey, 100n * BigInt(LAMPORTS_PER_SOL));

  return {
    seed,
    usdcMint,
    mintAuthority,
    vault,
    vaultUsdcAccount,
    pool,
    poolBump,
    poolProgram: SANDBOX_POOL_PROGRAM_ID,
    escrowDelegate,
    stranger,
    createTokenMints(specs) {
      const mints: Record<string, PublicKey> = {};
      for (const spec of specs) {
        const mint = spec.address ?? deriveKeypair(`mint:${spec.seedLabel}`, seed).publicKey;
        if (chain.getAccount(mint) === null)
          chain.createMint({
            address: mint,
            decimals: spec.decimals,
            authority: mintAuthority.publicKey,
            programId: spec.tokenProgram === "token-2022" ? TOKEN_2022_PROGRAM_ID : TOKEN_PROGRAM_ID,
          });
        if (chain.getAccount(mint) === null) throw new Error(`no mint at ${mint.toBase58()}`);
        const vaultAmount =
          spec.vaultAmountRaw ??
          (mint.equals(NATIVE_MINT)
            ? DEFAULT_POOL_WRAPPED_SOL_RAW
            : DEFAULT_POOL_TOKEN_WHOLE_UNITS * 10n ** BigInt(spec.decimals));
        if (vaultAmount > 0n) fundPool(mint, vaultAmount);
        chain.mintTo(mint, stranger.publicKey, 0n);
        mints[spec.symbol] = mint;
      }
      return mints;
    },
    fundWallet(owner, amounts) {
      if (amounts.sol !== undefined && amounts.sol > 0) {
        chain.airdrop(owner, BigInt(Math.round(amounts.sol * LAMPORTS_PER_SOL)));
      }
      if (amounts.usdc !== undefined && amounts.usdc > 0n) chain.mintTo(usdcMint, owner, amounts.usdc);
    },
    fundWallets(owners, amounts) {
      if (amounts.sol !== undefined && amounts.sol > 0) {
        const lamports = BigInt(Math.round(amounts.sol * LAMPORTS_PER_SOL));
        for (const owner of owners) chain.airdrop(owner, lamports);
      }
      if (amounts.usdc !== undefined && amounts.usdc > 0n) chain.mintToMany(usdcMint, owners, amounts.usdc);
      for (const [mint, raw] of amounts.tokens ?? []) {
        if (raw > 0n) chain.mintToMany(new PublicKey(mint), owners, raw);
      }
    },
  };
}
