import type { z } from "zod";
import type { BodyFault } from "./faults.js";

/**
 * Corrupts a serialized 200 body the way a broken upstream or proxy would, so clients can prove they
 * surface it as an error instead of acting on half a response.
 */
export function corruptBody(fault: BodyFault, body: unknown, json: string, response: z.ZodType): string {
  switch (fault) {
    // A brace in front of anything is never valid JSON, whatever the body was.
    case "malformed":
      return `{${json}`;
    // Half the bytes, sent with a matching length: the connection is fine, the document is cut.
    case "truncated":
      return json.slice(0, Math.floor(json.length / 2));
    case "schema":
      return JSON.stringify(breakSchema(body, response));
  }
}

/**
 * Returns a copy of the body with the first field whose type change the response schema notices. Every
 * leaf is tried in document order; the schema has the last word, so the result always fails it.
 */
export function breakSchema(body: unknown, response: z.ZodType): unknown {
  for (const path of leafPaths(body)) {
    const broken = withLeaf(body, path, wrongType(leafAt(body, path)));
    if (!response.safeParse(broken).success) return broken;
  }
  return Array.isArray(body) ? { unexpected: "object" } : ["unexpected", "array"];
}

type Path = readonly (string | number)[];

function* leafPaths(value: unknown, path: Path = []): Generator<Path> {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) yield* leafPaths(value[i], [...path, i]);
  } else if (value !== null && typeof value === "object") {
    for (const [key, child] of Object.entries(value)) yield* leafPaths(child, [...path, key]);
  } else {
    yield path;
  }
}

function leafAt(value: unknown, path: Path): unknown {
  let node = value;
  for (const step of path) node = (node as Record<string | number, unknown>)[step];
  return node;
}

function withLeaf(value: unknown, path: Path, leaf: unknown): unknown {
  const [step, ...rest] = path;
  if (step === undefined) return leaf;
  const copy = (Array.isArray(value) ? [...value] : { ...(value as object) }) as Record<
    string | number,
    unknown
  >;
  copy[step] = withLeaf(copy[step], rest, leaf);
  return copy;
}

function wrongType(leaf: unknown): unknown {
  if (typeof leaf === "string") return 12345;
  if (typeof leaf === "number") return String(leaf);
  if (typeof leaf === "boolean") return leaf ? "true" : "false";
  return { unexpected: true };
}
