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
import { type DecodedTransaction, decodeTransaction, rpcLookupTableLoader } from "../../../src/chain/decode.js";
import { checkTransaction, type PolicyReport } from "../../../src/chain/policy.js";
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
const decode = (tx: VersionedTransaction) => decodeTransaction(toBase64(tx), rpcLookupTableLoader(env.connection));

async function check(
  decoded: DecodedTransaction,
  inflow?: Parameters<typeof checkTransaction>[0]["inflow"],
): Promise<PolicyReport> {
  const { lastValidBlockHeight } = await env.connection.getLatestBlockhash("confirmed");
  return checkTransaction({
    decoded,
    intent: env.claimIntent(),
    wallets: env.wallets,
    connection: env.connection,
    config: env.policy,
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
async function land(signers: Keypair[], instructions: Parameters<typeof buildTransaction>[0]["instructions"]) {
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
      createAssociatedTokenAccountIdempotentInstruction(env.wallet, ata, env.wallet, mint, TOKEN_2022_PROGRAM_ID),
    ],
  });
  return { ata, tx };
}

describe("policy paths", () => {
  it("counts the rent of a new token account of the wallet as its own when the account is usable", async () => {
    const { tx } = await createWalletAta(await mintWithDefaultState(AccountState.Initialized));
    const report = await check(await decode(tx));
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
});
