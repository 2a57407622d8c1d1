import {
  AccountState,
  createAssociatedTokenAccountIdempotentInstruction,
  createInitializeDefaultAccountStateInstruction,
  createInitializeMintCloseAuthorityInstruction,
  createInitializeMintInstruction,
  createInitializeNonTransferableMintInstruction,
  createInitializePausableConfigInstruction,
  createInitializePermanentDelegateInstruction,
  createInitializeTransferFeeConfigInstruction,
  createInitializeTransferHookInstruction,
  createMintToCheckedInstruction,
  createThawAccountInstruction,
  ExtensionType,
  getAssociatedTokenAddressSync,
  getMintLen,
  TOKEN_2022_PROGRAM_ID,
} from "@solana/spl-token";
import { Keypair, type PublicKey, SystemProgram, TransactionInstruction } from "@solana/web3.js";
import type { SignerEnv } from "./env.js";
import { buildTransaction } from "./tx-builders.js";

export const T22_DECIMALS = 6;

/** The extensions a test mint may carry, as the Token-2022 program initializes them. */
export type MintExtension =
  | { kind: "transferFee"; basisPoints: number; maximumFee: bigint }
  | { kind: "permanentDelegate"; delegate: PublicKey }
  | { kind: "transferHook"; program: PublicKey }
  | { kind: "confidentialTransfer" }
  | { kind: "closeAuthority"; authority: PublicKey }
  | { kind: "nonTransferable" }
  | { kind: "pausable"; authority: PublicKey }
  | { kind: "defaultFrozen" };

const EXTENSION_TYPE: Record<MintExtension["kind"], ExtensionType> = {
  transferFee: ExtensionType.TransferFeeConfig,
  permanentDelegate: ExtensionType.PermanentDelegate,
  transferHook: ExtensionType.TransferHook,
  confidentialTransfer: ExtensionType.ConfidentialTransferMint,
  closeAuthority: ExtensionType.MintCloseAuthority,
  nonTransferable: ExtensionType.NonTransferable,
  pausable: ExtensionType.PausableConfig,
  defaultFrozen: ExtensionType.DefaultAccountState,
};

/**
 * ConfidentialTransferExtension (27) / InitializeMint (0): authority (32 bytes, zero for none), auto
 * approve new accounts (1 byte), auditor ElGamal key (32 bytes, zero for none). @solana/spl-token has
 * no builder for it.
 */
function initializeConfidentialTransferMint(mint: PublicKey, authority: PublicKey): TransactionInstruction {
  const data = Buffer.concat([
    Buffer.from([27, 0]),
    authority.toBuffer(),
    Buffer.from([1]),
    Buffer.alloc(32),
  ]);
  return new TransactionInstruction({
    programId: TOKEN_2022_PROGRAM_ID,
    keys: [{ pubkey: mint, isSigner: false, isWritable: true }],
    data,
  });
}

function initializeExtension(mint: PublicKey, extension: MintExtension, issuer: PublicKey) {
  switch (extension.kind) {
    case "transferFee":
      return createInitializeTransferFeeConfigInstruction(
        mint,
        issuer,
        issuer,
        extension.basisPoints,
        extension.maximumFee,
        TOKEN_2022_PROGRAM_ID,
      );
    case "permanentDelegate":
      return createInitializePermanentDelegateInstruction(mint, extension.delegate, TOKEN_2022_PROGRAM_ID);
    case "transferHook":
      return createInitializeTransferHookInstruction(mint, issuer, extension.program, TOKEN_2022_PROGRAM_ID);
    case "confidentialTransfer":
      return initializeConfidentialTransferMint(mint, issuer);
    case "closeAuthority":
      return createInitializeMintCloseAuthorityInstruction(mint, extension.authority, TOKEN_2022_PROGRAM_ID);
    case "nonTransferable":
      return createInitializeNonTransferableMintInstruction(mint, TOKEN_2022_PROGRAM_ID);
    case "pausable":
      return createInitializePausableConfigInstruction(mint, extension.authority, TOKEN_2022_PROGRAM_ID);
    case "defaultFrozen":
      return createInitializeDefaultAccountStateInstruction(mint, AccountState.Frozen, TOKEN_2022_PROGRAM_ID);
  }
}

/**
 * A real Token-2022 mint with `extensions`, made by transactions on the local chain (the chain's own
 * mint helpers write the base layout only), and `supply` minted to the issuer's associated account.
 * When its accounts start frozen (defaultFrozen) the issuer is its freeze authority and thaws its own.
 */
export async function createToken2022Mint(
  env: SignerEnv,
  issuer: Keypair,
  extensions: readonly MintExtension[],
  supply: bigint,
): Promise<{ mint: PublicKey; issuerAccount: PublicKey }> {
  const mint = Keypair.generate();
  const space = getMintLen(extensions.map((e) => EXTENSION_TYPE[e.kind]));
  const issuerAccount = getAssociatedTokenAddressSync(
    mint.publicKey,
    issuer.publicKey,
    false,
    TOKEN_2022_PROGRAM_ID,
  );
  const startsFrozen = extensions.some((e) => e.kind === "defaultFrozen");
  const { blockhash } = await env.connection.getLatestBlockhash("confirmed");
  const tx = buildTransaction({
    payer: issuer.publicKey,
    blockhash,
    instructions: [
      SystemProgram.createAccount({
        fromPubkey: issuer.publicKey,
        newAccountPubkey: mint.publicKey,
        lamports: Number(env.chain.minimumBalanceForRentExemption(space)),
        space,
        programId: TOKEN_2022_PROGRAM_ID,
      }),
      ...extensions.map((extension) => initializeExtension(mint.publicKey, extension, issuer.publicKey)),
      createInitializeMintInstruction(
        mint.publicKey,
        T22_DECIMALS,
        issuer.publicKey,
        startsFrozen ? issuer.publicKey : null,
        TOKEN_2022_PROGRAM_ID,
      ),
      createAssociatedTokenAccountIdempotentInstruction(
        issuer.publicKey,
        issuerAccount,
        issuer.publicKey,
        mint.publicKey,
        TOKEN_2022_PROGRAM_ID,
      ),
      ...(startsFrozen ? [thaw(issuerAccount, mint.publicKey, issuer.publicKey)] : []),
      createMintToCheckedInstruction(
        mint.publicKey,
        issuerAccount,
        issuer.publicKey,
        supply,
        T22_DECIMALS,
        [],
        TOKEN_2022_PROGRAM_ID,
      ),
    ],
  });
  tx.sign([issuer, mint]);
  env.chain.send(tx.serialize());
  if (env.chain.tokenAccount(issuerAccount)?.amount !== supply) {
    throw new Error(`Token-2022 mint with ${extensions.map((e) => e.kind).join(", ")} was not created`);
  }
  return { mint: mint.publicKey, issuerAccount };
}

/** The freeze authority thaws `account` of `mint` (accounts of a mint frozen by default start frozen). */
export function thaw(account: PublicKey, mint: PublicKey, authority: PublicKey): TransactionInstruction {
  return createThawAccountInstruction(account, mint, authority, [], TOKEN_2022_PROGRAM_ID);
}
