import type { z } from "zod";

/** `["strategies", 1, "takeProfitPct"]` -> `strategies[1].takeProfitPct`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out === "" ? String(part) : `.${String(part)}`;
  }
  return out === "" ? "(root)" : out;
}

/** One line per problem, `path: rule`, with unknown keys named one by one. */
export function formatIssues(error: z.ZodError, prefix: readonly PropertyKey[] = []): string[] {
  const lines: string[] = [];
  for (const issue of error.issues) {
    const path = [...prefix, ...issue.path];
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) lines.push(`${formatPath([...path, key])}: unknown key`);
    } else {
      lines.push(`${formatPath(path)}: ${issue.message}`);
    }
  }
  return lines;
}
