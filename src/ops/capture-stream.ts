import type { DestinationStream } from "pino";

/** Everything a logger wrote, kept in memory: for tests that scan logs (for secrets, for events). */
export interface CaptureStream extends DestinationStream {
  /** Every chunk written, in order (pino writes one JSON line per chunk). */
  readonly chunks: readonly string[];
  /** All output as one string. */
  text(): string;
  /** Each non-empty line parsed as JSON; lines that are not JSON are skipped. */
  records(): Record<string, unknown>[];
  /** True when `needle` appears anywhere in the output. */
  contains(needle: string): boolean;
  /** The given secrets that appear in the output: empty when nothing leaked. */
  leaked(secrets: Iterable<string>): string[];
  clear(): void;
}

export function createCaptureStream(): CaptureStream {
  const chunks: string[] = [];
  const text = () => chunks.join("");
  return {
    chunks,
    write(chunk: string) {
      chunks.push(chunk);
    },
    text,
    records() {
      const records: Record<string, unknown>[] = [];
      for (const line of text().split("\n")) {
        if (line.trim() === "") continue;
        try {
          records.push(JSON.parse(line) as Record<string, unknown>);
        } catch {
          // Pretty or partial output is not JSON; `text()` still has it.
        }
      }
      return records;
    },
    contains: (needle) => text().includes(needle),
    leaked(secrets) {
      const output = text();
      return [...secrets].filter((secret) => secret !== "" && output.includes(secret));
    },
    clear() {
      chunks.length = 0;
    },
  };
}
