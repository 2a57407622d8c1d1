import {
  AddressLookupTableProgram,
  ComputeBudgetProgram,
  type PublicKey,
  SystemProgram,
  type VersionedMessage,
} from "@solana/web3.js";

export const LAMPORTS_PER_SIGNATURE = 5_000;
const MAX_COMPUTE_UNIT_LIMIT = 1_400_000;
const DEFAULT_UNITS_PER_INSTRUCTION = 200_000;
/** Builtin programs get a small default allocation (SIMD-0170); LiteSVM charges priority fees on it. */
const DEFAULT_UNITS_PER_BUILTIN_INSTRUCTION = 3_000;
const MICRO_LAMPORTS_PER_LAMPORT = 1_000_000n;

const BUILTIN_PROGRAMS = new Set([
  SystemProgram.programId.toBase58(),
  ComputeBudgetProgram.programId.toBase58(),
  AddressLookupTableProgram.programId.toBase58(),
  "BPFLoaderUpgradeab1e11111111111111111111111",
  "BPFLoader2111111111111111111111111111111111",
  "Vote111111111111111111111111111111111111111",
  "Stake11111111111111111111111111111111111111",
  "Config1111111111111111111111111111111111111",
]);

const SET_COMPUTE_UNIT_LIMIT = 2;
const SET_COMPUTE_UNIT_PRICE = 3;

interface ComputeBudget {
  /** SetComputeUnitPrice's micro-lamports per unit; 0 when the transaction has none. */
  readonly priceMicroLamports: bigint;
  readonly unitLimit: bigint;
}

/** The compute budget a message asks for: its explicit limit and price, or the runtime's defaults. */
function computeBudgetOf(message: VersionedMessage): ComputeBudget {
  const keys: readonly PublicKey[] = message.staticAccountKeys;
  let explicitLimit: number | undefined;
  let priceMicroLamports = 0n;
  let defaultLimit = 0;
  for (const ix of message.compiledInstructions) {
    const program = keys[ix.programIdIndex]?.toBase58() ?? "";
    const data = Buffer.from(ix.data);
    if (program === ComputeBudgetProgram.programId.toBase58()) {
      if (data[0] === SET_COMPUTE_UNIT_LIMIT && data.length >= 5) explicitLimit = data.readUInt32LE(1);
      if (data[0] === SET_COMPUTE_UNIT_PRICE && data.length >= 9)
        priceMicroLamports = data.readBigUInt64LE(1);
    }
    defaultLimit += BUILTIN_PROGRAMS.has(program)
      ? DEFAULT_UNITS_PER_BUILTIN_INSTRUCTION
      : DEFAULT_UNITS_PER_INSTRUCTION;
  }
  return {
    priceMicroLamports,
    unitLimit: BigInt(Math.min(explicitLimit ?? defaultLimit, MAX_COMPUTE_UNIT_LIMIT)),
  };
}

/** The compute-unit price (micro-lamports per unit) a message bids; 0 without SetComputeUnitPrice. */
export function computeUnitPriceOf(message: VersionedMessage): number {
  return Number(computeBudgetOf(message).priceMicroLamports);
}

/**
 * The fee the runtime charges: 5,000 lamports per signature plus the priority fee
 * (compute-unit price × compute-unit limit, rounded up). Program ids are always static keys.
 */
export function feeForMessage(message: VersionedMessage): number {
  const { priceMicroLamports, unitLimit } = computeBudgetOf(message);
  const priority =
    (priceMicroLamports * unitLimit + MICRO_LAMPORTS_PER_LAMPORT - 1n) / MICRO_LAMPORTS_PER_LAMPORT;
  return LAMPORTS_PER_SIGNATURE * message.header.numRequiredSignatures + Number(priority);
}
