import type { Ledger, LedgerRow } from "../state/ledger.js";

/**
 * How long after a close confirmed the position may still be listed open before it is closed again:
 * the service lists a position as open until the sell order its close created fills, so until then
 * a second close would be a second sell of the position.
 */
export const RECLOSE_AFTER_SECONDS = 300;
/** Closes of one position followed at most (each a confirmed close that left it open). */
const MAX_RECLOSES = 5;

export interface LatestClose {
  /** The key a close of the position goes under now. */
  key: string;
  /** Its ledger record; none when the key is new (the position's first close, or a close again). */
  row: LedgerRow | undefined;
}

/**
 * `close-<position>` is once per position. A close confirmed more than RECLOSE_AFTER_SECONDS ago
 * whose position is still listed open did not take (its sell order failed on the service after the
 * transaction landed): the next close of the position goes under `<key>-after-<confirmedAt>`, once
 * per confirmed close. The polls' closes and a close-all's follow the same keys, so one never sells
 * beside the other. Answers the latest close of the position: in flight, failed, confirmed recently
 * (or at a time not recorded), or a key not yet recorded.
 */
export async function latestClose(
  ledger: Pick<Ledger, "get">,
  closeKey: string,
  nowSeconds: number,
): Promise<LatestClose> {
  let key = closeKey;
  let row = await ledger.get(key);
  for (let hop = 0; hop < MAX_RECLOSES && row !== undefined; hop += 1) {
    if (row.status !== "confirmed" || row.confirmedAt === undefined) break;
    if (row.confirmedAt > nowSeconds - RECLOSE_AFTER_SECONDS) break;
    key = `${closeKey}-after-${row.confirmedAt}`;
    row = await ledger.get(key);
  }
  return { key, row };
}
