export interface HealthVerdict {
  ok: boolean;
  detail: string;
}

interface Loop {
  intervalMs: number;
  lastStampMs: number;
}

/**
 * Liveness from the inside: each of the process's own loops (scheduler tick, worker heartbeat, ...)
 * stamps a time when it runs; a loop whose stamp is older than two of its intervals is stuck, and
 * `/healthz` fails so the supervisor restarts the process. Two intervals, not one, so a loop that is
 * merely a little late is not killed.
 */
export class Watchdog {
  readonly #loops = new Map<string, Loop>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** Starts watching a loop; registering counts as its first stamp, so start-up is not a failure. */
  register(loop: string, intervalMs: number): void {
    if (!(intervalMs > 0)) throw new RangeError(`watchdog loop ${loop}: intervalMs must be positive`);
    this.#loops.set(loop, { intervalMs, lastStampMs: this.#now() });
  }

  stamp(loop: string): void {
    const known = this.#loops.get(loop);
    // An unregistered stamp is a wiring bug; failing loudly beats a loop that is silently unwatched.
    if (!known) throw new Error(`watchdog: loop ${loop} is not registered`);
    known.lastStampMs = this.#now();
  }

  unregister(loop: string): void {
    this.#loops.delete(loop);
  }

  check(): HealthVerdict {
    const nowMs = this.#now();
    const late: string[] = [];
    for (const [name, loop] of this.#loops) {
      const ageMs = nowMs - loop.lastStampMs;
      if (ageMs > 2 * loop.intervalMs)
        late.push(`${name} last ran ${ageMs} ms ago (interval ${loop.intervalMs} ms)`);
    }
    if (late.length > 0) return { ok: false, detail: late.join("; ") };
    return { ok: true, detail: `${this.#loops.size} loops running` };
  }
}
