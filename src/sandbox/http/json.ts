/**
 * Serializes a response body. Handlers may hold exact integers as bigint; they go out as decimal strings
 * (the API's convention for amounts). The replacer costs time, so it runs only when a bigint is present.
 */
export function toJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? "null";
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    return JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? v.toString() : v)) ?? "null";
  }
}
