import {
  createTransferCheckedInstruction,
  MINT_SIZE,
  MintLayout,
  TOKEN_2022_PROGRAM_ID,
} from "@solana/spl-token";
import {
  type AddressLookupTableAccount,
  Connection,
  Keypair,
  LAMPORTS_PER_SOL,
  PublicKey,
} from "@solana/web3.js";
import { createJsonRpc } from "../../../src/chain/json-rpc.js";
import { withLeanReads } from "../../../src/chain/lean-reads.js";
import { withLeanSendAndWatch } from "../../../src/chain/lean-send-and-watch.js";
import type { PolicyConfig } from "../../../src/chain/policy.js";
import type { Intent } from "../../../src/core/intent.js";
import { secretForms as formsOf } from "../../../src/ops/secret-forms.js";
import { LocalChain } from "../../../src/sandbox/chain/local-chain.js";
import { startRpcServer } from "../../../src/sandbox/chain/rpc-server.js";
import { RedisAttemptStore } from "../../../src/signer/attempt-store.js";
import { Wallets } from "../../../src/signer/keys.js";
import { testRedis } from "../../helpers/redis.js";
import { recordTestSecret } from "../../helpers/test-secrets.js";
import { buildTransaction } from "./tx-builders.js";

export const USDC_DECIMALS = 6;

/**
 * A local chain behind its JSON-RPC server, a funded wallet Keeper holds (plus a second one), a
 * stranger, a vault that co-signs claims, USDC-like and Token-2022 mints with token accounts, and an
 * attempt store on real Redis under a prefix of its own.
 */
export interface SignerEnv {
  chain: LocalChain;
  connection: Connection;
  url: string;
  wallets: Wallets;
  wallet: PublicKey;
  otherWallet: PublicKey;
  stranger: Keypair;
  vault: Keypair;
  usdc: PublicKey;
  walletUsdc: PublicKey;
  strangerUsdc: PublicKey;
  vaultUsdc: PublicKey;
  /** The escrow's authority: a program-derived address (off the curve) with no account. */
  escrow: PublicKey;
  escrowUsdc: PublicKey;
  walletEmpty: PublicKey;
  t22: PublicKey;
  walletT22: PublicKey;
  strangerT22: PublicKey;
  escrowT22: PublicKey;
  attempts: RedisAttemptStore;
  /** Deletes the intent's attempt record, as Redis loses one (a snapshot rollback, a failover). */
  loseAttemptRecord(intentKey: string): Promise<void>;
  policy: PolicyConfig;
  /** Every encoding (base58, base64, hex, JSON array; whole and seed) of the wallets' secret keys. */
  secretForms: string[];
  claimIntent(): Intent;
  /** A new owner with no accounts yet, on every read. */
  readonly freshOwner: PublicKey;
  /** A claim as the service builds it: the vault pays the owner, signed by the vault, fee payer empty. */
  claimTransaction(amount: bigint, blockhash: string): ReturnType<typeof buildTransaction>;
  lookupTable(addresses: PublicKey[]): Promise<AddressLookupTableAccount>;
  balances(): Promise<Record<string, string>>;
  close(): Promise<void>;
}

