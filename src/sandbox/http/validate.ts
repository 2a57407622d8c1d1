import { z } from "zod";
import { HttpProblem } from "./errors.js";

type Issue = z.core.$ZodIssue;

/** Where the input came from; names the whole input when an issue has no path (a missing body). */
export type InputPart = "query" | "body";

/**
 * Parses input with an endpoint's schema; a violated rule becomes a 400 naming the parameter and the
 * rule ("limit: must be 1 to 20"). Only the first issue is reported: one clear fix at a time.
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, part: InputPart): z.output<S> {
  const result = schema.safeParse(input, { reportInput: true });
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  if (issue === undefined) throw new HttpProblem(400, "invalid_request", `${part}: is invalid`, part);
  const { param, rule } = describeIssue(issue, part);
  return throwProblem(param, rule);
}

/**
 * Query parameters the endpoint does not know, left out before the rules apply: the live service
 * ignores them rather than refusing the request (a client written for it may send its own). Bodies
 * stay strict.
 */
export function withoutUnknownParams(
  schema: z.ZodType,
  query: Record<string, unknown>,
): Record<string, unknown> {
  if (!(schema instanceof z.ZodObject)) return query;
  const known = schema.shape as Record<string, unknown>;
  return Object.fromEntries(Object.entries(query).filter(([name]) => Object.hasOwn(known, name)));
}

function throwProblem(param: string, rule: string): never {
  throw new HttpProblem(400, "invalid_parameter", `${param}: ${rule}`, param);
}

function joinPath(path: readonly PropertyKey[], part: InputPart): string {
  if (path.length === 0) return part;
  return path.map(String).join(".");
}

/** The parameter an issue blames and the rule in words a caller can act on. */
export function describeIssue(issue: Issue, part: InputPart): { param: string; rule: string } {
  switch (issue.code) {
    case "unrecognized_keys": {
      const key = issue.keys[0] ?? "";
      const kind = part === "body" ? "field" : "parameter";
      return { param: joinPath([...issue.path, key], part), rule: `is not a known ${kind}` };
    }
    case "invalid_type":
      return {
        param: joinPath(issue.path, part),
        rule: issue.input === undefined ? "is required" : `must be ${article(issue.expected)}`,
      };
    case "invalid_value":
      return {
        param: joinPath(issue.path, part),
        rule: `must be one of ${issue.values.map(String).join(", ")}`,
      };
    case "invalid_union":
      return describeUnion(issue, part);
    default:
      return { param: joinPath(issue.path, part), rule: issue.message };
  }
}

/**
 * Query integers and booleans are unions (a number from the client, a string on the wire). A failed union
 * is reported by the branch that got past the type check, since its rule is the one the caller broke.
 */
function describeUnion(
  issue: z.core.$ZodIssueInvalidUnion,
  part: InputPart,
): { param: string; rule: string } {
  const param = joinPath(issue.path, part);
  if (issue.input === undefined) return { param, rule: "is required" };
  for (const branch of issue.errors) {
    const specific = branch.find((inner) => inner.code !== "invalid_type");
    if (specific !== undefined) {
      const inner = describeIssue(specific, part);
      return { param: specific.path.length === 0 ? param : `${param}.${inner.param}`, rule: inner.rule };
    }
  }
  const expected = issue.errors.flatMap((branch) =>
    branch.flatMap((inner) => (inner.code === "invalid_type" ? [inner.expected] : [])),
  );
  return { param, rule: `must be ${[...new Set(expected)].map(article).join(" or ")}` };
}

function article(type: string): string {
  // zod reports a non-integer number as an invalid_type expecting "int".
  const name = type === "int" ? "integer" : type;
  return /^[aeiou]/.test(name) ? `an ${name}` : `a ${name}`;
}
