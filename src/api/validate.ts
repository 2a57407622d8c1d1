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

function toIssues(zodIssues: readonly z.core.$ZodIssue[], root: string): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  for (const issue of zodIssues) {
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
  throw new ValidationError(endpoint, phase, toIssues(result.error.issues, root));
}

/** A list item the schema refused: its index in the answer and why. */
export interface SkippedItem {
  readonly index: number;
  readonly issues: readonly ValidationIssue[];
}

/** The items of a list answer at `listKey` (`(root)` for a bare array), if they are an array. */
export function listItemsAt(value: unknown, listKey: string): unknown[] | undefined {
  const items: unknown = listKey === "(root)" ? value : (value as Record<string, unknown> | null)?.[listKey];
  return Array.isArray(items) ? items : undefined;
}

/**
 * Parses a list answer whose items sit at `listKey` (`(root)` for a bare array). Items that break the
 * schema are left out and returned as `skipped`; anything wrong outside the items (pagination, the
 * shape of the answer) still throws, as in `parseOrThrow`.
 */
export function parseSkippingItems<S extends z.ZodType>(
  schema: S,
  value: unknown,
  endpoint: string,
  listKey: string,
): { data: z.output<S>; skipped: SkippedItem[] } {
  const first = schema.safeParse(value, { error: requiredMessage });
  if (first.success) return { data: first.data, skipped: [] };
  const isRoot = listKey === "(root)";
  const items = listItemsAt(value, listKey);
  const refuse = () => new ValidationError(endpoint, "response", toIssues(first.error.issues, "(body)"));
  if (items === undefined) throw refuse();
  const byItem = new Map<number, z.core.$ZodIssue[]>();
  for (const issue of first.error.issues) {
    const index = isRoot ? issue.path[0] : issue.path[0] === listKey ? issue.path[1] : undefined;
    if (typeof index !== "number") throw refuse();
    const issues = byItem.get(index);
    if (issues === undefined) byItem.set(index, [issue]);
    else issues.push(issue);
  }
  const kept = items.filter((_, index) => !byItem.has(index));
  const trimmed = isRoot ? kept : { ...(value as Record<string, unknown>), [listKey]: kept };
  const data = parseOrThrow(schema, trimmed, endpoint, "response", "(body)");
  const skipped = [...byItem].map(([index, issues]) => ({ index, issues: toIssues(issues, "(body)") }));
  return { data, skipped };
}
