import { PublicKey, VersionedMessage } from "@solana/web3.js";
import bs58 from "bs58";
import { z } from "zod";
import { feeForMessage } from "./fees.js";
import {
  type ChainAccount,
  type LocalChain,
  PreflightFailure,
  SignatureVerificationFailure,
} from "./local-chain.js";
import {
  type AccountEncoding,
  compiledInnerJson,
  decodedInnerJson,
  encodeAccount,
  tokenBalancesJson,
  uiTokenAmount,
} from "./rpc-encoding.js";
import {
  invalidParams,
  RPC_SEND_TRANSACTION_PREFLIGHT_FAILURE,
  RPC_TRANSACTION_SIGNATURE_VERIFICATION_FAILURE,
  RPC_UNSUPPORTED_TRANSACTION_VERSION,
  RpcError,
} from "./rpc-errors.js";
import { decodeTokenAccount, isTokenProgram } from "./token-state.js";
import { MalformedTransactionError } from "./wire-transaction.js";

export type RpcMethod = (chain: LocalChain, params: unknown) => unknown;

const SOLANA_CORE_VERSION = "2.3.0";

const pubkey = z.string().transform((text, ctx) => {
  try {
    return new PublicKey(text);
  } catch {
    ctx.addIssue({ code: "custom", message: `invalid pubkey ${text}` });
    return z.NEVER;
  }
});
const commitmentConfig = z.looseObject({
  commitment: z.string().optional(),
  minContextSlot: z.number().optional(),
});
const accountEncoding = z.enum(["base64", "base58", "jsonParsed", "base64+zstd"]);
const accountConfig = commitmentConfig.extend({ encoding: accountEncoding.optional() });
const binaryEncoding = z.enum(["base64", "base58"]);

/** Parses a method's positional params, answering -32602 with zod's first complaint. */
function parse<T extends z.ZodType>(schema: T, params: unknown): z.output<T> {
  const result = schema.safeParse(params ?? []);
  if (!result.success) {
    const issue = result.error.issues[0];
    const where =
      issue === undefined || issue.path.length === 0 ? "params" : `params.${issue.path.join(".")}`;
    throw invalidParams(`${where}: ${issue?.message ?? "invalid"}`);
  }
  return result.data;
}

function withContext(chain: LocalChain, value: unknown): unknown {
  return { context: { apiVersion: SOLANA_CORE_VERSION, slot: chain.slot }, value };
}

function decodeBytes(text: string, encoding: "base64" | "base58"): Uint8Array {
  try {
    return encoding === "base64" ? Buffer.from(text, "base64") : bs58.decode(text);
  } catch {
    throw invalidParams(`invalid ${encoding} transaction`);
  }
}

function account(
  chain: LocalChain,
  value: ChainAccount | null,
  encoding: AccountEncoding | undefined,
): unknown {
  // Callers that omit the encoding get base58, the RPC default for binary data.
  return encodeAccount(value, encoding ?? "base58", (mint) => chain.mintDecimals(mint));
}

function rethrowTransactionError(error: unknown): never {
  if (error instanceof MalformedTransactionError) {
    throw invalidParams(`failed to deserialize transaction: ${error.message}`);
  }
  if (error instanceof SignatureVerificationFailure) {
    throw new RpcError(RPC_TRANSACTION_SIGNATURE_VERIFICATION_FAILURE, error.message);
  }
  if (error instanceof PreflightFailure) {
    const sim = error.simulation;
    throw new RpcError(RPC_SEND_TRANSACTION_PREFLIGHT_FAILURE, error.message, {
      err: sim.err,
      logs: sim.logs,
      accounts: null,
      unitsConsumed: sim.unitsConsumed,
      returnData: null,
      innerInstructions: null,
    });
  }
  throw error;
}

const sendParams = z.tuple([
  z.string(),
  z
    .looseObject({
      encoding: binaryEncoding.optional(),
      skipPreflight: z.boolean().optional(),
      preflightCommitment: z.string().optional(),
      maxRetries: z.number().int().nonnegative().optional(),
      minContextSlot: z.number().optional(),
    })
    .optional(),
]);

