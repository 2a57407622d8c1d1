import {
  type AccountInfo,
  type Commitment,
  type Connection,
  type GetMultipleAccountsConfig,
  PublicKey,
  type RpcResponseAndContext,
  type SimulatedTransactionAccountInfo,
  type SimulatedTransactionResponse,
  type SimulateTransactionConfig,
  type TransactionError,
  VersionedTransaction,
} from "@solana/web3.js";
import { addressOf } from "./address-text.js";
import type { JsonRpc } from "./json-rpc.js";

/**
 * The connection the signer's checks read through: the accounts of a transaction and its simulation
 * go to the node as plain JSON-RPC (json-rpc.ts), their answers checked here by hand for exactly what
 * the policy reads, instead of through web3.js's fetch and superstruct. Everything else goes to
 * `connection` as it is. An answer of the wrong shape is an error naming the field (transient, as
 * web3.js's were): nothing is decided on it.
 */
export function withLeanReads(connection: Connection, rpc: JsonRpc): Connection {
  const lean = Object.create(connection) as Connection;
  const owners = ownerKeys();
  const readAny = connection.getMultipleAccountsInfo.bind(connection);
  lean.getMultipleAccountsInfo = async (
    publicKeys: PublicKey[],
    commitmentOrConfig?: Commitment | GetMultipleAccountsConfig,
  ) => {
    // The policy's form: keys and a commitment. A slice or a context slot goes to web3.js.
    if (!isCommitmentOnly(commitmentOrConfig)) return readAny(publicKeys, commitmentOrConfig);
    const commitment = commitmentOf(commitmentOrConfig) ?? connection.commitment;
    const answer = await rpc("getMultipleAccounts", [
      publicKeys.map((key) => addressOf(key)),
      { encoding: "base64", ...(commitment ? { commitment } : {}) },
    ]);
    const value = contextValue(answer, "getMultipleAccounts");
    if (!Array.isArray(value) || value.length !== publicKeys.length)
      throw shapeError("getMultipleAccounts", "value", `an array of ${publicKeys.length} accounts`);
    return value.map((account, i) => accountInfo(account, `value[${i}]`, owners));
  };
  const simulateAny = connection.simulateTransaction.bind(connection);
  lean.simulateTransaction = ((transaction: unknown, config?: unknown, ...rest: unknown[]) => {
    // The policy's form: a versioned transaction and a config. Any other goes to web3.js.
    if (!(transaction instanceof VersionedTransaction) || rest.length > 0 || typeof config !== "object")
      return (simulateAny as (...args: unknown[]) => unknown)(transaction, config, ...rest);
    const { commitment } = connection;
    return simulate(
      rpc,
      transaction.serialize(),
      config as SimulateTransactionConfig | undefined,
      commitment,
    );
  }) as Connection["simulateTransaction"];
  return lean;
}

async function simulate(
  rpc: JsonRpc,
  wire: Uint8Array,
  config: SimulateTransactionConfig | undefined,
  defaultCommitment: Commitment | undefined,
): Promise<RpcResponseAndContext<SimulatedTransactionResponse>> {
  const commitment = config?.commitment ?? defaultCommitment;
  const answer = await rpc("simulateTransaction", [
    Buffer.from(wire.buffer, wire.byteOffset, wire.byteLength).toString("base64"),
    {
      ...config,
      encoding: "base64",
      ...(commitment ? { commitment } : {}),
    },
  ]);
  const value = contextValue(answer, "simulateTransaction");
  return { context: contextOf(answer), value: simulationResponse(value) };
}

const BASE58_KEY = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;

