import { formatContracts, MICRO_PER_CONTRACT } from "../../core/contracts.js";

/**
 * Contract counts in the world. A record's count is a number of contracts that may hold a fraction
 * (fills are floored to 0.01 contract, as on the live service); amounts are computed from whole
 * hundredths so no float error reaches a micro-USD figure.
 */

const MICRO_PER_HUNDREDTH = 10_000;

/** The count in hundredths of a contract (2.5 → 250). */
export function hundredthsOf(contracts: number): number {
  return Math.round(contracts * 100);
}

/** A count floored to 0.01 contract, as a fill is. */
export function floorToHundredth(contracts: number): number {
  return Math.floor(contracts * 100 + 1e-9) / 100;
}

/** What `contracts` are worth at `priceMicro` a contract, in micro-USD, floored. */
export function contractsTimes(contracts: number, priceMicro: number): number {
  return Math.floor((hundredthsOf(contracts) * priceMicro) / 100);
}

/** A count in micro-contracts (1,000,000 is one contract). */
export function microContractsOf(contracts: number): bigint {
  return BigInt(hundredthsOf(contracts) * MICRO_PER_HUNDREDTH);
}

/** The legacy whole count, floored ("2" for 2.5 contracts). */
export function wholeContracts(contracts: number): string {
  return (microContractsOf(contracts) / MICRO_PER_CONTRACT).toString();
}

/** A count as the service sends it: the floored legacy field with the two exact ones beside it. */
export function contractFields(contracts: number): {
  contracts: string;
  contractsMicro: string;
  contractsDecimal: string;
} {
  const micro = microContractsOf(contracts);
  return {
    contracts: wholeContracts(contracts),
    contractsMicro: micro.toString(),
    contractsDecimal: formatContracts(micro),
  };
}
