import {
  Keypair,
  PublicKey,
  SystemProgram,
  Transaction,
  TransactionMessage,
  VersionedTransaction,
} from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import { coSignLegacy, coSignVersioned } from "../../../../src/sandbox/chain/co-sign.js";
import { deriveKeypair } from "../../../../src/sandbox/world/rng.js";

const payer = deriveKeypair("co-sign-payer", 1);
const vault = deriveKeypair("co-sign-vault", 1);
const blockhash = new PublicKey(new Uint8Array(32).fill(7)).toBase58();
// The vault pays the payer: both must sign, the payer (fee payer) first.
const transfer = SystemProgram.transfer({
  fromPubkey: vault.publicKey,
  toPubkey: payer.publicKey,
  lamports: 1,
});

describe("the sandbox's co-signatures with Node's crypto", () => {
  it("signs a v0 transaction's co-signer slot as web3.js does, the fee payer's slot left empty", () => {
    const message = () =>
      new TransactionMessage({
        payerKey: payer.publicKey,
        recentBlockhash: blockhash,
        instructions: [transfer],
      });
    const ours = new VersionedTransaction(message().compileToV0Message());
    const theirs = new VersionedTransaction(message().compileToV0Message());
    coSignVersioned(ours, [vault]);
    theirs.sign([vault]);
    expect(Buffer.from(ours.serialize())).toEqual(Buffer.from(theirs.serialize()));
    expect(ours.signatures[0]?.every((b) => b === 0)).toBe(true);
    expect(ours.signatures[1]?.some((b) => b !== 0)).toBe(true);
  });

  it("signs a legacy transaction as partialSign does", () => {
    const make = () =>
      new Transaction({ feePayer: payer.publicKey, blockhash, lastValidBlockHeight: 10 }).add(transfer);
    const ours = make();
    const theirs = make();
    coSignLegacy(ours, [vault]);
    theirs.partialSign(vault);
    const bytes = (tx: Transaction) => tx.serialize({ requireAllSignatures: false, verifySignatures: false });
    expect(bytes(ours)).toEqual(bytes(theirs));
  });

  it("refuses a co-signer the transaction does not name", () => {
    const stranger = Keypair.generate();
    const tx = new VersionedTransaction(
      new TransactionMessage({
        payerKey: payer.publicKey,
        recentBlockhash: blockhash,
        instructions: [transfer],
      }).compileToV0Message(),
    );
    expect(() => coSignVersioned(tx, [stranger])).toThrow(/is not a signer of the transaction/);
    expect(tx.signatures.every((s) => s.every((b) => b === 0))).toBe(true);
  });
});
