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
import type { ApiInstruction } from "../api/schemas/common.js";
import type { SwapBuildResponse } from "../api/schemas/swap.js";
import { rpcCall } from "../chain/rpc.js";
import { PermanentError } from "../core/errors.js";

/** The most compute units a transaction may ask for. */
export const MAX_COMPUTE_UNITS = 1_400_000;
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
 * `addressesByLookupTableAddress`; the blockhash is `blockhashWithMetadata`'s 32 bytes.
 */
export async function assembleSwap(
  build: SwapBuildResponse,
  options: { taker: string; payer?: string; simulateUnits: SimulateUnits },
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
  // The build's own compute-unit limit (if any) would conflict with ours: ours decides.
  const budget = build.computeBudgetInstructions.filter((ix) => !isSetComputeUnitLimit(ix));
  const body = [
    ...budget,
    ...build.setupInstructions,
    build.swapInstruction,
    ...(build.cleanupInstruction ? [build.cleanupInstruction] : []),
    ...build.otherInstructions,
  ].map(toInstruction);
  const recentBlockhash = bs58.encode(Uint8Array.from(build.blockhashWithMetadata.blockhash));
  const compile = (units: number) =>
    new VersionedTransaction(
      new TransactionMessage({
        payerKey,
        recentBlockhash,
        instructions: [ComputeBudgetProgram.setComputeUnitLimit({ units }), ...body],
      }).compileToV0Message(tables),
    );
  const consumed = await options.simulateUnits(compile(MAX_COMPUTE_UNITS));
  const computeUnitLimit = Math.min(MAX_COMPUTE_UNITS, Math.ceil(consumed * COMPUTE_UNIT_MARGIN));
  return {
    transaction: Buffer.from(compile(computeUnitLimit).serialize()).toString("base64"),
    lastValidBlockHeight: build.blockhashWithMetadata.lastValidBlockHeight,
    computeUnitLimit,
  };
}

const COMPUTE_BUDGET = ComputeBudgetProgram.programId.toBase58();
function isSetComputeUnitLimit(ix: ApiInstruction): boolean {
  // SetComputeUnitLimit is instruction 2 of the Compute Budget program.
  return ix.programId === COMPUTE_BUDGET && Buffer.from(ix.data, "base64")[0] === 2;
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