export async function startSignerEnv(
  label: string,
  options: { slotMs?: number; seed?: number } = {},
): Promise<SignerEnv> {
  // 100 ms slots: a blockhash lives 15 s, longer than a busy machine takes between build and check.
  const chain = new LocalChain({ slotMs: options.slotMs ?? 100, seed: options.seed ?? 7 });
  const rpc = await startRpcServer(chain, { port: 0 });
  // As the signer role reads and sends: its checks' accounts and simulations, its send and its
  // watch as plain JSON-RPC.
  const json = createJsonRpc(rpc.url);
  const connection = withLeanSendAndWatch(withLeanReads(new Connection(rpc.url, "confirmed"), json), json);
  const redis = await testRedis(label);

  const walletKey = Keypair.generate();
  const otherKey = Keypair.generate();
  const stranger = Keypair.generate();
  const vault = Keypair.generate();
  // Every key of the env is on the run's registry: the suite's secret scan looks for each in every form.
  for (const [role, key] of [
    ["wallet", walletKey],
    ["second wallet", otherKey],
    ["stranger", stranger],
    ["vault", vault],
  ] as const)
    recordTestSecret(key.secretKey, `signer env (${label}) ${role} ${key.publicKey.toBase58()}`);
  const secretForms = [walletKey, otherKey].flatMap(({ secretKey }) => formsOf(secretKey));
  const wallet = walletKey.publicKey;
  const otherWallet = otherKey.publicKey;
  const wallets = Wallets.fromSecretKeys([walletKey.secretKey.slice(), otherKey.secretKey.slice()]);
  walletKey.secretKey.fill(0);
  otherKey.secretKey.fill(0);

  // An order's or a pool's: an address off the curve (a program's), as escrows and vaults are.
  const escrow = PublicKey.findProgramAddressSync([Buffer.from("escrow")], Keypair.generate().publicKey)[0];
  const authority = Keypair.generate().publicKey;
  for (const key of [wallet, otherWallet, stranger.publicKey, vault.publicKey]) {
    chain.airdrop(key, 10n * BigInt(LAMPORTS_PER_SOL));
  }

  const usdc = chain.createMint({ address: Keypair.generate(), decimals: USDC_DECIMALS, authority });
  const walletUsdc = chain.mintTo(usdc, wallet, 100_000_000n);
  const strangerUsdc = chain.mintTo(usdc, stranger.publicKey, 0n);
  const vaultUsdc = chain.mintTo(usdc, vault.publicKey, 1_000_000_000_000n);
  const escrowUsdc = chain.mintTo(usdc, escrow, 0n);
  const emptyMint = chain.createMint({ address: Keypair.generate(), decimals: 0, authority });
  const walletEmpty = chain.mintTo(emptyMint, wallet, 0n);

  // The chain's createMint writes SPL Token mints; a Token-2022 mint is the same layout, other owner.
  const t22 = Keypair.generate().publicKey;
  const mintData = Buffer.alloc(MINT_SIZE);
  MintLayout.encode(
    {
      mintAuthorityOption: 1,
      mintAuthority: authority,
      supply: 0n,
      decimals: 6,
      isInitialized: true,
      freezeAuthorityOption: 0,
      freezeAuthority: authority,
    },
    mintData,
  );
  chain.setAccount({
    address: t22,
    lamports: chain.minimumBalanceForRentExemption(MINT_SIZE),
    owner: TOKEN_2022_PROGRAM_ID,
    data: mintData,
  });
  const walletT22 = chain.mintTo(t22, wallet, 1_000_000n);
  const strangerT22 = chain.mintTo(t22, stranger.publicKey, 0n);
  const escrowT22 = chain.mintTo(t22, escrow, 0n);

  const attempts = new RedisAttemptStore(redis.redis, `${redis.prefix}:`);
  let counter = 0;

  return {
    chain,
    connection,
    url: rpc.url,
    wallets,
    wallet,
    otherWallet,
    stranger,
    vault,
    usdc,
    walletUsdc,
    strangerUsdc,
    vaultUsdc,
    escrow,
    escrowUsdc,
    walletEmpty,
    t22,
    walletT22,
    strangerT22,
    escrowT22,
    attempts,
    async loseAttemptRecord(intentKey) {
      await redis.redis.del(`${redis.prefix}:attempt:${intentKey}`);
    },
    policy: {
      payoutMints: [usdc.toBase58()],
      maxComputeUnitPriceMicroLamports: 1_000_000n,
      maxPriorityFeeLamports: 1_000_000n,
      checkBlockhashWithRpc: true,
    },
    secretForms,
    get freshOwner() {
      return Keypair.generate().publicKey;
    },
    claimIntent() {
      counter += 1;
      const position = Keypair.generate().publicKey.toBase58();
      return {
        key: `claim-${position}`,
        kind: "claim",
        wallet: wallet.toBase58(),
        strategy: "test",
        positionPubkey: position,
      };
    },
    claimTransaction(amount, blockhash) {
      return buildTransaction({
        payer: wallet,
        blockhash,
        coSigners: [vault],
        instructions: [
          createTransferCheckedInstruction(
            vaultUsdc,
            usdc,
            walletUsdc,
            vault.publicKey,
            amount,
            USDC_DECIMALS,
          ),
        ],
      });
    },
    async lookupTable(addresses) {
      const address = chain.createLookupTable(addresses);
      const table = (await connection.getAddressLookupTable(address)).value;
      if (!table) throw new Error("lookup table not readable over RPC");
      return table;
    },
    async balances() {
      return {
        sol: chain.lamportsOf(wallet).toString(),
        usdc: (chain.tokenAccount(walletUsdc)?.amount ?? -1n).toString(),
        t22: (chain.tokenAccount(walletT22)?.amount ?? -1n).toString(),
        empty: (chain.tokenAccount(walletEmpty)?.amount ?? -1n).toString(),
        strangerSol: chain.lamportsOf(stranger.publicKey).toString(),
      };
    },
    async close() {
      chain.stop();
      await rpc.close();
      await redis.cleanup();
      void counter;
    },
  };
}
