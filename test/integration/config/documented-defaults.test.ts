import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { configSchema } from "../../../src/config/schema.js";

/**
 * The Default column of docs/configuration.md is the promise: the schema's own default and the shipped
 * config/default.yaml (which loadConfig reads first) must both say the same, so none can drift alone.
 * Each documented default goes through the schema at its key, so `[{name: auto-claim}]` and the
 * parsed `[{name: "auto-claim", enabled: true}]` compare equal.
 */

const ROOT = process.cwd();
/** Rows whose default is told in words, not as a value. */
const PROSE_DEFAULTS = ["signer.payoutMints", "signer.limits.allowedMints"];

interface DocumentedDefault {
  readonly key: string;
  /** The value as documented; undefined for `none` and `off`. */
  readonly value: unknown;
}

/** Every row of the `| Key | Default | Meaning |` tables; `a.b` / `c` rows give `a.b` and `a.c`. */
function documentedDefaults(): { values: DocumentedDefault[]; prose: string[] } {
  const values: DocumentedDefault[] = [];
  const prose: string[] = [];
  let inTable = false;
  for (const line of readFileSync(join(ROOT, "docs/configuration.md"), "utf8").split("\n")) {
    const cells = line.startsWith("|")
      ? line
          .split("|")
          .slice(1, -1)
          .map((cell) => cell.trim())
      : [];
    if (cells[0] === "Key" && cells[1] === "Default") inTable = true;
    if (cells.length === 0) inTable = false;
    if (!inTable || !cells[0]?.startsWith("`")) continue;
    const keys = namesOf(cells[0]);
    const defaults = keys.length > 1 ? (cells[1] ?? "").split(" / ") : [cells[1] ?? ""];
    for (const [i, key] of keys.entries()) {
      const cell = defaults[i] ?? "";
      if (/^(none|off)$/.test(cell)) values.push({ key, value: undefined });
      else if (/^`[^`]*`(, `[^`]*`)*$/.test(cell)) values.push({ key, value: documentedValue(cell) });
      else prose.push(key);
    }
  }
  return { values, prose };
}

/** `queues.removeOnComplete` / `removeOnFail` names two keys of one section; `wallets[]` is `wallets`. */
function namesOf(cell: string): string[] {
  const names = [...cell.matchAll(/`([^`]+)`/g)].map((m) => (m[1] ?? "").replace("[]", ""));
  const section = names[0]?.includes(".") ? names[0].slice(0, names[0].lastIndexOf(".") + 1) : "";
  return names.map((name, i) => (i === 0 || name.includes(".") ? name : section + name));
}

/** Several backticked values are a list; one is YAML (`[close]`, `1.5`), or a string YAML cannot read (a cron). */
function documentedValue(cell: string): unknown {
  const items = [...cell.matchAll(/`([^`]*)`/g)].map((m) => scalarOf(m[1] ?? ""));
  return items.length > 1 ? items : items[0];
}

function scalarOf(text: string): unknown {
  try {
    return parseYaml(text);
  } catch {
    return text;
  }
}

function at(config: unknown, key: string): unknown {
  return key.split(".").reduce<unknown>((value, part) => (value as Record<string, unknown>)?.[part], config);
}

/** The config with only `key` set to `value`, parsed: the documented default as the schema reads it. */
function parsedAt(key: string, value: unknown): unknown {
  const raw = key.split(".").reduceRight<unknown>((inner, part) => ({ [part]: inner }), value) as Record<
    string,
    unknown
  >;
  return at(configSchema.parse(raw), key);
}

describe("docs/configuration.md's defaults", () => {
  const { values, prose } = documentedDefaults();
  const schemaDefaults = configSchema.parse({});
  const shipped = configSchema.parse(parseYaml(readFileSync(join(ROOT, "config/default.yaml"), "utf8")));

  it("finds every table row, and only the known ones in words", () => {
    expect(values.map((d) => d.key)).toEqual(
      expect.arrayContaining(["mode", "notifications.events", "queues.removeOnFail", "ops.port"]),
    );
    expect(prose).toEqual(PROSE_DEFAULTS);
  });

  it.each(values.map((d) => [d.key, d] as const))(
    "%s: the schema and config/default.yaml agree",
    (key, d) => {
      const documented = d.value === undefined ? undefined : parsedAt(key, d.value);
      expect(at(schemaDefaults, key), "the schema's default").toEqual(documented);
      expect(at(shipped, key), "config/default.yaml").toEqual(documented);
    },
  );
});