const simulateParams = z.tuple([
  z.string(),
  z
    .looseObject({
      encoding: binaryEncoding.optional(),
      sigVerify: z.boolean().optional(),
      replaceRecentBlockhash: z.boolean().optional(),
      commitment: z.string().optional(),
      innerInstructions: z.boolean().optional(),
      accounts: z.object({ addresses: z.array(pubkey), encoding: accountEncoding.optional() }).optional(),
      minContextSlot: z.number().optional(),
    })
    .optional(),
]);

const transactionParams = z.tuple([
  z.string(),
  z
    .union([
      z.enum(["json", "jsonParsed", "base64", "base58"]),
      z.looseObject({
        encoding: z.enum(["json", "jsonParsed", "base64", "base58"]).optional(),
        commitment: z.string().optional(),
        maxSupportedTransactionVersion: z.number().int().optional(),
      }),
    ])
    .optional(),
]);

function getTransaction(chain: LocalChain, params: unknown): unknown {
  const [signature, rawConfig] = parse(transactionParams, params);
  const config = typeof rawConfig === "string" ? { encoding: rawConfig } : (rawConfig ?? {});
  const record = chain.transaction(signature);
  if (record === undefined) return null;
  const tx = record.transaction;
  const maxVersion =
    "maxSupportedTransactionVersion" in config ? config.maxSupportedTransactionVersion : undefined;
  if (tx.version === 0 && maxVersion === undefined) {
    throw new RpcError(
      RPC_UNSUPPORTED_TRANSACTION_VERSION,
      'Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": 0',
    );
  }
  const encoding = config.encoding ?? "json";
  const message = tx.message;
  const transaction =
    encoding === "base64"
      ? [Buffer.from(tx.bytes).toString("base64"), "base64"]
      : encoding === "base58"
        ? [bs58.encode(tx.bytes), "base58"]
        : {
            signatures: tx.signatures.map((sig) => bs58.encode(sig)),
            message: {
              accountKeys: message.staticAccountKeys.map((key) => key.toBase58()),
              header: message.header,
              recentBlockhash: message.recentBlockhash,
              instructions: message.compiledInstructions.map((ix) => ({
                programIdIndex: ix.programIdIndex,
                accounts: [...ix.accountKeyIndexes],
                data: bs58.encode(ix.data),
                stackHeight: null,
              })),
              ...(tx.version === 0
                ? {
                    addressTableLookups: message.addressTableLookups.map((lookup) => ({
                      accountKey: lookup.accountKey.toBase58(),
                      writableIndexes: lookup.writableIndexes,
                      readonlyIndexes: lookup.readonlyIndexes,
                    })),
                  }
                : {}),
            },
          };
  return {
    slot: record.slot,
    blockTime: record.blockTime,
    ...(maxVersion === undefined ? {} : { version: tx.version }),
    transaction,
    meta: {
      err: record.err,
      status: record.err === null ? { Ok: null } : { Err: record.err },
      fee: record.fee,
      preBalances: record.preBalances,
      postBalances: record.postBalances,
      innerInstructions: compiledInnerJson(record.innerInstructions),
      logMessages: record.logs,
      preTokenBalances: tokenBalancesJson(record.preTokenBalances),
      postTokenBalances: tokenBalancesJson(record.postTokenBalances),
      rewards: [],
      loadedAddresses: {
        writable: record.accounts.loadedWritable.map((key) => key.toBase58()),
        readonly: record.accounts.loadedReadonly.map((key) => key.toBase58()),
      },
      computeUnitsConsumed: record.unitsConsumed,
    },
  };
}

