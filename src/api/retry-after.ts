/** What these rules read of an answer's headers (fetch's Headers, or node-http.ts's answer). */
type HeaderReader = { get(name: string): string | null };

/** `Retry-After` (delta seconds or an HTTP date) in ms from now, or undefined when absent or unreadable. */
export function retryAfterMs(headers: HeaderReader, nowMs: number): number | undefined {
  const retryAfter = headers.get("retry-after")?.trim();
  if (!retryAfter) return undefined;
  if (/^\d+(\.\d+)?$/.test(retryAfter)) return Math.ceil(Number(retryAfter) * 1000);
  const at = Date.parse(retryAfter);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

/**
 * How long the service asked us to wait, from a 429's headers (api-gaps): `Retry-After` if present,
 * else `x-ratelimit-reset` (Unix seconds of the window's reset), else undefined, and the caller falls
 * back to its own backoff.
 */
export function serverRequestedDelayMs(headers: HeaderReader, nowMs: number): number | undefined {
  const stated = retryAfterMs(headers, nowMs);
  if (stated !== undefined) return stated;
  const reset = headers.get("x-ratelimit-reset")?.trim();
  if (reset && /^\d+(\.\d+)?$/.test(reset)) return Math.max(0, Math.ceil(Number(reset) * 1000 - nowMs));
  return undefined;
}
