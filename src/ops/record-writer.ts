import { appendFile, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { gzip } from "node:zlib";

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
 * Appends JSON lines to a gzip file a day, each line its own gzip member (a reader inflates the
 * members one after another, and a crash loses at most the line being written). `write` returns at
 * once: lines are written one after another in the background, in the order given, and a failure is
 * reported and counted, never thrown, so a poll is never slowed or broken by its recording.
 */
export class RecordWriter {
  private chain: Promise<void> = Promise.resolve();
  private pending = 0;
  private madeDir = false;

  constructor(private readonly options: RecordWriterOptions) {}

  write(line: RecordedLine): void {
    const outcome = (o: RecordOutcome) => {
      try {
        this.options.onOutcome?.(o);
      } catch {
        // A metric that throws must not reach the poll either.
      }
    };
    if (this.pending >= (this.options.maxPending ?? 1_000)) {
      outcome("dropped");
      return;
    }
    let text: string;
    try {
      // Serialised now: the line is what the poll saw, whatever happens to its objects afterwards.
      text = `${JSON.stringify(line)}\n`;
    } catch (error) {
      this.report("(not serialisable)", error);
      outcome("failed");
      return;
    }
    const file = join(this.options.dir, recordFileName(line.at));
    this.pending += 1;
    this.chain = this.chain.then(async () => {
      try {
        if (!this.madeDir) {
          await mkdir(this.options.dir, { recursive: true, mode: 0o700 });
          this.madeDir = true;
        }
        await appendFile(file, await gzipAsync(text), { mode: 0o600 });
        outcome("written");
      } catch (error) {
        this.report(file, error);
        outcome("failed");
      } finally {
        this.pending -= 1;
      }
    });
  }

  /** Resolves once every line given so far is written (or has failed): for a clean stop and tests. */
  flush(): Promise<void> {
    return this.chain;
  }

  private report(file: string, error: unknown): void {
    try {
      this.options.onError?.(file, error instanceof Error ? error.message : String(error));
    } catch {
      // As above: the recording never throws into its caller.
    }
  }
}
