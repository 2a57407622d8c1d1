/**
 * A readable form of a transaction error as the RPC reports it (`"BlockhashNotFound"`,
 * `{ InstructionError: [0, { Custom: 1 }] }`, ...). The raw JSON is kept alongside for the ledger.
 */
export function describeTransactionError(err: unknown): string {
  // Stryker disable next-line ConditionalExpression,StringLiteral: without it a string falls through to String(err), the same text
  if (typeof err === "string") return err;
  if (err && typeof err === "object") {
    const instruction = (err as { InstructionError?: unknown }).InstructionError;
    if (Array.isArray(instruction) && instruction.length === 2) {
      const [index, inner] = instruction as [unknown, unknown];
      const custom = (inner as { Custom?: unknown } | null)?.Custom;
      const what =
        typeof custom === "number"
          ? `custom program error 0x${custom.toString(16)}`
          : typeof inner === "string"
            ? inner
            : JSON.stringify(inner);
      return `instruction ${String(index)}: ${what}`;
    }
    return JSON.stringify(err);
  }
  return String(err);
}
