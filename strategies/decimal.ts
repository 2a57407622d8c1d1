/**
 * Exact decimal arithmetic for strategies: token amounts and prices arrive as decimal strings and
 * leave as integer strings of raw units, so floats never touch them.
 */

/** An exact non-negative decimal: `units / 10^scale`. */
export interface Decimal {
  readonly units: bigint;
  readonly scale: number;
}

const PLAIN_DECIMAL = /^(\d+)(?:\.(\d+))?$/;
const EXPONENT_DECIMAL = /^(\d+)(?:\.(\d+))?e([+-]?\d+)$/i;

/** Parses "12", "0.125" or "150.000": plain notation only, no sign, no exponent. */
export function parseDecimal(text: string): Decimal | undefined {
  const match = PLAIN_DECIMAL.exec(text);
  if (!match) return undefined;
  const [, whole = "0", fraction = ""] = match;
  return { units: BigInt(whole + fraction), scale: fraction.length };
}

/**
 * A JS number as the exact decimal it prints as (`0.5` -> 5/10, `1.2e-7` -> 12/10^8). Token prices
 * come from the API as numbers; this keeps their printed digits and nothing more.
 */
export function decimalFromNumber(value: number): Decimal | undefined {
  if (!Number.isFinite(value) || value < 0) return undefined;
  const text = String(value);
  const plain = parseDecimal(text);
  if (plain) return plain;
  const match = EXPONENT_DECIMAL.exec(text);
  if (!match) return undefined;
  const [, whole = "0", fraction = "", exponentText = "0"] = match;
  const units = BigInt(whole + fraction);
  const scale = fraction.length - Number(exponentText);
  return scale >= 0 ? { units, scale } : { units: units * pow10(-scale), scale: 0 };
}

export function pow10(exponent: number): bigint {
  return 10n ** BigInt(exponent);
}

/**
 * The decimal as raw units of a token with `decimals` decimals, only when that is exact:
 * "1.5" with 6 decimals is 1500000n; "0.0000001" with 6 decimals is undefined (it would round).
 */
export function toRawUnits(text: string, decimals: number): bigint | undefined {
  const value = parseDecimal(text);
  if (!value) return undefined;
  if (value.scale <= decimals) return value.units * pow10(decimals - value.scale);
  const divisor = pow10(value.scale - decimals);
  return value.units % divisor === 0n ? value.units / divisor : undefined;
}

export function ceilDiv(numerator: bigint, denominator: bigint): bigint {
  return (numerator + denominator - 1n) / denominator;
}
