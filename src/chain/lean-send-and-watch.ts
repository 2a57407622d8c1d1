import type {
  Commitment,
  Connection,
  GetBlockHeightConfig,
  RpcResponseAndContext,
  SendOptions,
  SignatureStatus,
  SignatureStatusConfig,
} from "@solana/web3.js";
import type { JsonRpc } from "./json-rpc.js";
import {
  commitmentOf,
  contextOf,
  contextValue,
  isCommitmentOnly,
  isLamports,
  isRecord,
  shapeError,
  transactionError,
} from "./lean-reads.js";

const LEAN_SEND_OPTIONS: ReadonlySet<string> = new Set(["skipPreflight", "maxRetries"]);
const SIGNATURE = /^[1-9A-HJ-NP-Za-km-z]{64,88}$/;
const CONFIRMATION_STATUSES: ReadonlySet<unknown> = new Set(["processed", "confirmed", "finalized"]);

/**
 * The send and the confirm loop's polls as plain JSON-RPC: the send of a signed transaction (once, then
 * on each rebroadcast), the signature statuses and block height asked every 400 ms for every
 * transaction in flight, and the node's word on a blockhash (each signing's, each watch's last), go to the node through json-rpc.ts and are checked here by hand (web3.js's
 * fetch and superstruct were most of a watched claim's CPU). Any other form of the calls goes to
 * `connection`. An answer of the wrong shape is an error naming the field: transient, so the send is
 * tried again or the watch asks again; nothing is decided on it.
 */
export function withLeanSendAndWatch(connection: Connection, rpc: JsonRpc): Connection {
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
  const sendAny = connection.sendRawTransaction.bind(connection);
  lean.sendRawTransaction = async (raw: Buffer | Uint8Array | number[], options?: SendOptions) => {
    // The loop's form: no preflight (the policy simulated it), no retries by the node. A preflight's
    // failure logs are web3.js's SendTransactionError, so any other form goes to it.
    if (options?.skipPreflight !== true || Object.keys(options).some((key) => !LEAN_SEND_OPTIONS.has(key)))
      return sendAny(raw, options);
    // preflightCommitment as web3.js sends it, for nodes that read it even without a preflight.
    const config = {
      encoding: "base64",
      skipPreflight: true,
      ...(options.maxRetries === undefined ? {} : { maxRetries: options.maxRetries }),
      preflightCommitment: "processed",
    };
    const signature = await rpc("sendTransaction", [Buffer.from(raw).toString("base64"), config]);
    if (typeof signature !== "string" || !SIGNATURE.test(signature))
      throw shapeError("sendTransaction", "the answer", "a base58 signature");
    return signature;
  };
  const heightAny = connection.getBlockHeight.bind(connection);
  lean.getBlockHeight = async (commitmentOrConfig?: Commitment | GetBlockHeightConfig) => {
    // A minimum context slot goes to web3.js; the loop's form is a commitment alone.
    if (!isCommitmentOnly(commitmentOrConfig)) return heightAny(commitmentOrConfig);
    const commitment = commitmentOf(commitmentOrConfig) ?? connection.commitment;
    const height = await rpc("getBlockHeight", commitment ? [{ commitment }] : []);
    if (!isLamports(height)) throw shapeError("getBlockHeight", "the answer", "a whole number");
    return height;
  };
  const blockhashAny = connection.isBlockhashValid.bind(connection);
  lean.isBlockhashValid = async (
    blockhash: string,
    config?: Parameters<Connection["isBlockhashValid"]>[1],
  ) => {
    // Asked once a signing (the policy) and at a watch's end; a minimum context slot goes to web3.js.
    if (!isCommitmentOnly(config)) return blockhashAny(blockhash, config);
    const commitment = commitmentOf(config) ?? connection.commitment;
    const answer = await rpc("isBlockhashValid", [blockhash, ...(commitment ? [{ commitment }] : [])]);
    const value = contextValue(answer, "isBlockhashValid");
    if (typeof value !== "boolean") throw shapeError("isBlockhashValid", "value", "true or false");
    return { context: contextOf(answer), value };
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
  const err = transactionError(raw.err, method, `${field}.err`);
  const status: SignatureStatus = {
    slot: raw.slot,
    confirmations,
    err,
  };
  if (raw.confirmationStatus !== undefined && raw.confirmationStatus !== null) {
    if (!CONFIRMATION_STATUSES.has(raw.confirmationStatus))
      throw shapeError(method, `${field}.confirmationStatus`, "processed, confirmed or finalized");
    status.confirmationStatus = raw.confirmationStatus as SignatureStatus["confirmationStatus"];
  }
  return status;
}
