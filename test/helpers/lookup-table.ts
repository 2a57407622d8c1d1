import { AddressLookupTableAccount, Keypair, type PublicKey } from "@solana/web3.js";

/** An active address lookup table of `addresses`, under a fresh key: what a loader would answer. */
export function lookupTableOf(addresses: PublicKey[]): AddressLookupTableAccount {
  return new AddressLookupTableAccount({
    key: Keypair.generate().publicKey,
    state: {
      deactivationSlot: BigInt("18446744073709551615"),
      lastExtendedSlot: 0,
      lastExtendedSlotStartIndex: 0,
      addresses,
    },
  });
}
