/**
 * What an error becomes in a log line. Only a fixed set of scalar fields is kept: pino's default
 * serializer copies every enumerable property, and client errors often carry the request (headers
 * with the API key) or a signer's state. Nested causes are followed a few levels, by the same rule.
 */
export interface SerializedError {
  type: string;
  message: string;
  name?: string;
  stack?: string;
  code?: string | number;
  status?: number;
  reason?: string;
  problems?: string[];
  cause?: SerializedError;
}

const MAX_CAUSE_DEPTH = 3;

export function errorSerializer(value: unknown): SerializedError {
  return serialize(value, 0);
}

function serialize(value: unknown, depth: number): SerializedError {
  if (!(value instanceof Error)) {
    // A thrown non-error: keep its kind; only strings are shown, an object could hold anything.
    return { type: typeof value, message: typeof value === "string" ? value : `non-error ${typeof value}` };
  }
  const fields = value as Error & Record<string, unknown>;
  const out: SerializedError = {
    type: value.constructor?.name ?? "Error",
    name: value.name,
    message: value.message,
  };
  if (typeof value.stack === "string") out.stack = value.stack;
  if (typeof fields.code === "string" || typeof fields.code === "number") out.code = fields.code;
  if (typeof fields.status === "number") out.status = fields.status;
  if (typeof fields.reason === "string") out.reason = fields.reason;
  if (Array.isArray(fields.problems) && fields.problems.every((p) => typeof p === "string"))
    out.problems = fields.problems as string[];
  if (value.cause !== undefined && depth < MAX_CAUSE_DEPTH) out.cause = serialize(value.cause, depth + 1);
  return out;
}
