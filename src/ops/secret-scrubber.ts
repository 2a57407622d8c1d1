import type { DestinationStream } from "pino";

export const REDACTED = "[redacted]";

/** Prefixes longer than this tell secrets apart no better, and cost more to cut at every place. */
const MAX_KEY_LENGTH = 8;

/**
 * Defence in depth behind path redaction: replaces any known secret string wherever it appears in a
 * log line, including free-text messages and error stacks that redaction paths cannot reach.
 * Secrets can be added after the logger exists (keys are loaded after start-up logging begins).
 */
export class SecretScrubber {
  readonly #secrets = new Set<string>();
  /** Secrets by their first `#keyLength` characters: a line is scanned once, however many there are. */
  #byPrefix = new Map<string, string[]>();
  /** The shortest secret's length, at most MAX_KEY_LENGTH: every secret has a prefix this long. */
  #keyLength = MAX_KEY_LENGTH;

  constructor(secrets: Iterable<string> = []) {
    this.add(secrets);
  }

  /**
   * Adds secrets; empty or whitespace-only strings are ignored (they would match everywhere). A fleet
   * adds a dozen forms per wallet key, wallet after wallet: each add costs its own secrets only.
   */
  add(secrets: Iterable<string>): void {
    const added: string[] = [];
    for (const secret of secrets) {
      if (secret.trim().length === 0) continue;
      added.push(secret);
      // A secret holding quotes or backslashes appears escaped inside a JSON log line.
      const escaped = JSON.stringify(secret).slice(1, -1);
      if (escaped !== secret) added.push(escaped);
    }
    const fresh: string[] = [];
    for (const secret of added) {
      if (this.#secrets.has(secret)) continue;
      this.#secrets.add(secret);
      fresh.push(secret);
    }
    let shortest = this.#keyLength;
    for (const secret of fresh) shortest = Math.min(shortest, secret.length);
    if (shortest < this.#keyLength) {
      // A shorter secret than any so far: every prefix gets shorter, so the index is made again.
      this.#keyLength = shortest;
      this.#byPrefix = new Map();
      for (const secret of this.#secrets) this.#index(secret);
    } else for (const secret of fresh) this.#index(secret);
  }

  get size(): number {
    return this.#secrets.size;
  }

  /** Replaces every secret in `text`: at each place the longest one that starts there, left to right. */
  scrub(text: string): string {
    if (this.#secrets.size === 0) return text;
    const keyLength = this.#keyLength;
    let out = "";
    let copiedTo = 0;
    let at = 0;
    while (at + keyLength <= text.length) {
      const found = this.#byPrefix
        .get(text.slice(at, at + keyLength))
        ?.find((secret) => text.startsWith(secret, at));
      if (found === undefined) {
        at += 1;
        continue;
      }
      out += text.slice(copiedTo, at) + REDACTED;
      at += found.length;
      copiedTo = at;
    }
    return copiedTo === 0 ? text : out + text.slice(copiedTo);
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

  /** Files a secret under its prefix, longest first, so a secret that contains another is replaced whole. */
  #index(secret: string): void {
    const prefix = secret.slice(0, this.#keyLength);
    const candidates = this.#byPrefix.get(prefix);
    if (candidates === undefined) {
      this.#byPrefix.set(prefix, [secret]);
      return;
    }
    candidates.push(secret);
    candidates.sort((a, b) => b.length - a.length);
  }
}
