/**
 * Money as integers. The service sends USD amounts as strings of micro-USD ("1500000" is $1.50);
 * floats never touch them.
 */
const INTEGER = /^-?\d+$/;

export const MICRO_PER_USD = 1_000_000n;

/** Parses a micro-USD string; throws on anything that is not an integer. */
export function parseMicroUsd(value: string, field = "amount"): bigint {
  if (!INTEGER.test(value))
    throw new RangeError(`${field}: expected an integer string of micro-USD, got "${value}"`);
  return BigInt(value);
}

/** Formats micro-USD as dollars with 2 to 6 decimals, e.g. 1500000n -> "1.50". */
export function formatUsd(microUsd: bigint): string {
  const negative = microUsd < 0n;
  const abs = negative ? -microUsd : microUsd;
  const whole = abs / MICRO_PER_USD;
  let fraction = (abs % MICRO_PER_USD).toString().padStart(6, "0").replace(/0+$/, "");
  if (fraction.length < 2) fraction = fraction.padEnd(2, "0");
  return `${negative ? "-" : ""}${whole}.${fraction}`;
}

/** Formats micro-USD as dollars and cents, rounded half away from zero: 18601282n -> "18.60". */
export function formatUsdCents(microUsd: bigint): string {
  const negative = microUsd < 0n;
  const cents = ((negative ? -microUsd : microUsd) + 5_000n) / 10_000n;
  const text = `${cents / 100n}.${(cents % 100n).toString().padStart(2, "0")}`;
  return negative && cents > 0n ? `-${text}` : text;
}

/** Converts dollars given as a decimal string ("12.5") to micro-USD without floats. */
export function usdToMicro(dollars: string): bigint {
  const match = /^(-?)(\d+)(?:\.(\d{1,6}))?$/.exec(dollars.trim());
  if (!match) throw new RangeError(`expected a dollar amount with at most 6 decimals, got "${dollars}"`);
  const [, sign, whole, fraction = ""] = match;
  const micro = BigInt(whole ?? "0") * MICRO_PER_USD + BigInt(fraction.padEnd(6, "0"));
  return sign === "-" ? -micro : micro;
}