function simulateTransaction(chain: LocalChain, params: unknown): unknown {
  const [encoded, config = {}] = parse(simulateParams, params);
  if (config.sigVerify === true && config.replaceRecentBlockhash === true) {
    throw invalidParams("sigVerify may not be used with replaceRecentBlockhash");
  }
  const bytes = decodeBytes(encoded, config.encoding ?? "base58");
  let sim: ReturnType<LocalChain["simulate"]>;
  try {
    sim = chain.simulate(bytes, {
      sigVerify: config.sigVerify ?? false,
      replaceRecentBlockhash: config.replaceRecentBlockhash ?? false,
      accountAddresses: config.accounts?.addresses ?? [],
    });
  } catch (error) {
    rethrowTransactionError(error);
  }
  const accountEncodingWanted = config.accounts?.encoding ?? "base64";
  return withContext(chain, {
    err: sim.err,
    logs: sim.logs,
    accounts:
      config.accounts === undefined || sim.accounts === null
        ? null
        : sim.accounts.map((a) => account(chain, a, accountEncodingWanted)),
    unitsConsumed: sim.unitsConsumed,
    returnData:
      sim.returnData === null
        ? null
        : {
            programId: sim.returnData.programId,
            data: [Buffer.from(sim.returnData.data).toString("base64"), "base64"],
          },
    innerInstructions:
      config.innerInstructions === true ? decodedInnerJson(sim.innerInstructions, sim.accountKeys) : null,
    ...(sim.replacementBlockhash === undefined ? {} : { replacementBlockhash: sim.replacementBlockhash }),
  });
}

function sendTransaction(chain: LocalChain, params: unknown): unknown {
  const [encoded, config = {}] = parse(sendParams, params);
  const bytes = decodeBytes(encoded, config.encoding ?? "base58");
  try {
    return chain.send(bytes, { skipPreflight: config.skipPreflight ?? false });
  } catch (error) {
    rethrowTransactionError(error);
  }
}

const tokenAccountsFilter = z.union([z.object({ mint: pubkey }), z.object({ programId: pubkey })]);

function getTokenAccountsByOwner(chain: LocalChain, params: unknown): unknown {
  const [owner, filter, config] = parse(
    z.tuple([pubkey, tokenAccountsFilter, accountConfig.optional()]),
    params,
  );
  if ("programId" in filter && !isTokenProgram(filter.programId)) {
    throw invalidParams("unrecognized Token program id");
  }
  const matches = chain
    .tokenAccountsByOwner(owner)
    .filter((entry) =>
      "mint" in filter ? entry.state.mint.equals(filter.mint) : entry.account.owner.equals(filter.programId),
    );
  return withContext(
    chain,
    matches.map((entry) => ({
      pubkey: entry.address.toBase58(),
      account: account(chain, entry.account, config?.encoding),
    })),
  );
}

function getTokenAccountBalance(chain: LocalChain, params: unknown): unknown {
  const [address] = parse(z.tuple([pubkey, commitmentConfig.optional()]), params);
  const raw = chain.getAccount(address);
  const state = raw === null || !isTokenProgram(raw.owner) ? undefined : decodeTokenAccount(raw.data);
  if (state === undefined) throw invalidParams("could not find token account");
  return withContext(chain, uiTokenAmount(state.amount, chain.mintDecimals(state.mint) ?? 0));
}

function getFeeForMessage(chain: LocalChain, params: unknown): unknown {
  const [encoded] = parse(z.tuple([z.string(), commitmentConfig.optional()]), params);
  let message: VersionedMessage;
  try {
    message = VersionedMessage.deserialize(Buffer.from(encoded, "base64"));
  } catch {
    throw invalidParams("invalid message");
  }
  // Like a node: no fee for a message whose blockhash it no longer (or never) knew.
  return withContext(chain, chain.isBlockhashValid(message.recentBlockhash) ? feeForMessage(message) : null);
}

/**
 * A node's list of the newest transactions touching an address (`limit` at most 1,000, as a node
 * allows). `before` and `until` are not supported: answered as invalid, never ignored.
 */
function getSignaturesForAddress(chain: LocalChain, params: unknown): unknown {
  const [address, config] = parse(
    z.tuple([
      pubkey,
      z
        .looseObject({ limit: z.number().int().min(1).max(1_000).optional() })
        .refine((c) => c.before === undefined && c.until === undefined, "before/until are not supported")
        .optional(),
    ]),
    params,
  );
  return chain.signaturesFor(address, config?.limit ?? 1_000).map((record) => {
    const status = chain.signatureStatus(record.signature);
    return {
      signature: record.signature,
      slot: record.slot,
      err: record.err,
      memo: null,
      blockTime: record.blockTime,
      confirmationStatus: status?.confirmationStatus ?? null,
    };
  });
}

