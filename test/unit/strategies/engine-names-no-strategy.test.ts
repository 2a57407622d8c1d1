import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { builtInStrategies } from "../../../strategies/index.js";

/**
 * The engine never names a strategy: what it does for one (what it reads, which tokens it resolves,
 * which mints the signer allows, which prices the watcher watches, what the page shows) goes through
 * the hooks of the strategy contract, so a user strategy gets the same as a built-in. Checked on the
 * source: no file of src/ holds a built-in's name as a string literal, and none imports a strategy
 * module but the registry (strategies/index.ts), which config loading needs to find the built-ins.
 *
 * Two files write configs, as a user would, and so name strategies as config data:
 */
const WRITES_CONFIG: Readonly<Record<string, string>> = {
  "src/cli/demo-scenario.ts": "the demo's config: every built-in, configured by name",
  "src/sandbox/key-files.ts": "the config `keeper sandbox --keys-dir` writes for its wallets",
};

const ROOT = resolve(import.meta.dirname, "../../..");
const REGISTRY = "strategies/index.ts";

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [relative(ROOT, path)] : [];
  });
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const NAMES = [...builtInStrategies.keys()];
/** "dca", 'dca' or `dca`: the whole literal is the name. */
const NAME_LITERAL = new RegExp(`(["'\`])(${NAMES.map(escapeRegExp).join("|")})\\1`, "g");
/** An import (or re-export) whose path goes into strategies/. */
const STRATEGY_IMPORT = /from\s+["']((?:\.\.\/)+strategies\/[^"']+)["']/g;

/** `file:line: what` for each place a file names a strategy. */
function namingsIn(file: string, text: string): string[] {
  const found: string[] = [];
  text.split("\n").forEach((line, i) => {
    for (const match of line.matchAll(NAME_LITERAL)) found.push(`${file}:${i + 1}: names ${match[0]}`);
    for (const match of line.matchAll(STRATEGY_IMPORT)) {
      const target = relative(ROOT, resolve(ROOT, file, "..", match[1] ?? "")).replace(/\.js$/, ".ts");
      if (target !== REGISTRY) found.push(`${file}:${i + 1}: imports ${match[1]}`);
    }
  });
  return found;
}

describe("no engine file names a built-in strategy", () => {
  it("finds the built-ins and the source to check", () => {
    expect(NAMES.length).toBeGreaterThanOrEqual(5);
    expect(sourceFiles(join(ROOT, "src")).length).toBeGreaterThan(100);
  });

  it.each<[string, string, string[]]>([
    ["a name in double quotes", 'if (entry.name === "dca") return;', ['x.ts:1: names "dca"']],
    ["a name as an object key", '  "limit-orders": { list: "orders" },', ['x.ts:1: names "limit-orders"']],
    ["a name in a template", "states.load(wallet, `exit-rules`);", ["x.ts:1: names `exit-rules`"]],
    [
      "an import of a strategy module",
      'import { dcaRounds } from "../../strategies/dca.js";',
      ["x.ts:1: imports ../../strategies/dca.js"],
    ],
    ["a key that only starts like a name", "const key = `dca-$" + "{wallet}`; // the sweep runs", []],
    ["the registry", 'import { builtInStrategies } from "../../strategies/index.js";', []],
  ])("the check sees %s", (_label, line, expected) => {
    expect(namingsIn("src/config/x.ts", line).map((f) => f.replace("src/config/", ""))).toEqual(expected);
  });

  it("holds for every file of src/ but the ones that write configs", () => {
    const found = sourceFiles(join(ROOT, "src"))
      .filter((file) => WRITES_CONFIG[file] === undefined)
      .flatMap((file) => namingsIn(file, readFileSync(join(ROOT, file), "utf8")));
    expect(found).toEqual([]);
  });
});
