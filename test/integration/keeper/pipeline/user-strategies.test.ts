import { existsSync } from "node:fs";
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { startKeeper } from "../../../../src/app/start-keeper.js";
import { loadConfig } from "../../../../src/config/load-config.js";
import { ConfigError } from "../../../../src/core/errors.js";
import { runStrategies } from "../../../../src/keeper/pipeline/run-strategies.js";
import { position, snapshot } from "../../../helpers/fixtures.js";

const EXAMPLE = resolve("strategies/examples/close-at-multiple.ts");

/** A user strategy that throws on every poll: plain JS, no imports, as a user might write one. */
const THROWING = `export default {
  name: "always-throws",
  contractVersion: 1,
  description: "test: throws",
  configSchema: { safeParse: (value) => ({ success: true, data: value }) },
  evaluate() { throw new Error("boom from a user strategy"); },
};
`;

async function configFile(strategiesYaml: string, files: Record<string, string> = {}) {
  const dir = await mkdtemp(join(tmpdir(), "keeper-user-strategy-"));
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  const file = join(dir, "keeper.yaml");
  await writeFile(file, `strategies:\n${strategiesYaml}`);
  return file;
}

async function problemsOf(file: string): Promise<readonly string[]> {
  try {
    await loadConfig({ file, env: {} });
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe("user strategies loaded through config `module:`", () => {
  it("loads the example, validates its config with its own schema, and runs it", async () => {
    const file = await configFile(`  - name: close-at-multiple\n    module: ${EXAMPLE}\n    multiple: 1.1\n`);
    const config = await loadConfig({ file, env: {} });
    expect(config.strategies.map((s) => [s.name, s.config])).toEqual([
      [
        "close-at-multiple",
        { multiple: 1.1, minCostUsd: 0, priceBasis: "realizable", estimatedSellFeeBps: 150 },
      ],
    ]);
    const p = position();
    const report = runStrategies({
      snapshot: snapshot({ positions: [p] }),
      strategies: config.strategies,
      states: new Map(),
      now: new Date(),
      logger: pino({ level: "silent" }),
    });
    expect(report.intents.map((i) => i.key)).toEqual([`close-${p.pubkey}`]);
  });

  it.each<[string, string, string]>([
    [
      "a bad value",
      "    multiple: 0.5\n",
      "strategies[0].multiple: expected a multiple above 1 and at most 100, such as 2",
    ],
    ["an unknown key", "    multipel: 3\n", "strategies[0].multipel: unknown key"],
  ])("refuses %s with the path and the rule", async (_label, extra, problem) => {
    const file = await configFile(`  - name: close-at-multiple\n    module: ${EXAMPLE}\n${extra}`);
    expect(await problemsOf(file)).toEqual([problem]);
  });

  it.each<[string, string, Record<string, string>, RegExp]>([
    [
      "a name that is not the module's",
      `  - name: take-profit\n    module: ${EXAMPLE}\n`,
      {},
      /^strategies\[0\]\.name: the module's strategy is named "close-at-multiple"$/,
    ],
    [
      "a file that is not there",
      "  - name: x\n    module: ./missing.ts\n",
      {},
      /^strategies\[0\]\.module: cannot load /,
    ],
    [
      "a file of another kind",
      "  - name: x\n    module: ./x.py\n",
      {},
      /expected a \.ts, \.js or \.mjs file/,
    ],
    [
      "a module without a strategy",
      "  - name: x\n    module: ./empty.mjs\n",
      { "empty.mjs": "export const nothing = 1;\n" },
      /^strategies\[0\]\.module: .* must export \(default or `strategy`\) a strategy/,
    ],
  ])("refuses %s", async (_label, yaml, files, problem) => {
    const problems = await problemsOf(await configFile(yaml, files));
    expect(problems.length).toBeGreaterThan(0);
    expect(problems[0]).toMatch(problem);
  });

  it("isolates a user strategy that throws: the others run, the error is counted", async () => {
    const file = await configFile(
      `  - name: always-throws\n    module: ./throws.mjs\n  - name: close-at-multiple\n    module: ${EXAMPLE}\n    multiple: 1.1\n`,
      { "throws.mjs": THROWING },
    );
    const config = await loadConfig({ file, env: {} });
    const failed: string[] = [];
    const p = position();
    const report = runStrategies({
      snapshot: snapshot({ positions: [p] }),
      strategies: config.strategies,
      states: new Map([["always-throws", { kept: true }]]),
      now: new Date(),
      logger: pino({ level: "silent" }),
      onStrategyError: (name) => failed.push(name),
    });
    expect(failed).toEqual(["always-throws"]);
    expect(report.errors).toEqual([{ strategy: "always-throws", error: "boom from a user strategy" }]);
    expect(report.intents.map((i) => i.strategy)).toEqual(["close-at-multiple"]);
    // The failing strategy's state is not replaced.
    expect(report.states.has("always-throws")).toBe(false);
  });

  describe("checked without importing (the signer's config)", () => {
    it("never runs the module: built-ins stay, the module's entry is left out and marked", async () => {
      const dir = await mkdtemp(join(tmpdir(), "keeper-user-strategy-"));
      const ran = join(dir, "ran");
      const file = await configFile("  - name: auto-claim\n  - name: marker\n    module: ./marker.mjs\n", {
        "marker.mjs": `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(ran)}, "ran");\n`,
      });
      const config = await loadConfig({ file, env: {}, strategyModules: "check" });
      expect(config.strategyModules).toBe("check");
      expect(config.strategies.map((s) => s.name)).toEqual(["auto-claim"]);
      expect(existsSync(ran)).toBe(false);
    });

    it("cannot start the worker role, which would run strategies without them", async () => {
      const file = await configFile("  - name: marker\n    module: ./marker.mjs\n", { "marker.mjs": "" });
      const config = await loadConfig({ file, env: {}, strategyModules: "check" });
      await expect(
        startKeeper({ config, roles: new Set(["worker"]), logger: pino({ level: "silent" }) }),
      ).rejects.toThrow(
        /the worker role runs strategies: load the config with its strategy modules imported/,
      );
    });

    it.each<[string, string, RegExp]>([
      [
        "a file that is not there",
        "./missing.mjs",
        /^strategies\[0\]\.module: cannot read .*missing\.mjs \(ENOENT\)$/,
      ],
      ["a folder", "./folder.mjs", /^strategies\[0\]\.module: .*folder\.mjs is not a file$/],
      ["a file of another kind", "./x.py", /^strategies\[0\]\.module: expected a \.ts, \.js or \.mjs file$/],
    ])("refuses %s", async (_label, module, problem) => {
      const file = await configFile(`  - name: x\n    module: ${module}\n`);
      await mkdir(join(dirname(file), "folder.mjs"));
      let problems: readonly string[] = [];
      try {
        await loadConfig({ file, env: {}, strategyModules: "check" });
      } catch (error) {
        if (error instanceof ConfigError) problems = error.problems;
        else throw error;
      }
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(problem);
    });
  });
});
