import { mkdtemp, readdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { type RecordOutcome, RecordWriter, recordFileName } from "../../../src/ops/record-writer.js";

const DAY = 86_400;
/** 2026-11-27T23:59:59Z */
const LAST_SECOND = 1_795_823_999;

async function linesIn(file: string): Promise<unknown[]> {
  return gunzipSync(await readFile(file))
    .toString()
    .trimEnd()
    .split("\n")
    .map((line) => JSON.parse(line));
}

/** A writer whose outcomes and errors ("file: message") are collected. */
function reportingWriter(dir: string) {
  const outcomes: RecordOutcome[] = [];
  const errors: string[] = [];
  const writer = new RecordWriter({
    dir,
    onOutcome: (o) => outcomes.push(o),
    onError: (file, message) => errors.push(`${file}: ${message}`),
  });
  return { writer, outcomes, errors };
}

describe("RecordWriter: gzip JSON lines, a file a UTC day, never in the caller's way", () => {
  it("appends lines in the order written, across drains, as gzip members one file reads as one", async () => {
    const dir = join(await mkdtemp(join(tmpdir(), "keeper-rec-")), "new", "dir");
    const outcomes: RecordOutcome[] = [];
    const writer = new RecordWriter({ dir, onOutcome: (o) => outcomes.push(o) });
    for (let i = 0; i < 5; i += 1) writer.write({ at: LAST_SECOND - 10 + i, i });
    await writer.flush();
    for (let i = 5; i < 8; i += 1) writer.write({ at: LAST_SECOND - 10 + i, i });
    await writer.flush();
    expect(await readdir(dir)).toEqual(["2026-11-27.jsonl.gz"]);
    expect((await linesIn(join(dir, "2026-11-27.jsonl.gz"))).map((l) => (l as { i: number }).i)).toEqual([
      0, 1, 2, 3, 4, 5, 6, 7,
    ]);
    expect(outcomes).toEqual(Array(8).fill("written"));
  });

  it("rotates by the line's own UTC day", async () => {
    const dir = await mkdtemp(join(tmpdir(), "keeper-rec-"));
    const writer = new RecordWriter({ dir });
    writer.write({ at: LAST_SECOND, day: 1 });
    writer.write({ at: LAST_SECOND + 1, day: 2 });
    writer.write({ at: LAST_SECOND + 1 + DAY, day: 3 });
    await writer.flush();
    expect((await readdir(dir)).sort()).toEqual([
      "2026-11-27.jsonl.gz",
      "2026-11-28.jsonl.gz",
      "2026-11-29.jsonl.gz",
    ]);
    expect(await linesIn(join(dir, recordFileName(LAST_SECOND + 1)))).toEqual([
      { at: LAST_SECOND + 1, day: 2 },
    ]);
  });

  it("a directory it cannot write: write returns, the failure is reported and counted", async () => {
    const base = await mkdtemp(join(tmpdir(), "keeper-rec-"));
    // A file where the directory should be: mkdir fails, as on a full or read-only disk.
    const dir = join(base, "taken");
    await writeFile(dir, "not a directory");
    const { writer, outcomes, errors } = reportingWriter(dir);
    expect(() => writer.write({ at: LAST_SECOND })).not.toThrow();
    expect(() => writer.write({ at: LAST_SECOND, cyclic: BigInt(1) })).not.toThrow();
    await writer.flush();
    expect(outcomes.sort()).toEqual(["failed", "failed"]);
    expect(errors).toHaveLength(2);
    expect(errors.some((e) => e.startsWith(join(dir, "2026-11-27.jsonl.gz")))).toBe(true);
  });

  // Node's recursive mkdir never returns there (the kernel answers ENOENT under /proc, where the
  // parent exists): the line would wait for ever and the disk thread spin.
  it("a directory under /proc, where none can be made: the failure is reported, never a hang", async () => {
    const dir = join("/proc/self", "keeper-recording", "deeper");
    const { writer, outcomes, errors } = reportingWriter(dir);
    writer.write({ at: LAST_SECOND });
    await writer.flush();
    expect(outcomes).toEqual(["failed"]);
    expect(errors).toEqual([
      expect.stringMatching(/^\/proc\/self\/keeper-recording\/deeper\/2026-11-27\.jsonl\.gz: ENOENT/),
    ]);
  }, 10_000);

  it("drops lines past maxPending rather than grow, and counts them", async () => {
    const dir = await mkdtemp(join(tmpdir(), "keeper-rec-"));
    const outcomes: RecordOutcome[] = [];
    const writer = new RecordWriter({ dir, maxPending: 2, onOutcome: (o) => outcomes.push(o) });
    for (let i = 0; i < 4; i += 1) writer.write({ at: LAST_SECOND, i });
    await writer.flush();
    expect(outcomes.sort()).toEqual(["dropped", "dropped", "written", "written"]);
    expect(await linesIn(join(dir, "2026-11-27.jsonl.gz"))).toEqual([
      { at: LAST_SECOND, i: 0 },
      { at: LAST_SECOND, i: 1 },
    ]);
  });
});
