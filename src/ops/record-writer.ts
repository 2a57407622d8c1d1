import { open } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { gzip } from "node:zlib";
import { makeDirectory } from "./make-directory.js";

const gzipAsync = promisify(gzip);

/** What a recorded line must carry: the Unix seconds it was seen at, which names its day's file. */
export interface RecordedLine {
  readonly at: number;
}

export type RecordOutcome = "written" | "failed" | "dropped";

export interface RecordWriterOptions {
  readonly dir: string;
  /** Told of every line's fate (a metric); never throws back into the writer. */
  readonly onOutcome?: (outcome: RecordOutcome) => void;
  /** Told of a failed write, with the file and the error's message (a log line). */
  readonly onError?: (file: string, message: string) => void;
  /** Lines waiting for the disk past which new ones are dropped: a slow disk never grows memory. */
  readonly maxPending?: number;
}

/** `2026-11-27.jsonl.gz`: one file per UTC day of the line's own time. */
export function recordFileName(atSeconds: number): string {
  return `${new Date(atSeconds * 1000).toISOString().slice(0, 10)}.jsonl.gz`;
}

/**
 * Appends JSON lines to a gzip file a day. `write` returns at once: lines wait in memory and are
 * written in the background, in the order given, those waiting together as one gzip member (a reader
 * inflates the members one after another; together they compress far better than one by one, and a
 * crash loses at most the member being written). A failure is reported and counted, never thrown,
 * so a poll is never slowed or broken by its recording.
 */
export class RecordWriter {
  private chain: Promise<void> = Promise.resolve();
  /** Lines not yet handed to the disk, by file, in the order written. */
  private waiting = new Map<string, string[]>();
  private pending = 0;
  /** A drain is queued and has not yet taken the waiting lines. */
  private isDrainQueued = false;
  private madeDir = false;

  constructor(private readonly options: RecordWriterOptions) {}

  write<T extends RecordedLine>(line: T): void {
    if (this.pending >= (this.options.maxPending ?? 10_000)) {
      this.tell("dropped", 1);
      return;
    }
    let text: string;
    try {
      // Serialised now: the line is what the poll saw, whatever happens to its objects afterwards.
      text = `${JSON.stringify(line)}\n`;
    } catch (error) {
      this.report("(not serialisable)", error);
      this.tell("failed", 1);
      return;
    }
    const file = join(this.options.dir, recordFileName(line.at));
    const lines = this.waiting.get(file);
    if (lines) lines.push(text);
    else this.waiting.set(file, [text]);
    this.pending += 1;
    // One drain queued at a time: it takes every line waiting when it runs.
    if (!this.isDrainQueued) {
      this.isDrainQueued = true;
      this.chain = this.chain.then(() => this.drain());
    }
  }

  /** Resolves once every line given so far is written (or has failed): for a clean stop and tests. */
  async flush(): Promise<void> {
    while (this.pending > 0) await this.chain;
  }

  private async drain(): Promise<void> {
    const batch = this.waiting;
    this.waiting = new Map();
    this.isDrainQueued = false;
    for (const [file, lines] of batch) {
      try {
        if (!this.madeDir) {
          await makeDirectory(this.options.dir, 0o700);
          this.madeDir = true;
        }
        await appendMember(file, await gzipAsync(lines.join("")));
        this.tell("written", lines.length);
      } catch (error) {
        this.report(file, error);
        this.tell("failed", lines.length);
      } finally {
        this.pending -= lines.length;
      }
    }
  }

  private tell(outcome: RecordOutcome, lines: number): void {
    try {
      for (let i = 0; i < lines; i += 1) this.options.onOutcome?.(outcome);
    } catch {
      // A metric that throws must not reach the poll either.
    }
  }

  private report(file: string, error: unknown): void {
    try {
      this.options.onError?.(file, error instanceof Error ? error.message : String(error));
    } catch {
      // As above: the recording never throws into its caller.
    }
  }
}

/**
 * Appends one gzip member, all or nothing: a write cut short (a full disk) is cut back off, so the
 * members after it, once there is room again, still follow a whole one and the day stays readable.
 */
async function appendMember(file: string, member: Buffer): Promise<void> {
  const handle = await open(file, "a", 0o600);
  try {
    const { size } = await handle.stat();
    try {
      await handle.appendFile(member);
    } catch (error) {
      await handle.truncate(size).catch(() => undefined);
      throw error;
    }
  } finally {
    await handle.close();
  }
}
