import type { Pagination } from "../../core/schemas/common.js";

/** Page size when a request gives `start` without `end`. */
export const DEFAULT_PAGE_SIZE = 20;

/** `start` inclusive, `end` exclusive (api-gaps); `hasNext` says whether `end < total`. */
export function paginate<T>(
  items: readonly T[],
  range: { readonly start?: number | undefined; readonly end?: number | undefined },
): { data: T[]; pagination: Pagination } {
  const total = items.length;
  const start = Math.min(range.start ?? 0, total);
  const end = Math.min(Math.max(range.end ?? start + DEFAULT_PAGE_SIZE, start), total);
  return { data: items.slice(start, end), pagination: { start, end, total, hasNext: end < total } };
}