const noParams = z.union([z.tuple([]), z.tuple([commitmentConfig])]);

/** Every method the local chain answers; anything else is -32601. */
export const RPC_METHODS: Readonly<Record<string, RpcMethod>> = {
  getHealth: () => "ok",
  getVersion: () => ({ "solana-core": SOLANA_CORE_VERSION, "feature-set": 0 }),
  getGenesisHash: (chain) => chain.genesisHash,
  getSlot: (chain, params) => {
    parse(noParams, params);
    return chain.slot;
  },
  getBlockHeight: (chain, params) => {
    parse(noParams, params);
    return chain.blockHeight;
  },
  getEpochInfo: (chain, params) => {
    parse(noParams, params);
    const info = chain.epochInfo;
    return {
      absoluteSlot: chain.slot,
      blockHeight: chain.blockHeight,
      epoch: info.epoch,
      slotIndex: info.slotIndex,
      slotsInEpoch: info.slotsInEpoch,
      transactionCount: info.transactionCount,
    };
  },
  getLatestBlockhash: (chain, params) => {
    parse(noParams, params);
    return withContext(chain, chain.latestBlockhash());
  },
  isBlockhashValid: (chain, params) => {
    const [blockhash] = parse(z.tuple([z.string(), commitmentConfig.optional()]), params);
    return withContext(chain, chain.isBlockhashValid(blockhash));
  },
  getMinimumBalanceForRentExemption: (chain, params) => {
    const [length] = parse(z.tuple([z.number().int().nonnegative(), commitmentConfig.optional()]), params);
    return Number(chain.minimumBalanceForRentExemption(length));
  },
  getRecentPrioritizationFees: (chain, params) => {
    // Optional positional list of at most 128 accounts (the node's limit); an array keeps zod's complaint.
    parse(z.array(z.array(pubkey).max(128)).max(1), params);
    const fees = chain.faults.recentPriorityFees;
    const congestion = chain.faults.congestion;
    if (fees.length === 0 && congestion !== undefined) return congestion.recentFees(chain.slot);
    if (fees.length === 0) return [{ slot: chain.slot, prioritizationFee: 0 }];
    // One entry a slot, the last at the current slot; none before slot 0 (fewer on a young chain).
    return fees
      .map((fee, i) => ({ slot: chain.slot - (fees.length - 1 - i), prioritizationFee: fee }))
      .filter((entry) => entry.slot >= 0);
  },
  getFeeForMessage,
  getBalance: (chain, params) => {
    const [address] = parse(z.tuple([pubkey, commitmentConfig.optional()]), params);
    return withContext(chain, chain.lamportsOf(address));
  },
  getAccountInfo: (chain, params) => {
    const [address, config] = parse(z.tuple([pubkey, accountConfig.optional()]), params);
    return withContext(chain, account(chain, chain.getAccount(address), config?.encoding));
  },
  getMultipleAccounts: (chain, params) => {
    const [addresses, config] = parse(z.tuple([z.array(pubkey).max(100), accountConfig.optional()]), params);
    return withContext(
      chain,
      addresses.map((address) => account(chain, chain.getAccount(address), config?.encoding)),
    );
  },
  getTokenAccountBalance,
  getTokenAccountsByOwner,
  getSignaturesForAddress,
  getSignatureStatuses: (chain, params) => {
    const [signatures] = parse(
      z.tuple([
        z.array(z.string()).max(256),
        z.looseObject({ searchTransactionHistory: z.boolean().optional() }).optional(),
      ]),
      params,
    );
    // Every landed transaction is kept, so history search and the recent cache give the same answer.
    return withContext(
      chain,
      signatures.map((signature) => chain.signatureStatus(signature)),
    );
  },
  getTransaction,
  sendTransaction,
  simulateTransaction,
};