export function shapeError(method: string, field: string, rule: string): Error {
  return new Error(`RPC ${method}: ${field} is not ${rule}`);
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A call's commitment argument, alone or in a config that may hold more (a slice, a context slot). */
type CommitmentArg = Commitment | { commitment?: Commitment } | undefined;

/** Whether the argument says nothing but a commitment: the form the lean calls answer themselves. */
export function isCommitmentOnly(arg: CommitmentArg): boolean {
  return typeof arg !== "object" || Object.keys(arg).every((key) => key === "commitment");
}

export function commitmentOf(arg: CommitmentArg): Commitment | undefined {
  return typeof arg === "string" ? arg : arg?.commitment;
}

/** `{ context: { slot }, value }`: the value, once the context is one. */
export function contextValue(answer: unknown, method: string): unknown {
  if (!isRecord(answer) || !isRecord(answer.context) || typeof answer.context.slot !== "number")
    throw shapeError(method, "the answer", "{ context: { slot }, value }");
  return answer.value;
}

export function contextOf(answer: unknown): { slot: number } {
  return { slot: (answer as { context: { slot: number } }).context.slot };
}

export function isLamports(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

/**
 * The fields both reads give of an account, checked: lamports, an owner key, base64 data (the reads
 * ask for base64; data in another encoding would be decoded as garbage).
 */
function accountFields(
  raw: unknown,
  method: string,
  field: string,
): { lamports: number; owner: string; base64: string; raw: Record<string, unknown> } {
  if (!isRecord(raw)) throw shapeError(method, field, "an account or null");
  if (!isLamports(raw.lamports)) throw shapeError(method, `${field}.lamports`, "a whole number of lamports");
  if (typeof raw.owner !== "string" || !BASE58_KEY.test(raw.owner))
    throw shapeError(method, `${field}.owner`, "a base58 public key");
  const data = raw.data;
  if (!Array.isArray(data) || typeof data[0] !== "string" || data[1] !== "base64")
    throw shapeError(method, `${field}.data`, '[base64 text, "base64"]');
  return { lamports: raw.lamports, owner: raw.owner, base64: data[0], raw };
}

/** An account as getMultipleAccounts answers it in base64, or null. */
function accountInfo(
  answer: unknown,
  field: string,
  owners: (key: string) => PublicKey,
): AccountInfo<Buffer> | null {
  if (answer === null) return null;
  const { lamports, owner, base64, raw } = accountFields(answer, "getMultipleAccounts", field);
  if (typeof raw.executable !== "boolean")
    throw shapeError("getMultipleAccounts", `${field}.executable`, "a boolean");
  const info: AccountInfo<Buffer> = {
    lamports,
    owner: owners(owner),
    executable: raw.executable,
    data: Buffer.from(base64, "base64"),
  };
  if (typeof raw.rentEpoch === "number") info.rentEpoch = raw.rentEpoch;
  if (typeof raw.space === "number") (info as { space?: number }).space = raw.space;
  return info;
}

/**
 * Owners' keys by their text: the accounts a signer reads have a handful of owners (System, the token
 * programs, the service's), so each is decoded from base58 once. Bounded: a node naming a new owner in
 * every answer only empties the memo.
 */
function ownerKeys(): (key: string) => PublicKey {
  const known = new Map<string, PublicKey>();
  return (key) => {
    let owner = known.get(key);
    if (owner === undefined) {
      if (known.size >= 256) known.clear();
      owner = new PublicKey(key);
      known.set(key, owner);
    }
    return owner;
  };
}

/** A transaction's error as a node gives it: null (none), an error name or an error object. */
export function transactionError(raw: unknown, method: string, field: string): TransactionError | null {
  const err = raw ?? null;
  if (err !== null && typeof err !== "string" && !isRecord(err))
    throw shapeError(method, field, "null, an error name or an error object");
  return err as TransactionError | null;
}

/** What the policy reads of a simulation, each part checked: err, logs, accounts, inner instructions, units. */
function simulationResponse(raw: unknown): SimulatedTransactionResponse {
  const method = "simulateTransaction";
  if (!isRecord(raw)) throw shapeError(method, "value", "an object");
  const err = transactionError(raw.err, method, "value.err");
  const logs = raw.logs ?? null;
  if (logs !== null && !(Array.isArray(logs) && logs.every((line) => typeof line === "string")))
    throw shapeError(method, "value.logs", "null or a list of text lines");
  const response: SimulatedTransactionResponse = {
    err: err as SimulatedTransactionResponse["err"],
    logs: logs as string[] | null,
    accounts: simulatedAccounts(raw.accounts),
    innerInstructions: innerInstructions(raw.innerInstructions),
  };
  if (raw.unitsConsumed !== undefined && raw.unitsConsumed !== null) {
    if (!isLamports(raw.unitsConsumed)) throw shapeError(method, "value.unitsConsumed", "a whole number");
    response.unitsConsumed = raw.unitsConsumed;
  }
  if (isRecord(raw.returnData))
    response.returnData = raw.returnData as SimulatedTransactionResponse["returnData"];
  return response;
}

function simulatedAccounts(raw: unknown): Array<SimulatedTransactionAccountInfo | null> | null {
  if (raw === undefined || raw === null) return null;
  if (!Array.isArray(raw)) throw shapeError("simulateTransaction", "value.accounts", "null or a list");
  return raw.map((account, i) => {
    if (account === null) return null;
    const {
      lamports,
      owner,
      base64,
      raw: fields,
    } = accountFields(account, "simulateTransaction", `value.accounts[${i}]`);
    return {
      lamports,
      owner,
      data: [base64, "base64"],
      executable: fields.executable === true,
      ...(typeof fields.rentEpoch === "number" ? { rentEpoch: fields.rentEpoch } : {}),
      ...(typeof fields.space === "number" ? { space: fields.space } : {}),
    };
  });
}

type InnerGroups = NonNullable<SimulatedTransactionResponse["innerInstructions"]>;

/**
 * Inner instructions as the node sends them: raw ({ programId, accounts, data }) or parsed
 * ({ programId, program, parsed }). Keys stay text (instruction-effects reads either).
 */
function innerInstructions(raw: unknown): InnerGroups | null {
  const method = "simulateTransaction";
  if (raw === undefined || raw === null) return null;
  if (!Array.isArray(raw)) throw shapeError(method, "value.innerInstructions", "null or a list");
  return raw.map((group, g) => {
    const field = `value.innerInstructions[${g}]`;
    if (!isRecord(group) || typeof group.index !== "number" || !Array.isArray(group.instructions))
      throw shapeError(method, field, "{ index, instructions }");
    group.instructions.forEach((ix, j) => {
      const at = `${field}.instructions[${j}]`;
      if (!isRecord(ix) || typeof ix.programId !== "string" || !BASE58_KEY.test(ix.programId))
        throw shapeError(method, `${at}.programId`, "a base58 public key");
      const isRaw =
        typeof ix.data === "string" &&
        Array.isArray(ix.accounts) &&
        ix.accounts.every((key) => typeof key === "string" && BASE58_KEY.test(key));
      const isParsed = !("data" in ix) && "parsed" in ix && typeof ix.program === "string";
      if (!isRaw && !isParsed)
        throw shapeError(method, at, "a raw { accounts, data } or a parsed { program, parsed } instruction");
    });
    return group as unknown as InnerGroups[number];
  });
}
