import type { FailedTransactionMetadata } from "litesvm";

/**
 * LiteSVM reports errors as enum numbers and small classes; RPC nodes send the serde JSON of agave's
 * `TransactionError`. These tables follow agave's enum order (the numbers LiteSVM returns).
 */
const TRANSACTION_ERRORS = [
  "AccountInUse",
  "AccountLoadedTwice",
  "AccountNotFound",
  "ProgramAccountNotFound",
  "InsufficientFundsForFee",
  "InvalidAccountForFee",
  "AlreadyProcessed",
  "BlockhashNotFound",
  "CallChainTooDeep",
  "MissingSignatureForFee",
  "InvalidAccountIndex",
  "SignatureFailure",
  "InvalidProgramForExecution",
  "SanitizeFailure",
  "ClusterMaintenance",
  "AccountBorrowOutstanding",
  "WouldExceedMaxBlockCostLimit",
  "UnsupportedVersion",
  "InvalidWritableAccount",
  "WouldExceedMaxAccountCostLimit",
  "WouldExceedAccountDataBlockLimit",
  "TooManyAccountLocks",
  "AddressLookupTableNotFound",
  "InvalidAddressLookupTableOwner",
  "InvalidAddressLookupTableData",
  "InvalidAddressLookupTableIndex",
  "InvalidRentPayingAccount",
  "WouldExceedMaxVoteCostLimit",
  "WouldExceedAccountDataTotalLimit",
  "MaxLoadedAccountsDataSizeExceeded",
  "ResanitizationNeeded",
  "InvalidLoadedAccountsDataSizeLimit",
  "UnbalancedTransaction",
  "ProgramCacheHitMaxLimit",
  "CommitCancelled",
] as const;

const INSTRUCTION_ERRORS = [
  "GenericError",
  "InvalidArgument",
  "InvalidInstructionData",
  "InvalidAccountData",
  "AccountDataTooSmall",
  "InsufficientFunds",
  "IncorrectProgramId",
  "MissingRequiredSignature",
  "AccountAlreadyInitialized",
  "UninitializedAccount",
  "UnbalancedInstruction",
  "ModifiedProgramId",
  "ExternalAccountLamportSpend",
  "ExternalAccountDataModified",
  "ReadonlyLamportChange",
  "ReadonlyDataModified",
  "DuplicateAccountIndex",
  "ExecutableModified",
  "RentEpochModified",
  "NotEnoughAccountKeys",
  "AccountDataSizeChanged",
  "AccountNotExecutable",
  "AccountBorrowFailed",
  "AccountBorrowOutstanding",
  "DuplicateAccountOutOfSync",
  "InvalidError",
  "ExecutableDataModified",
  "ExecutableLamportChange",
  "ExecutableAccountNotRentExempt",
  "UnsupportedProgramId",
  "CallDepth",
  "MissingAccount",
  "ReentrancyNotAllowed",
  "MaxSeedLengthExceeded",
  "InvalidSeeds",
  "InvalidRealloc",
  "ComputationalBudgetExceeded",
  "PrivilegeEscalation",
  "ProgramEnvironmentSetupFailure",
  "ProgramFailedToComplete",
  "ProgramFailedToCompile",
  "Immutable",
  "IncorrectAuthority",
  "AccountNotRentExempt",
  "InvalidAccountOwner",
  "ArithmeticOverflow",
  "UnsupportedSysvar",
  "IllegalOwner",
  "MaxAccountsDataAllocationsExceeded",
  "MaxAccountsExceeded",
  "MaxInstructionTraceLengthExceeded",
  "BuiltinProgramsMustConsumeComputeUnits",
] as const;

/** A transaction error as RPC JSON: a variant name, or `{ Variant: payload }`. */
export type RpcTransactionError = string | Record<string, unknown>;

export const BLOCKHASH_NOT_FOUND: RpcTransactionError = "BlockhashNotFound";
export const ALREADY_PROCESSED: RpcTransactionError = "AlreadyProcessed";
export const SIGNATURE_FAILURE: RpcTransactionError = "SignatureFailure";

type LiteSvmError = ReturnType<FailedTransactionMetadata["err"]>;

function instructionError(err: unknown): RpcTransactionError {
  if (typeof err === "number") return INSTRUCTION_ERRORS[err] ?? `InstructionError${err}`;
  if (err !== null && typeof err === "object") {
    if ("code" in err && typeof err.code === "number") return { Custom: err.code };
    if ("msg" in err && typeof err.msg === "string") return { BorshIoError: err.msg };
  }
  return "GenericError";
}

/** Converts LiteSVM's error value to the JSON an RPC node returns in `err`. */
export function toRpcTransactionError(err: LiteSvmError): RpcTransactionError {
  if (typeof err === "number") return TRANSACTION_ERRORS[err] ?? `TransactionError${err}`;
  // The classes are not exported at runtime, so they are told apart by their fields and class name.
  const kind = err.constructor.name;
  if ("err" in err && typeof err.err === "function") {
    return { InstructionError: [err.index, instructionError(err.err())] };
  }
  if ("index" in err) return { DuplicateInstruction: err.index };
  if (kind.includes("ProgramExecutionTemporarilyRestricted")) {
    return { ProgramExecutionTemporarilyRestricted: { account_index: err.accountIndex } };
  }
  return { InsufficientFundsForRent: { account_index: err.accountIndex } };
}
