import type {
  Commitment,
  Connection,
  GetBlockHeightConfig,
  RpcResponseAndContext,
  SignatureStatus,
  SignatureStatusConfig,
} from "@solana/web3.js";
import type { JsonRpc } from "./json-rpc.js";
import { contextOf, contextValue, isLamports, isRecord, shapeError } from "./lean-reads.js";

const CONFIRMATION_STATUSES: ReadonlySet<unknown> = new Set(["processed", "confirmed", "finalized"]);

/**
 * The confirm loop's polls as plain JSON-RPC: signature statuses and the block height, asked every
 * 400 ms for every transaction in flight, go to the node through json-rpc.ts and are checked here by
 * hand (web3.js's fetch and superstruct were most of a watched claim's CPU). Any other form of the
 * calls goes to `connection`. An answer of the wrong shape is an error naming the field: transient,
 * so the watch asks again; nothing is decided on it.
 */
export function withLeanStatuses(connection: Connection, rpc: JsonRpc): Connection {
  const lean = Object.create(connection) as Connection;
  lean.getSignatureStatuses = async (signatures: string[], config?: SignatureStatusConfig) => {
    const params: unknown[] = [signatures];
    if (config?.searchTransactionHistory) params.push({ searchTransactionHistory: true });
    const answer = await rpc("getSignatureStatuses", params);
    const value = contextValue(answer, "getSignatureStatuses");
    if (!Array.isArray(value) || value.length !== signatures.length)
      throw shapeError("getSignatureStatuses", "value", `a list of ${signatures.length} statuses`);
    return {
      context: contextOf(answer),
      value: value.map((status, i) => signatureStatus(status, `value[${i}]`)),
    } satisfies RpcResponseAndContext<(SignatureStatus | null)[]>;
  };
  const heightAny = connection.getBlockHeight.bind(connection);
  lean.getBlockHeight = async (commitmentOrConfig?: Commitment | GetBlockHeightConfig) => {
    // A minimum context slot goes to web3.js; the loop's form is a commitment alone.
    const onlyCommitment =
      typeof commitmentOrConfig !== "object" ||
      Object.keys(commitmentOrConfig).every((key) => key === "commitment");
    if (!onlyCommitment) return heightAny(commitmentOrConfig);
    const commitment =
      (typeof commitmentOrConfig === "string" ? commitmentOrConfig : commitmentOrConfig?.commitment) ??
      connection.commitment;
    const height = await rpc("getBlockHeight", commitment ? [{ commitment }] : []);
    if (!isLamports(height)) throw shapeError("getBlockHeight", "the answer", "a whole number");
    return height;
  };
  return lean;
}

/** One signature's status, or null (not seen); each field the loop reads is checked. */
function signatureStatus(raw: unknown, field: string): SignatureStatus | null {
  const method = "getSignatureStatuses";
  if (raw === null) return null;
  if (!isRecord(raw)) throw shapeError(method, field, "a status or null");
  if (!isLamports(raw.slot)) throw shapeError(method, `${field}.slot`, "a whole number");
  const confirmations = raw.confirmations ?? null;
  if (confirmations !== null && !isLamports(confirmations))
    throw shapeError(method, `${field}.confirmations`, "null or a whole number");
  const err = raw.err ?? null;
  if (err !== null && typeof err !== "string" && !isRecord(err))
    throw shapeError(method, `${field}.err`, "null, an error name or an error object");
  const status: SignatureStatus = {
    slot: raw.slot,
    confirmations,
    err: err as SignatureStatus["err"],
  };
  if (raw.confirmationStatus !== undefined && raw.confirmationStatus !== null) {
    if (!CONFIRMATION_STATUSES.has(raw.confirmationStatus))
      throw shapeError(method, `${field}.confirmationStatus`, "processed, confirmed or finalized");
    status.confirmationStatus = raw.confirmationStatus as SignatureStatus["confirmationStatus"];
  }
  return status;
}
