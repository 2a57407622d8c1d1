import {
  type AddressLookupTableAccount,
  Keypair,
  PublicKey,
  type Signer,
  TransactionInstruction,
  TransactionMessage,
  VersionedTransaction,
} from "@solana/web3.js";

export const MEMO_PROGRAM_ID = new PublicKey("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr");

/** A memo instruction; `signers` become required signers of the transaction. */
export function memo(text: string, signers: PublicKey[] = []): TransactionInstruction {
  return new TransactionInstruction({
    programId: MEMO_PROGRAM_ID,
    keys: signers.map((pubkey) => ({ pubkey, isSigner: true, isWritable: false })),
    data: Buffer.from(text, "utf8"),
  });
}

/**
 * A transaction as the service would hand it over: compiled (legacy or v0), co-signed by the service's
 * own signers, the fee payer's slot left empty.
 */
export function buildTransaction(args: {
  payer: PublicKey;
  blockhash: string;
  instructions: TransactionInstruction[];
  coSigners?: Signer[];
  tables?: AddressLookupTableAccount[];
  legacy?: boolean;
}): VersionedTransaction {
  const message = new TransactionMessage({
    payerKey: args.payer,
    recentBlockhash: args.blockhash,
    instructions: args.instructions,
  });
  const compiled = args.legacy
    ? message.compileToLegacyMessage()
    : message.compileToV0Message(args.tables ?? []);
  const tx = new VersionedTransaction(compiled);
  if (args.coSigners && args.coSigners.length > 0) tx.sign(args.coSigners);
  return tx;
}

export function toBase64(tx: VersionedTransaction): string {
  return Buffer.from(tx.serialize()).toString("base64");
}

export function randomProgramId(): PublicKey {
  return Keypair.generate().publicKey;
}
