import type { z } from "zod";
import { ValidationError, type ValidationIssue } from "./errors.js";

/** `["data", 3, "pnlUsd"]` → `data[3].pnlUsd`: the path as a reader would write it. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else out += out === "" ? String(key) : `.${String(key)}`;
  }
  return out;
}

function toIssues(error: z.ZodError, root: string): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  for (const issue of error.issues) {
    const at = formatPath(issue.path);
    if (issue.code === "unrecognized_keys") {
      // A strict object reports extra keys on the object itself; name each key instead.
      for (const key of issue.keys)
        issues.push({ field: at === "" ? key : `${at}.${key}`, rule: "is not a known parameter" });
      continue;
    }
    issues.push({ field: at === "" ? root : at, rule: issue.message });
  }
  return issues;
}

/**
 * Per-parse messages for the issues the schemas leave to zod's defaults: a missing value reads
 * "is required" rather than "expected string, received undefined".
 */
const requiredMessage: z.core.$ZodErrorMap = (issue) =>
  issue.input === undefined && (issue.code === "invalid_type" || issue.code === "invalid_union")
    ? "is required"
    : undefined;

/** Parses `value` with `schema`, or throws a ValidationError naming the endpoint, each field and rule. */
export function parseOrThrow<S extends z.ZodType>(
  schema: S,
  value: unknown,
  endpoint: string,
  phase: "request" | "response",
  root: string,
): z.output<S> {
  const result = schema.safeParse(value, { error: requiredMessage });
  if (result.success) return result.data;
  throw new ValidationError(endpoint, phase, toIssues(result.error, root));
}
