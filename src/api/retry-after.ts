/**
 * How long the service asked us to wait, from a 429's headers (api-gaps): `Retry-After` (delta seconds
 * or an HTTP date) if present, else `x-ratelimit-reset` (Unix seconds of the window's reset), else
 * undefined, and the caller falls back to its own backoff.
 */
export function serverRequestedDelayMs(headers: Headers, nowMs: number): number | undefined {
  const retryAfter = headers.get("retry-after")?.trim();
  if (retryAfter) {
    if (/^\d+(\.\d+)?$/.test(retryAfter)) return Math.ceil(Number(retryAfter) * 1000);
    const at = Date.parse(retryAfter);
    if (!Number.isNaN(at)) return Math.max(0, at - nowMs);
  }
  const reset = headers.get("x-ratelimit-reset")?.trim();
  if (reset && /^\d+(\.\d+)?$/.test(reset)) return Math.max(0, Math.ceil(Number(reset) * 1000 - nowMs));
  return undefined;
}
