import type { Socket } from "node:net";
import type { Redis } from "ioredis";

type Flush = (...args: unknown[]) => unknown;

/**
 * Counts what a connected client's socket hands to the system from now on: one per write the kernel
 * sees (Node's `_write` for a chunk, `_writev` for chunks a cork held together), not one per
 * `write()` call.
 */
export function countSocketWrites(redis: Redis): { readonly count: number } {
  const stream = (redis as unknown as { stream: Socket & Record<"_write" | "_writev", Flush> }).stream;
  const counter = { count: 0 };
  for (const name of ["_write", "_writev"] as const) {
    const flush = stream[name].bind(stream);
    stream[name] = (...args: unknown[]) => {
      counter.count += 1;
      return flush(...args);
    };
  }
  return counter;
}
