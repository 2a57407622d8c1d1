import { type KeyObject, sign } from "node:crypto";
import type { Keypair, Transaction, VersionedTransaction } from "@solana/web3.js";
import { ed25519PrivateKey } from "../world/rng.js";

/**
 * The service's co-signatures with Node's crypto: web3.js signs in JavaScript, about a tenth as fast,
 * and the sandbox co-signs every claim it builds, on the same machine as the keeper it serves.
 */
const keyObjects = new WeakMap<Keypair, KeyObject>();

function keyObjectOf(signer: Keypair): KeyObject {
  let key = keyObjects.get(signer);
  if (key === undefined) {
    key = ed25519PrivateKey(signer.secretKey.subarray(0, 32));
    keyObjects.set(signer, key);
  }
  return key;
}

/** Signs a v0 transaction with each of `signers`, in its slot (as VersionedTransaction.sign does). */
export function coSignVersioned(tx: VersionedTransaction, signers: readonly Keypair[]): void {
  const message = tx.message.serialize();
  const slots = tx.message.staticAccountKeys.slice(0, tx.message.header.numRequiredSignatures);
  for (const signer of signers) {
    const slot = slots.findIndex((key) => key.equals(signer.publicKey));
    if (slot < 0)
      throw new Error(`co-signer ${signer.publicKey.toBase58()} is not a signer of the transaction`);
    tx.signatures[slot] = sign(null, message, keyObjectOf(signer));
  }
}

/** Signs a legacy transaction with each of `signers`, the others' slots left empty (as partialSign does). */
export function coSignLegacy(tx: Transaction, signers: readonly Keypair[]): void {
  const message = tx.serializeMessage();
  for (const signer of signers) tx.addSignature(signer.publicKey, sign(null, message, keyObjectOf(signer)));
}
