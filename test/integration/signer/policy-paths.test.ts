import {
  AccountState,
  AuthorityType,
  createAssociatedTokenAccountIdempotentInstruction,
  createInitializeDefaultAccountStateInstruction,
  createInitializeMintInstruction,
  createSetAuthorityInstruction,
  createTransferCheckedInstruction,
  ExtensionType,
  getAccountLen,
  getAssociatedTokenAddressSync,
  getMintLen,
  TOKEN_2022_PROGRAM_ID,
} from "@solana/spl-token";
import { Keypair, type PublicKey, SystemProgram, type VersionedTransaction } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type DecodedTransaction,
  decodeTransaction,
  rpcLookupTableLoader,
} from "../../../src/chain/decode.js";
import { checkTransaction, type PolicyConfig, type PolicyReport } from "../../../src/chain/policy.js";
import { PolicyRefusal } from "../../../src/core/errors.js";
import { type SignerEnv, startSignerEnv, USDC_DECIMALS } from "./env.js";
import { buildTransaction, toBase64 } from "./tx-builders.js";

/**
 * Policy paths the effect rules do not decide first, on the local chain: token accounts that become
 * the wallet's during the transaction (created frozen, or handed over), and transactions naming more
 * accounts than one getMultipleAccounts call reads.
 */
let env: SignerEnv;
beforeAll(async () => {
  env = await startSignerEnv("policy-paths");
});
afterAll(async () => {
  await env?.close();
});

const blockhash = async () => (await env.connection.getLatestBlockhash("confirmed")).blockhash;
const decode = (tx: VersionedTransaction) =>
  decodeTransaction(toBase64(tx), rpcLookupTableLoader(env.connection));

async function check(
  decoded: DecodedTransaction,
  inflow?: Parameters<typeof checkTransaction>[0]["inflow"],
  config: Partial<PolicyConfig> = {},
): Promise<PolicyReport> {
  const { lastValidBlockHeight } = await env.connection.getLatestBlockhash("confirmed");
  return checkTransaction({
    decoded,
    intent: env.claimIntent(),
    wallets: env.wallets,
    connection: env.connection,
    config: { ...env.policy, ...config },
    lastValidBlockHeight,
    ...(inflow ? { inflow } : {}),
  });
}

async function refusal(run: Promise<unknown>): Promise<string> {
  try {
    await run;
  } catch (error) {
    if (error instanceof PolicyRefusal) return `${error.reason}: ${error.detail}`;
    throw error;
  }
  throw new Error("not refused");
}

/** Lands a transaction signed by keys of the test (not the wallet) on the local chain. */
async function land(
  signers: Keypair[],
  instructions: Parameters<typeof buildTransaction>[0]["instructions"],
) {
  const [payer, ...rest] = signers as [Keypair, ...Keypair[]];
  const tx = buildTransaction({ payer: payer.publicKey, blockhash: await blockhash(), instructions });
  tx.sign([payer, ...rest]);
  env.chain.send(tx.serialize());
}

/** A Token-2022 mint whose new accounts start in `state` (DefaultAccountState extension). */
async function mintWithDefaultState(state: AccountState): Promise<PublicKey> {
  const mint = Keypair.generate();
  const space = getMintLen([ExtensionType.DefaultAccountState]);
  await land(
    [env.stranger, mint],
    [
      SystemProgram.createAccount({
        fromPubkey: env.stranger.publicKey,
        newAccountPubkey: mint.publicKey,
        lamports: Number(env.chain.minimumBalanceForRentExemption(space)),
        space,
        programId: TOKEN_2022_PROGRAM_ID,
      }),
      createInitializeDefaultAccountStateInstruction(mint.publicKey, state, TOKEN_2022_PROGRAM_ID),
      createInitializeMintInstruction(
        mint.publicKey,
        0,
        env.stranger.publicKey,
        env.stranger.publicKey,
        TOKEN_2022_PROGRAM_ID,
      ),
    ],
  );
  expect(env.chain.getAccount(mint.publicKey)).not.toBeNull();
  return mint.publicKey;
}

/** The wallet pays for its own associated token account of `mint` (Token-2022). */
async function createWalletAta(mint: PublicKey) {
  const ata = getAssociatedTokenAddressSync(mint, env.wallet, false, TOKEN_2022_PROGRAM_ID);
  const tx = buildTransaction({
    payer: env.wallet,
    blockhash: await blockhash(),
    instructions: [
      createAssociatedTokenAccountIdempotentInstruction(
        env.wallet,
        ata,
        env.wallet,
        mint,
        TOKEN_2022_PROGRAM_ID,
      ),
    ],
  });
  return { ata, tx };
}

