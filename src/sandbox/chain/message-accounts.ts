import { MessageAccountKeys, type PublicKey, type VersionedMessage } from "@solana/web3.js";
import { decodeLookupTableAddresses } from "./lookup-table.js";

export const MEMO_PROGRAM_IDS = new Set([
  "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr",
  "Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo",
]);

export interface ResolvedAccounts {
  /** Static keys, then loaded writable, then loaded readonly: the order instruction indices use. */
  readonly keys: readonly PublicKey[];
  readonly loadedWritable: readonly PublicKey[];
  readonly loadedReadonly: readonly PublicKey[];
}

/**
 * Every account a message touches, lookup-table entries resolved from current chain state. A missing
 * or short table resolves to nothing: the runtime will refuse the transaction with its own error.
 */
export function resolveAccounts(
  message: VersionedMessage,
  readAccountData: (key: PublicKey) => Uint8Array | undefined,
): ResolvedAccounts {
  const loadedWritable: PublicKey[] = [];
  const loadedReadonly: PublicKey[] = [];
  for (const lookup of message.addressTableLookups) {
    const data = readAccountData(lookup.accountKey);
    if (data === undefined) continue;
    const table = decodeLookupTableAddresses(data);
    for (const i of lookup.writableIndexes) {
      const key = table[i];
      if (key !== undefined) loadedWritable.push(key);
    }
    for (const i of lookup.readonlyIndexes) {
      const key = table[i];
      if (key !== undefined) loadedReadonly.push(key);
    }
  }
  const all = new MessageAccountKeys(message.staticAccountKeys, {
    writable: loadedWritable,
    readonly: loadedReadonly,
  });
  return { keys: all.keySegments().flat(), loadedWritable, loadedReadonly };
}

/** The UTF-8 text of each Memo-program instruction (program ids are always static keys). */
export function memosOf(message: VersionedMessage): string[] {
  const memos: string[] = [];
  for (const ix of message.compiledInstructions) {
    const program = message.staticAccountKeys[ix.programIdIndex]?.toBase58();
    if (program !== undefined && MEMO_PROGRAM_IDS.has(program)) {
      memos.push(Buffer.from(ix.data).toString("utf8"));
    }
  }
  return memos;
}
