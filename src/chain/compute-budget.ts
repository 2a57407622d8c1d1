import { addressOf } from "./address-text.js";
import type { InstructionView } from "./decode.js";
import { COMPUTE_BUDGET_PROGRAM } from "./programs.js";

/** Compute Budget instruction tags (the first data byte). */
const SET_COMPUTE_UNIT_LIMIT = 2;
const SET_COMPUTE_UNIT_PRICE = 3;

/**
 * The runtime's defaults when a transaction sets no limit: 200,000 units per instruction; since
 * SIMD-0170, builtins (System, Compute Budget, ...) get 3,000 instead, Compute Budget instructions
 * included. Counting 200,000 for every other instruction and 3,000 for each Compute Budget one is an
 * upper bound under either rule, so the fee the policy allows is never short of what is charged.
 */
const DEFAULT_UNITS_PER_INSTRUCTION = 200_000n;
const DEFAULT_UNITS_PER_BUILTIN_INSTRUCTION = 3_000n;
const MAX_UNITS = 1_400_000n;

export interface ComputeBudget {
  /** Micro-lamports per compute unit, the highest any SetComputeUnitPrice asks; 0 when not set. */
  unitPriceMicroLamports: bigint;
  /** The highest any SetComputeUnitLimit asks (at most 1,400,000), else the runtime's default. */
  unitLimit: bigint;
  /** Lamports the priority fee can cost at most: price x limit, rounded up. */
  priorityFeeLamports: bigint;
  /** How many SetComputeUnitPrice and SetComputeUnitLimit instructions there are. */
  priceInstructions: number;
  limitInstructions: number;
}

/**
 * Reads the compute budget a transaction asks for (pure). Where an instruction is repeated, the
 * highest value counts: whichever one the runtime would honour, the fee is never above that. Malformed
 * data throws a RangeError.
 */
export function readComputeBudget(instructions: readonly InstructionView[]): ComputeBudget {
  let price: bigint | undefined;
  let limit: bigint | undefined;
  let priceInstructions = 0;
  let limitInstructions = 0;
  let others = 0n;
  let budgetInstructions = 0n;
  for (const ix of instructions) {
    if (addressOf(ix.programId) !== COMPUTE_BUDGET_PROGRAM) {
      others += 1n;
      continue;
    }
    budgetInstructions += 1n;
    const data = Buffer.from(ix.data);
    const tag = data[0];
    if (tag === SET_COMPUTE_UNIT_PRICE) {
      if (data.length !== 9)
        throw new RangeError(`instruction ${ix.index}: compute unit price data is ${data.length} bytes`);
      const value = data.readBigUInt64LE(1);
      if (price === undefined || value > price) price = value;
      priceInstructions += 1;
    } else if (tag === SET_COMPUTE_UNIT_LIMIT) {
      if (data.length !== 5)
        throw new RangeError(`instruction ${ix.index}: compute unit limit data is ${data.length} bytes`);
      const value = BigInt(data.readUInt32LE(1));
      if (limit === undefined || value > limit) limit = value;
      limitInstructions += 1;
    }
  }
  const unitPriceMicroLamports = price ?? 0n;
  let unitLimit =
    limit ??
    others * DEFAULT_UNITS_PER_INSTRUCTION + budgetInstructions * DEFAULT_UNITS_PER_BUILTIN_INSTRUCTION;
  if (unitLimit > MAX_UNITS) unitLimit = MAX_UNITS;
  const priorityFeeLamports = (unitPriceMicroLamports * unitLimit + 999_999n) / 1_000_000n;
  return { unitPriceMicroLamports, unitLimit, priorityFeeLamports, priceInstructions, limitInstructions };
}
