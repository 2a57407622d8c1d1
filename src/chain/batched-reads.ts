import type {
  Commitment,
  Connection,
  GetBlockHeightConfig,
  RpcResponseAndContext,
  SignatureStatus,
  SignatureStatusConfig,
} from "@solana/web3.js";

export interface BatchedReadsOptions {
  /** How long a status read waits for others to join it in one call (default 25 ms). */
  gatherMs?: number;
  /** A block height this fresh is answered again without a call (default 200 ms: half a slot). */
  heightMaxAgeMs?: number;
}

/** The most signatures getSignatureStatuses takes in one call. */
const MAX_SIGNATURES = 256;

type StatusAnswer = RpcResponseAndContext<Array<SignatureStatus | null>>;

/**
 * The connection the confirm loop reads through. Each watched transaction asks for its status
 * and the block height every poll (400 ms); a burst of claims puts hundreds in flight, and one call
 * each would be hundreds of RPC calls a second. Here the status reads of the transactions being
 * watched go out together (getSignatureStatuses takes up to 256 signatures) and the block height is
 * shared while it is younger than half a slot. Everything else (sends, the blockhash check, the
 * history search of a last status check) goes to the connection as it is.
 */
export function withBatchedReads(connection: Connection, options: BatchedReadsOptions = {}): Connection {
  const gatherMs = options.gatherMs ?? 25;
  const heightMaxAgeMs = options.heightMaxAgeMs ?? 200;
  let waiting: Array<{
    signatures: string[];
    resolve: (answer: StatusAnswer) => void;
    reject: (error: unknown) => void;
  }> = [];
  let isScheduled = false;

  const flush = () => {
    isScheduled = false;
    const batch = waiting;
    waiting = [];
    // Whole callers per call, up to the RPC's limit of signatures (one caller's own list goes whole).
    const parts: Array<typeof batch> = [];
    let current: typeof batch = [];
    let count = 0;
    for (const caller of batch) {
      if (current.length > 0 && count + caller.signatures.length > MAX_SIGNATURES) {
        parts.push(current);
        current = [];
        count = 0;
      }
      current.push(caller);
      count += caller.signatures.length;
    }
    // A flush runs only when a read waits, so the last part is never empty.
    parts.push(current);
    for (const part of parts) {
      const signatures = part.flatMap((p) => p.signatures);
      connection.getSignatureStatuses(signatures).then(
        (answer) => {
          let at = 0;
          for (const p of part) {
            p.resolve({ context: answer.context, value: answer.value.slice(at, at + p.signatures.length) });
            at += p.signatures.length;
          }
        },
        (error: unknown) => {
          for (const p of part) p.reject(error);
        },
      );
    }
  };

  const heights = new Map<string, { atMs: number; value: Promise<number> }>();

  const batched = Object.create(connection) as Connection;
  batched.getSignatureStatuses = (signatures: string[], config?: SignatureStatusConfig) => {
    if (config?.searchTransactionHistory) return connection.getSignatureStatuses(signatures, config);
    return new Promise<StatusAnswer>((resolve, reject) => {
      waiting.push({ signatures, resolve, reject });
      if (!isScheduled) {
        isScheduled = true;
        setTimeout(flush, gatherMs);
      }
    });
  };
  batched.getBlockHeight = (commitmentOrConfig?: Commitment | GetBlockHeightConfig) => {
    const key = JSON.stringify(commitmentOrConfig ?? null);
    const now = performance.now();
    const known = heights.get(key);
    if (known && now - known.atMs < heightMaxAgeMs) return known.value;
    const value = connection.getBlockHeight(commitmentOrConfig);
    heights.set(key, { atMs: now, value });
    // A failed read is not shared: the next caller asks again.
    value.catch(() => {
      if (heights.get(key)?.value === value) heights.delete(key);
    });
    return value;
  };
  return batched;
}
