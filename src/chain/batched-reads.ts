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
  /**
   * A block height, or the node's word on a blockhash, this fresh is answered again without a call
   * (default 200 ms: half a slot).
   */
  heightMaxAgeMs?: number;
}

/** The most signatures getSignatureStatuses takes in one call. */
const MAX_SIGNATURES = 256;

type StatusAnswer = RpcResponseAndContext<Array<SignatureStatus | null>>;

/**
 * The connection the signer role reads through. Each watched transaction asks for its status and the
 * block height every poll (400 ms), and each signing asks for the height and its blockhash's validity;
 * a burst of claims puts hundreds in flight, and one call each would be hundreds of RPC calls a
 * second. Here the status reads of the transactions being watched go out together
 * (getSignatureStatuses takes up to 256 signatures), and the block height and the node's word on a
 * blockhash are shared while younger than half a slot. Everything else (account reads, simulations,
 * sends, the history search of a last status check) goes to the connection as it is.
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

  const heights = freshAnswers<number>(heightMaxAgeMs);
  // Only "still valid" is shared: "gone" ends a watch (expired), so each watch hears it from the node.
  const blockhashes = freshAnswers<RpcResponseAndContext<boolean>>(heightMaxAgeMs, (answer) => answer.value);

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
  batched.getBlockHeight = (commitmentOrConfig?: Commitment | GetBlockHeightConfig) =>
    heights(JSON.stringify(commitmentOrConfig ?? null), () => connection.getBlockHeight(commitmentOrConfig));
  // A burst's builds share a few blockhashes: the node's "still valid" on one is asked once in half a
  // slot. Safe to share so briefly: a transaction whose blockhash ran out meanwhile cannot land, and
  // its watch finds it expired.
  batched.isBlockhashValid = (blockhash: string, config?: Parameters<Connection["isBlockhashValid"]>[1]) =>
    blockhashes(JSON.stringify([blockhash, config ?? null]), () =>
      connection.isBlockhashValid(blockhash, config),
    );
  return batched;
}

/**
 * One read per key while its answer is younger than `maxAgeMs`: callers in that time share it (the
 * read still in flight included). A failed read, or an answer `isShared` refuses, is not kept: the
 * next caller asks again.
 */
function freshAnswers<T>(maxAgeMs: number, isShared: (answer: T) => boolean = () => true) {
  const known = new Map<string, { atMs: number; value: Promise<T> }>();
  return (key: string, read: () => Promise<T>): Promise<T> => {
    const now = performance.now();
    const fresh = known.get(key);
    if (fresh && now - fresh.atMs < maxAgeMs) return fresh.value;
    // Stale answers go as the next read of any key comes: the map holds what half a slot asked.
    for (const [k, entry] of known) if (now - entry.atMs >= maxAgeMs) known.delete(k);
    const value = read();
    known.set(key, { atMs: now, value });
    const forget = () => {
      if (known.get(key)?.value === value) known.delete(key);
    };
    value.then((answer) => {
      if (!isShared(answer)) forget();
    }, forget);
    return value;
  };
}
