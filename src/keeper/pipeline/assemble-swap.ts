import {
  AddressLookupTableAccount,
  ComputeBudgetProgram,
  type Connection,
  PublicKey,
  TransactionInstruction,
  TransactionMessage,
  VersionedTransaction,
} from "@solana/web3.js";
import bs58 from "bs58";
import { MAX_COMPUTE_UNITS } from "../../chain/priority-fee.js";
import { rpcCall } from "../../chain/rpc.js";
import { PermanentError } from "../../core/errors.js";
import type { ApiInstruction } from "../../core/schemas/common.js";
import type { SwapBuildResponse } from "../../core/schemas/swap.js";

export { MAX_COMPUTE_UNITS };
/** Head room over what the simulation consumed. */
export const COMPUTE_UNIT_MARGIN = 1.2;

/**
 * Simulates an unsigned transaction; returns the compute units it consumed. A transaction the
 * simulation refuses throws a PermanentError; an unreachable RPC throws something to retry.
 */
export type SimulateUnits = (transaction: VersionedTransaction) => Promise<number>;

export interface AssembledSwap {
  /** The unsigned v0 transaction, base64. */
  transaction: string;
  lastValidBlockHeight: number;
  computeUnitLimit: number;
  /** Keeper's compute-unit price, where it set one. */
  computeUnitPrice?: number;
}

function toInstruction(ix: ApiInstruction): TransactionInstruction {
  return new TransactionInstruction({
    programId: new PublicKey(ix.programId),
    keys: ix.accounts.map((a) => ({
      pubkey: new PublicKey(a.pubkey),
      isSigner: a.isSigner,
      isWritable: a.isWritable,
    })),
    data: Buffer.from(ix.data, "base64"),
  });
}

/**
 * Assembles the v0 transaction of a swap build (api-gaps "Swap build"), with no RPC read but one
 * simulation: a compute-unit limit (what the simulation consumed x1.2, at most 1,400,000), then the
 * build's computeBudgetInstructions, setupInstructions, swapInstruction, cleanupInstruction (if any)
 * and otherInstructions; the payer is `payer` or the taker; the lookup tables are the build's own
 * `addressesByLookupTableAddress`; the blockhash is `blockhashWithMetadata`'s 32 bytes. With
 * `unitPrice`, Keeper's SetComputeUnitPrice (priced for the simulated limit) replaces the build's.
 */
export async function assembleSwap(
  build: SwapBuildResponse,
  options: {
    taker: string;
    payer?: string;
    simulateUnits: SimulateUnits;
    /** The price for a unit limit; known only once the simulation has set the limit. */
    unitPrice?: (unitLimit: number) => number;
  },
): Promise<AssembledSwap> {
  const payerKey = new PublicKey(options.payer ?? options.taker);
  // Null means the route uses no lookup tables (api-live).
  const tables = Object.entries(build.addressesByLookupTableAddress ?? {}).map(
    ([key, addresses]) =>
      new AddressLookupTableAccount({
        key: new PublicKey(key),
        state: {
          deactivationSlot: BigInt("18446744073709551615"),
          lastExtendedSlot: 0,
          lastExtendedSlotStartIndex: 0,
          addresses: addresses.map((a) => new PublicKey(a)),
        },
      }),
  );
  // The build's own compute-unit limit (if any) would conflict with ours: ours decides; so does our
  // price when we set one (the policy refuses two price instructions).
  const budget = build.computeBudgetInstructions.filter(
    (ix) =>
      !isBudgetInstruction(ix, SET_COMPUTE_UNIT_LIMIT) &&
      !(options.unitPrice && isBudgetInstruction(ix, SET_COMPUTE_UNIT_PRICE)),
  );
  const body = [
    ...budget,
    ...build.setupInstructions,
    build.swapInstruction,
    ...(build.cleanupInstruction ? [build.cleanupInstruction] : []),
    ...build.otherInstructions,
  ].map(toInstruction);
  const recentBlockhash = bs58.encode(Uint8Array.from(build.blockhashWithMetadata.blockhash));
  const compile = (units: number, price: number | undefined) =>
    new VersionedTransaction(
      new TransactionMessage({
        payerKey,
        recentBlockhash,
        instructions: [
          ComputeBudgetProgram.setComputeUnitLimit({ units }),
          ...(price !== undefined
            ? [ComputeBudgetProgram.setComputeUnitPrice({ microLamports: price })]
            : []),
          ...body,
        ],
      }).compileToV0Message(tables),
    );
  // The simulation carries a price instruction too (any value), so it counts the same instructions.
  const consumed = await options.simulateUnits(compile(MAX_COMPUTE_UNITS, options.unitPrice ? 0 : undefined));
  const computeUnitLimit = Math.min(MAX_COMPUTE_UNITS, Math.ceil(consumed * COMPUTE_UNIT_MARGIN));
  const computeUnitPrice = options.unitPrice?.(computeUnitLimit);
  return {
    transaction: Buffer.from(compile(computeUnitLimit, computeUnitPrice).serialize()).toString("base64"),
    lastValidBlockHeight: build.blockhashWithMetadata.lastValidBlockHeight,
    computeUnitLimit,
    ...(computeUnitPrice !== undefined ? { computeUnitPrice } : {}),
  };
}

const COMPUTE_BUDGET = ComputeBudgetProgram.programId.toBase58();
// Compute Budget instruction tags (the first data byte).
const SET_COMPUTE_UNIT_LIMIT = 2;
const SET_COMPUTE_UNIT_PRICE = 3;
function isBudgetInstruction(ix: ApiInstruction, tag: number): boolean {
  return ix.programId === COMPUTE_BUDGET && Buffer.from(ix.data, "base64")[0] === tag;
}

/** Simulation on an RPC node, without signatures; a refused transaction is a PermanentError. */
export function simulateUnitsOn(connection: Connection): SimulateUnits {
  return async (transaction) => {
    const result = await rpcCall("simulateTransaction", () =>
      connection.simulateTransaction(transaction, { sigVerify: false }),
    );
    if (result.value.err)
      throw new PermanentError(
        `swap simulation failed: ${JSON.stringify(result.value.err)} ${(result.value.logs ?? []).slice(-3).join(" | ")}`,
      );
    // A limit of 0 units would fail on chain: no figure from the node is an error, not a guess.
    if (result.value.unitsConsumed === undefined)
      throw new PermanentError("swap simulation returned no unitsConsumed: cannot set a compute-unit limit");
    return result.value.unitsConsumed;
  };
}
