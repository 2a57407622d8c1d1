/** Raised when an ops check or collector does not answer in time. */
export class OpsTimeoutError extends Error {
  override readonly name = "OpsTimeoutError";
}

/**
 * Settles with `work`, or rejects after `timeoutMs`. The work itself is not cancelled (a Redis PING
 * cannot be); the caller just stops waiting, which is what a health check or a scrape needs.
 */
export async function withTimeout<T>(work: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new OpsTimeoutError(`${what}: no answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
    timer.unref();
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
