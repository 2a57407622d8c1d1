import { readFileSync } from "node:fs";
import { posix } from "node:path";

interface Rule {
  pattern: RegExp;
  exception: boolean;
}

/**
 * A .dockerignore read the way Docker reads it (moby's patternmatcher): one pattern a line, `#`
 * comments, paths relative to the context root, `*` and `?` within one path segment, `**` across any
 * number of them, `!` re-includes, and the last matching line decides. A pattern that matches a
 * directory excludes everything below it.
 */
export function readDockerignore(file: string): (path: string) => boolean {
  const rules: Rule[] = [];
  for (const raw of readFileSync(file, "utf8").split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const exception = line.startsWith("!");
    const cleaned = posix.normalize((exception ? line.slice(1) : line).trim()).replace(/^\/+|\/+$/g, "");
    rules.push({ pattern: toRegExp(cleaned), exception });
  }
  return (path: string) => {
    const clean = posix.normalize(path).replace(/^\.?\/+|\/+$/g, "");
    const segments = clean.split("/");
    // The path itself or any directory above it.
    const candidates = segments.map((_, i) => segments.slice(0, i + 1).join("/"));
    let excluded = false;
    for (const rule of rules)
      if (candidates.some((candidate) => rule.pattern.test(candidate))) excluded = !rule.exception;
    return excluded;
  };
}

function toRegExp(pattern: string): RegExp {
  let out = "";
  for (let i = 0; i < pattern.length; i += 1) {
    const char = pattern[i] as string;
    if (char === "*" && pattern[i + 1] === "*") {
      // `**/` is zero or more whole directories; a trailing `**` is anything.
      if (pattern[i + 2] === "/") {
        out += "(?:.*/)?";
        i += 2;
      } else {
        out += ".*";
        i += 1;
      }
    } else if (char === "*") out += "[^/]*";
    else if (char === "?") out += "[^/]";
    else out += char.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${out}$`);
}
