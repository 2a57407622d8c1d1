/**
 * How many jobs that move money (targeted polls, builds, signings) this process is running now. The
 * sweep slows down while any run (service.requestsPerSecond's `watcher.sweepShareWhileActingPct`).
 */
export class WorkInProgress {
  #running = 0;

  get isBusy(): boolean {
    return this.#running > 0;
  }

  /** Runs `work`, counted as in progress until it settles. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    this.#running += 1;
    try {
      return await work();
    } finally {
      this.#running -= 1;
    }
  }
}
