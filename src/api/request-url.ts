/**
 * Turns an endpoint path (`/prediction/v1/events/:eventId`) and its validated parameters into a URL:
 * `:name` segments take their parameter, the rest go to the query string. Values are written exactly:
 * bigints as their decimal digits, numbers without exponent notation, booleans as `true`/`false`;
 * `undefined` and `null` mean "not given" and are left out.
 */
export function buildUrl(baseUrl: string, path: string, params: Record<string, unknown> | undefined): URL {
  const remaining = new Map(Object.entries(params ?? {}));
  const filledPath = path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, (_, name: string) => {
    const value = remaining.get(name);
    remaining.delete(name);
    if (value === undefined || value === null) throw new Error(`path parameter ${name} missing`);
    return encodeURIComponent(encodeValue(value));
  });
  const url = new URL(baseUrl.replace(/\/+$/, "") + filledPath);
  for (const [name, value] of remaining) {
    if (value === undefined || value === null) continue;
    url.searchParams.set(name, encodeValue(value));
  }
  return url;
}

export function encodeValue(value: unknown): string {
  switch (typeof value) {
    case "string":
      return value;
    case "bigint":
      return value.toString(10);
    case "boolean":
      return value ? "true" : "false";
    case "number":
      if (!Number.isFinite(value)) throw new Error(`cannot encode ${value} as a parameter`);
      // String(1e21) is "1e+21"; integers beyond that are spelled out through BigInt.
      return Number.isInteger(value) && Math.abs(value) >= 1e21 ? BigInt(value).toString(10) : String(value);
    default:
      throw new Error(`cannot encode a ${typeof value} as a parameter`);
  }
}

/** JSON body text; bigints travel as decimal strings, which is how the service spells big integers. */
export function encodeJsonBody(body: unknown): string {
  return JSON.stringify(body, (_key, value: unknown) =>
    typeof value === "bigint" ? value.toString(10) : value,
  );
}
