import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { formatIssues } from "../../config/format-issues.js";
import { UsageError } from "../../core/errors.js";
import { type RecordLine, recordLineSchema } from "./recording.js";

const DAY_FILE = /^\d{4}-\d{2}-\d{2}\.jsonl\.gz$/;

/** A recorded poll and where it was read: `file:line` for messages. */
export interface RecordedPoll {
  readonly line: RecordLine;
  readonly where: string;
}

/**
 * Every poll of a recording directory, in time order: day files by name, lines by `at`, and polls of
 * the same second in the order written (a stable sort). A file that is not gzip, a line that is not
 * JSON or not a recorded poll stops the read with `file:line` and the rule it breaks.
 */
export async function readRecording(
  dir: string,
  options: { wallets?: ReadonlySet<string> } = {},
): Promise<RecordedPoll[]> {
  const names = await dayFilesIn(dir);
  const polls: RecordedPoll[] = [];
  for (const name of names)
    polls.push(...parseDayFile(join(dir, name), await readFile(join(dir, name)), options.wallets));
  return polls
    .map((poll, order) => ({ poll, order }))
    .sort((a, b) => a.poll.line.at - b.poll.line.at || a.order - b.order)
    .map(({ poll }) => poll);
}

async function dayFilesIn(dir: string): Promise<string[]> {
  const isDir = await stat(dir).then(
    (s) => s.isDirectory(),
    () => false,
  );
  if (!isDir) throw new UsageError(`--from: ${dir} is not a directory (expected a recording: record.dir)`);
  const names = (await readdir(dir)).filter((name) => DAY_FILE.test(name)).sort();
  if (names.length === 0)
    throw new UsageError(`--from: ${dir} holds no recording (expected files named YYYY-MM-DD.jsonl.gz)`);
  return names;
}

/**
 * One day file's polls; gzip members one after another are read as one stream. With `wallets`, the
 * lines of other wallets are left out before they are checked (a fleet's recording, one wallet's replay).
 */
export function parseDayFile(file: string, bytes: Buffer, wallets?: ReadonlySet<string>): RecordedPoll[] {
  let text: string;
  try {
    text = gunzipSync(bytes).toString("utf8");
  } catch (error) {
    throw new UsageError(`${file}: not a gzip recording (${(error as Error).message})`);
  }
  const polls: RecordedPoll[] = [];
  const lines = text.split("\n");
  for (const [index, raw] of lines.entries()) {
    if (raw.trim() === "") continue;
    const where = `${file}:${index + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      throw new UsageError(`${where}: not a JSON line (each line is one recorded poll)`);
    }
    const wallet = (value as { wallet?: unknown } | null)?.wallet;
    if (wallets !== undefined && typeof wallet === "string" && !wallets.has(wallet)) continue;
    const parsed = recordLineSchema.safeParse(value);
    if (!parsed.success) throw new UsageError(`${where}: ${formatIssues(parsed.error).join("; ")}`);
    polls.push({ line: parsed.data as RecordLine, where });
  }
  return polls;
}