describe("policy paths", () => {
  it("counts the rent of a new token account of the wallet as its own when the account is usable", async () => {
    const mint = await mintWithDefaultState(AccountState.Initialized);
    const { tx } = await createWalletAta(mint);
    // A claim paying in that mint: the account is one the claim needs.
    const report = await check(await decode(tx), undefined, { payoutMints: [mint.toBase58()] });
    // Only the fee is lost: the rent sits in the wallet's new account, which it can close again.
    expect(report.lamportsOut).toBe(5_000n);
    expect(report.feeLamports).toBe(5_000n);
  });

  it("counts the rent of a new token account of the wallet created frozen as lost: refused for a claim", async () => {
    const { ata, tx } = await createWalletAta(await mintWithDefaultState(AccountState.Frozen));
    const decoded = await decode(tx);
    // The associated account of a Token-2022 mint: base layout, account type, ImmutableOwner.
    const rent = env.chain.minimumBalanceForRentExemption(getAccountLen([ExtensionType.ImmutableOwner]));
    expect(rent).toBeGreaterThan(0n);
    // Frozen, the account can never be closed: its rent is gone like a payment, and a claim pays none.
    expect(await refusal(check(decoded))).toBe(
      `outflow_sol: simulation: the wallet loses ${5_000n + rent} lamports (SOL and wrapped SOL), allowed 5000 fees + 0`,
    );
    expect(env.chain.getAccount(ata)).toBeNull();
  });

  /**
   * A claim of 4 USDC that also hands the wallet an existing USDC account holding 7 (its owner, a
   * third party, co-signs). The wallet loses nothing by it, so it is no refusal; but such an account
   * may be frozen or otherwise unusable, so neither its tokens nor its rent count as the wallet's.
   */
  async function claimWithHandOver() {
    const giver = Keypair.generate();
    const given = env.chain.mintTo(env.usdc, giver.publicKey, 7_000_000n);
    const tx = buildTransaction({
      payer: env.wallet,
      blockhash: await blockhash(),
      coSigners: [env.vault, giver],
      instructions: [
        createTransferCheckedInstruction(
          env.vaultUsdc,
          env.usdc,
          env.walletUsdc,
          env.vault.publicKey,
          4_000_000n,
          USDC_DECIMALS,
        ),
        createSetAuthorityInstruction(given, giver.publicKey, AuthorityType.AccountOwner, env.wallet),
      ],
    });
    return { given, decoded: await decode(tx) };
  }

  it("allows an existing token account handed over to the wallet, counting neither its tokens nor its rent", async () => {
    const { given, decoded } = await claimWithHandOver();
    const inflow = (minRaw: bigint) => ({ what: "claim payout", mints: [env.usdc.toBase58()], minRaw });
    const report = await check(decoded, inflow(4_000_000n));
    expect(report.walletTokenAccounts).toEqual([env.walletUsdc.toBase58()]);
    expect(report.tokensOut).toEqual({ [env.usdc.toBase58()]: "-4000000" });
    // Three signatures; the given account's rent is not counted as coming in.
    expect(report.feeLamports).toBe(15_000n);
    expect(report.lamportsOut).toBe(15_000n);
    expect(env.chain.tokenAccount(given)?.owner.toBase58()).not.toBe(env.wallet.toBase58());
  });

  it("does not let a handed-over account's tokens make up an expected inflow", async () => {
    const { decoded } = await claimWithHandOver();
    const inflow = { what: "claim payout", mints: [env.usdc.toBase58()], minRaw: 4_000_001n };
    expect(await refusal(check(decoded, inflow))).toBe(
      `inflow_short: simulation: the claim payout brings the wallet 4000000 of mint ${env.usdc.toBase58()}, expected at least 4000001`,
    );
  });

  /**
   * More than 100 accounts: 100 read-only accounts that do not exist, named through a lookup table
   * before the wallet's Token-2022 account (read-only too). The policy reads them in chunks of 100, the
   * node's limit for one getMultipleAccounts call; the wallet's account falls in the second chunk.
   * Such a transaction cannot execute (the runtime locks at most 64 accounts, 128 with the raised
   * limit), but it reaches the policy all the same and must get a refusal, not an endless retry.
   */
  async function pastTheFirstHundred(
    second?: Parameters<typeof buildTransaction>[0]["instructions"][number],
  ) {
    const fillers = Array.from({ length: 100 }, () => Keypair.generate().publicKey);
    const table = await env.lookupTable([...fillers, env.walletT22]);
    const claim = createTransferCheckedInstruction(
      env.vaultUsdc,
      env.usdc,
      env.walletUsdc,
      env.vault.publicKey,
      4_000_000n,
      USDC_DECIMALS,
    );
    // Extra accounts of a transfer whose authority is no multisig: the token program ignores them.
    claim.keys.push(
      ...[...fillers, env.walletT22].map((pubkey) => ({ pubkey, isSigner: false, isWritable: false })),
    );
    const decoded = await decode(
      buildTransaction({
        payer: env.wallet,
        blockhash: await blockhash(),
        coSigners: [env.vault],
        tables: [table],
        instructions: second ? [claim, second] : [claim],
      }),
    );
    expect(decoded.accountKeys.length).toBeGreaterThan(100);
    expect(decoded.accountKeys.findIndex((k) => k.pubkey.equals(env.walletT22))).toBeGreaterThanOrEqual(100);
    return decoded;
  }

  it("reads every account of a transaction naming more than 100 and refuses it as one that cannot execute", async () => {
    // Not a transient RPC error (a read of more than 100 at once): what the simulation says of it.
    expect(await refusal(check(await pastTheFirstHundred()))).toBe(
      'simulation_failed: "TooManyAccountLocks"',
    );
  });

  it("applies the effect rules to the wallet's account past the first 100: a transfer naming the wrong mint is refused", async () => {
    // The wallet's Token-2022 account, named as holding USDC (0 of it: the amount is within any allowance).
    const lie = createTransferCheckedInstruction(
      env.walletT22,
      env.usdc,
      env.strangerT22,
      env.wallet,
      0n,
      USDC_DECIMALS,
      [],
      TOKEN_2022_PROGRAM_ID,
    );
    // Read-only, so that it stays past the first 100 (the rule refuses before any simulation would fail).
    (lie.keys[0] as { isWritable: boolean }).isWritable = false;
    expect(await refusal(check(await pastTheFirstHundred(lie)))).toBe(
      `outflow_token: instruction 1: transferChecked names mint ${env.usdc.toBase58()} for a ${env.t22.toBase58()} account`,
    );
  });
});
