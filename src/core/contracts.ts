/**
 * Contract counts, exact. The service sends each count twice (api-live): `contracts`, floored to whole
 * contracts, and `contractsMicro`, exact (1,000,000 is one contract). Keeper reasons in micro-contracts
 * and falls back to the floored field only where an answer carries nothing else.
 */

export const MICRO_PER_CONTRACT = 1_000_000n;

/** The parts of any answer that carries a count. */
export interface CountedContracts {
  readonly contracts: string;
  readonly contractsMicro?: string | undefined;
}

/** The exact count in micro-contracts: `contractsMicro` when sent, else the floored `contracts`. */
export function contractsMicroOf(counted: CountedContracts): bigint {
  if (counted.contractsMicro !== undefined) return BigInt(counted.contractsMicro);
  return BigInt(counted.contracts) * MICRO_PER_CONTRACT;
}

/** True when any part of a contract is held (a position of 0.4 contract shows `contracts: "0"`). */
export function holdsContracts(counted: CountedContracts): boolean {
  return contractsMicroOf(counted) > 0n;
}

/**
 * What `micro` contracts are worth at `priceMicroUsd` a contract, in micro-USD, floored: a contract
 * priced $0.65 is 650,000 micro-USD, so 2.5 contracts (2,500,000) are 1,625,000.
 */
export function contractsValueMicroUsd(micro: bigint, priceMicroUsd: bigint): bigint {
  return (micro * priceMicroUsd) / MICRO_PER_CONTRACT;
}

/** A count for people: "2.5", "0.01", "3". */
export function formatContracts(micro: bigint): string {
  const whole = micro / MICRO_PER_CONTRACT;
  const fraction = (micro % MICRO_PER_CONTRACT).toString().padStart(6, "0").replace(/0+$/, "");
  return fraction === "" ? whole.toString() : `${whole}.${fraction}`;
}

/** An answer's count for people, exact when the answer carries `contractsMicro` ("0.4", not "0"). */
export function contractsText(counted: CountedContracts): string {
  return formatContracts(contractsMicroOf(counted));
}
