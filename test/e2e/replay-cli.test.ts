import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import pino from "pino";
import { beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load-config.js";
import { replay } from "../../src/keeper/replay/engine.js";
import { gridPoints, parseGrid, strategyAt } from "../../src/keeper/replay/grid.js";
import { readRecording } from "../../src/keeper/replay/read-recording.js";
import { builtInStrategies } from "../../strategies/index.js";
import { runCli } from "../helpers/keeper-harness.js";

const GRID = ["takeProfitPct=10,20,30", "stopLossPct=5,10"];

/**
 * `keeper sandbox record` then `keeper replay`, as a user runs them: the grid's table over the sandbox
 * world, byte for byte the same on every run, and bad input refused with the argument or the
 * file:line and its rule, exit 2, no stack trace.
 */
describe("keeper replay over a recording of the sandbox world", () => {
  let base: string;
  let recording: string;
  let configFile: string;

  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), "keeper-replay-cli-"));
    recording = join(base, "recording");
    configFile = join(base, "keeper.yaml");
    await writeFile(
      configFile,
      "strategies:\n  - name: exit-rules\n    takeProfitPct: 25\n    stopLossPct: 15\n  - name: auto-claim\n",
    );
    const recorded = await runCli([
      "sandbox",
      "record",
      "--out",
      recording,
      "--minutes",
      "180",
      "--seed",
      "3",
    ]);
    expect(recorded.stderr).toBe("");
    expect(recorded.code).toBe(0);
    expect(recorded.stdout).toMatch(
      /^recorded 724 polls of 4 wallets \(seed 3\), 2026-01-01T00:00:00Z to 2026-01-01T03:00:00Z/,
    );
  }, 90_000);

  it("prints the exit-rules grid: one row per combination, the same bytes on every run", async () => {
    const args = ["replay", "--from", recording, "--grid", ...GRID, "--config", configFile];
    const [first, second] = [await runCli(args), await runCli(args)];
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    expect(second.stdout).toBe(first.stdout);
    const lines = first.stdout.trimEnd().split("\n");
    expect(lines[2]).toMatch(
      /^takeProfitPct\s+stopLossPct\s+exits\s+realized\s+held\s+vs held\s+unresolved$/,
    );
    const rows = lines.slice(4).map((line) => line.split(/\s{2,}/));
    expect(rows.map((r) => `${r[0]} ${r[1]}`)).toEqual(["10 5", "10 10", "20 5", "20 10", "30 5", "30 10"]);
    // Each row is its own replay: the counts are the engine's for that combination.
    const config = await loadConfig({ file: configFile, env: {} });
    const polls = await readRecording(recording);
    const counts = gridPoints(parseGrid(GRID)).map(
      (point) =>
        replay({
          polls,
          strategies: [strategyAt(point, config.strategies, builtInStrategies)],
          logger: pino({ level: "silent" }),
        }).exits.length,
    );
    expect(rows.map((r) => Number(r[2]))).toEqual(counts);
    expect(new Set(counts).size).toBeGreaterThan(1);
  }, 60_000);

  it("prints per rule what fired when, realized and held, the same bytes on every run", async () => {
    const args = ["replay", "--from", recording, "--config", configFile];
    const [first, second] = [await runCli(args), await runCli(args)];
    expect(first.code).toBe(0);
    expect(second.stdout).toBe(first.stdout);
    expect(first.stdout).toMatch(
      /^exit-rules \/ take-profit: \d+ exits?, realized \$[\d.]+, held \$[\d.]+, vs held [+-]\$[\d.]+/m,
    );
    expect(first.stdout).toMatch(
      /^ {2}2026-01-01T\d\d:\d\d:00Z {2}wallet \w+ {2}position \w+ {2}market \S+ (YES|NO)$/m,
    );
    expect(first.stdout).toMatch(/held \$[\d.]+ \((resolved won|resolved lost|unresolved, last bid)\)/);
    expect(first.stdout).toMatch(/^claims: \d+, paid \$[\d.]+$/m);

    // One wallet of the recording: only its polls, only its exits.
    const wallet = (await readRecording(recording))[0]?.line.wallet ?? "";
    const one = await runCli([...args, "--wallet", wallet]);
    expect(one.code).toBe(0);
    expect(one.stdout).toMatch(/^replay of .*: 181 polls of 1 wallet, /);
    const exitWallets = [...one.stdout.matchAll(/ {2}wallet (\w+) {2}position/g)].map((m) => m[1]);
    expect(exitWallets.length).toBeGreaterThan(0);
    expect(new Set(exitWallets)).toEqual(new Set([wallet]));
  }, 60_000);

  it("refuses bad input with the argument or file:line and the rule, exit 2, no stack trace", async () => {
    const corrupt = join(base, "corrupt");
    await mkdir(corrupt);
    const good = `${JSON.stringify({ v: 1, at: 1_767_225_600, wallet: "w", positions: [] })}\n`;
    await writeFile(
      join(corrupt, "2026-01-01.jsonl.gz"),
      Buffer.concat([gzipSync(good), gzipSync("{not json\n")]),
    );
    const badField = join(base, "bad-field");
    await mkdir(badField);
    await writeFile(
      join(badField, "2026-01-01.jsonl.gz"),
      gzipSync(`${good}${JSON.stringify({ v: 1, at: "noon", wallet: "w", positions: [] })}\n`),
    );
    const notGzip = join(base, "not-gzip");
    await mkdir(notGzip);
    await writeFile(join(notGzip, "2026-01-01.jsonl.gz"), "plain text");
    const cases: Array<[string[], RegExp]> = [
      [
        ["replay", "--from", corrupt],
        new RegExp(`${join(corrupt, "2026-01-01.jsonl.gz")}:2: not a JSON line`),
      ],
      [
        ["replay", "--from", badField],
        new RegExp(`${join(badField, "2026-01-01.jsonl.gz")}:2: at: expected Unix seconds`),
      ],
      [["replay", "--from", notGzip], /2026-01-01\.jsonl\.gz: not a gzip recording/],
      [["replay", "--from", join(base, "missing")], /--from: .*missing is not a directory/],
      [
        ["replay", "--from", base],
        /--from: .* holds no recording \(expected files named YYYY-MM-DD\.jsonl\.gz\)/,
      ],
      [["replay"], /required option '--from <dir>' not specified/],
      [["replay", "--from", recording, "--wallet", "nobody"], /--wallet: no poll of nobody in /],
      [
        ["replay", "--from", recording, "--grid", "takeProfitPct"],
        /--grid: takeProfitPct: expected key=value,value/,
      ],
      [
        ["replay", "--from", recording, "--grid", "stopLossPct=5,500"],
        /--grid stopLossPct=500: exit-rules stopLossPct: expected a number between 0 and 100/,
      ],
      [["sandbox", "record", "--out", recording], /--out: .* already holds a recording/],
      [["sandbox", "record", "--out", configFile], /--out: cannot write to .*keeper\.yaml: EEXIST/],
      // Was a hang: Node's recursive mkdir never returns under /proc.
      [
        ["sandbox", "record", "--out", "/proc/self/keeper-recording"],
        /--out: cannot write to \/proc\/self\/keeper-recording: ENOENT/,
      ],
      [
        ["sandbox", "record", "--out", join(base, "x"), "--minutes", "0"],
        /--minutes.*must be an integer from 1/,
      ],
    ];
    for (const [args, message] of cases) {
      const run = await runCli(args);
      expect(run.stderr, args.join(" ")).toMatch(message);
      expect(run.stderr, args.join(" ")).not.toMatch(/^\s+at /m);
      expect(run.code, args.join(" ")).toBe(2);
    }
  }, 120_000);
});
