import { AddressLookupTableAccount, AddressLookupTableProgram, type PublicKey } from "@solana/web3.js";

/** Size of the lookup table's fixed header in the ALT program's account layout. */
const LOOKUP_TABLE_META_SIZE = 56;
const LOOKUP_TABLE_DISCRIMINATOR = 1;
const ACTIVE_DEACTIVATION_SLOT = 0xffff_ffff_ffff_ffffn;

export const ADDRESS_LOOKUP_TABLE_PROGRAM_ID: PublicKey = AddressLookupTableProgram.programId;

/**
 * The account data of an active lookup table holding `addresses`. `lastExtendedSlot` must be before the
 * current slot: addresses appended in the current slot are not usable yet (the runtime's rule).
 */
export function encodeLookupTable(args: {
  addresses: readonly PublicKey[];
  lastExtendedSlot: bigint;
  authority?: PublicKey;
}): Buffer {
  const data = Buffer.alloc(LOOKUP_TABLE_META_SIZE + 32 * args.addresses.length);
  data.writeUInt32LE(LOOKUP_TABLE_DISCRIMINATOR, 0);
  data.writeBigUInt64LE(ACTIVE_DEACTIVATION_SLOT, 4);
  data.writeBigUInt64LE(args.lastExtendedSlot, 12);
  data.writeUInt8(0, 20); // last_extended_slot_start_index
  if (args.authority === undefined) {
    data.writeUInt8(0, 21); // None: the table is frozen
  } else {
    data.writeUInt8(1, 21);
    args.authority.toBuffer().copy(data, 22);
  }
  args.addresses.forEach((address, i) => {
    address.toBuffer().copy(data, LOOKUP_TABLE_META_SIZE + 32 * i);
  });
  return data;
}

/** The addresses stored in a lookup table account's data (for `loadedAddresses` in transaction meta). */
export function decodeLookupTableAddresses(data: Uint8Array): PublicKey[] {
  return AddressLookupTableAccount.deserialize(data).addresses;
}
