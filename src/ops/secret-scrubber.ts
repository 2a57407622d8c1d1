import type { DestinationStream } from "pino";

export const REDACTED = "[redacted]";

/**
 * Defence in depth behind path redaction: replaces any known secret string wherever it appears in a
 * log line, including free-text messages and error stacks that redaction paths cannot reach.
 * Secrets can be added after the logger exists (keys are loaded after start-up logging begins).
 */
export class SecretScrubber {
  readonly #secrets = new Set<string>();
  #pattern: RegExp | undefined;

  constructor(secrets: Iterable<string> = []) {
    this.add(secrets);
  }

  /** Adds secrets; empty or whitespace-only strings are ignored (they would match everywhere). */
  add(secrets: Iterable<string>): void {
    for (const secret of secrets) {
      if (secret.trim().length === 0) continue;
      this.#secrets.add(secret);
      // A secret holding quotes or backslashes appears escaped inside a JSON log line.
      const escaped = JSON.stringify(secret).slice(1, -1);
      if (escaped !== secret) this.#secrets.add(escaped);
    }
    this.#pattern = buildPattern(this.#secrets);
  }

  get size(): number {
    return this.#secrets.size;
  }

  scrub(text: string): string {
    if (this.#pattern === undefined) return text;
    return text.replace(this.#pattern, REDACTED);
  }

  /** A destination that scrubs every chunk before handing it to `destination`. */
  wrap(destination: DestinationStream): DestinationStream {
    const wrapped: DestinationStream & { flush?: () => void } = {
      write: (chunk: string) => destination.write(this.scrub(chunk)),
    };
    const flushable = destination as DestinationStream & { flush?: (cb?: () => void) => void };
    if (typeof flushable.flush === "function") wrapped.flush = () => flushable.flush?.();
    return wrapped;
  }
}

function buildPattern(secrets: ReadonlySet<string>): RegExp | undefined {
  if (secrets.size === 0) return undefined;
  // Longest first, so a secret that contains another is replaced whole.
  const alternatives = [...secrets].sort((a, b) => b.length - a.length).map(escapeRegExp);
  return new RegExp(alternatives.join("|"), "g");
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
