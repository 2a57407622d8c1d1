import type { Pagination } from "../core/schemas/common.js";
import type { ApiClient } from "./client.js";
import { PaginationError } from "./errors.js";
import type { ParamsInput } from "./http.js";

export interface Page<T> {
  readonly data: readonly T[];
  readonly pagination: Pagination;
}

export interface PageOptions {
  /** Items asked for per request (`end - start`). Default 100. The service may answer fewer. */
  readonly pageSize?: number;
  /** Index of the first item. Default 0. */
  readonly start?: number;
  /** Refuse to walk more pages than this (a service whose `total` keeps growing). Default 10,000. */
  readonly maxPages?: number;
  /** The endpoint walked, named in a PaginationError. */
  readonly endpoint?: string;
}

export const DEFAULT_PAGE_SIZE = 100;

/** Pages walked beyond what the answer's `total` needs (a list that grew a little while walked). */
export const PAGES_BEYOND_TOTAL = 2;

/**
 * Walks `start`/`end` pages (start inclusive, end exclusive) until `pagination.hasNext` is false,
 * yielding items one by one. The next page starts where the service says this one ended, so a
 * service that answers shorter pages than asked loses nothing. The service's own answer bounds the
 * walk, so a service that keeps saying `hasNext` cannot keep Keeper asking:
 * - a page whose end reaches `total` is the last (the spec's `hasNext` means `end < total`);
 * - a page that holds no item yet says `hasNext` is a PaginationError (it could go on forever);
 * - the pages walked may not exceed what `total` needs at the largest page the service answered,
 *   plus `PAGES_BEYOND_TOTAL`, nor `maxPages` at all.
 */
export async function* paginate<T>(
  fetchPage: (range: { start: number; end: number }) => Promise<Page<T>>,
  options: PageOptions = {},
): AsyncGenerator<T, void, undefined> {
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  const maxPages = options.maxPages ?? 10_000;
  const endpoint = options.endpoint ?? "paginated list";
  if (!Number.isInteger(pageSize) || pageSize < 1)
    throw new RangeError("pageSize must be a positive integer");
  const first = options.start ?? 0;
  let start = first;
  let largestPage = 0;
  for (let pages = 1; ; pages += 1) {
    const page = await fetchPage({ start, end: start + pageSize });
    yield* page.data;
    const { hasNext, end, total } = page.pagination;
    if (!hasNext) return;
    const next = Math.max(end, start + page.data.length);
    if (next >= total) return;
    if (page.data.length === 0)
      throw new PaginationError(
        `${endpoint}: the page at start ${start} holds no item yet says hasNext (total ${total}); a page that claims more must hold items`,
      );
    largestPage = Math.max(largestPage, Math.min(page.data.length, pageSize));
    const needed = Math.ceil((total - first) / largestPage) + PAGES_BEYOND_TOTAL;
    if (pages >= needed)
      throw new PaginationError(
        `${endpoint}: more than ${needed} pages for a total of ${total} items (pages of up to ${largestPage}, ${PAGES_BEYOND_TOTAL} more for a list that grew); giving up at start ${next}`,
      );
    if (pages >= maxPages)
      throw new PaginationError(`${endpoint}: more than ${maxPages} pages; giving up at start ${next}`);
    start = next;
  }
}

/** Every item of an async iterable, in order. */
export async function collectAll<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/**
 * Every item once, by key: the live service documents `start`/`end` as "start (or timestamp)" and
 * does not promise a list that stays still between pages, so an item that moved across a page
 * boundary may come twice. The first one seen is kept.
 */
export async function collectUnique<T>(items: AsyncIterable<T>, keyOf: (item: T) => string): Promise<T[]> {
  const seen = new Set<string>();
  const out: T[] = [];
  for await (const item of items) {
    const key = keyOf(item);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(item);
  }
  return out;
}

type RangeFree<P> = Omit<P, "start" | "end">;

export const iterateEvents = (
  client: ApiClient,
  filter: RangeFree<ParamsInput<"listEvents">> = {},
  options?: PageOptions,
) =>
  paginate((range) => client.prediction.listEvents({ ...filter, ...range }), {
    endpoint: "listEvents",
    ...options,
  });

export const iterateEventMarkets = (client: ApiClient, eventId: string, options?: PageOptions) =>
  paginate((range) => client.prediction.listEventMarkets(eventId, range), {
    endpoint: "listEventMarkets",
    ...options,
  });

export const iteratePositions = (
  client: ApiClient,
  filter: RangeFree<ParamsInput<"listPositions">> = {},
  options?: PageOptions,
) =>
  paginate((range) => client.prediction.listPositions({ ...filter, ...range }), {
    endpoint: "listPositions",
    ...options,
  });

export const iterateOrders = (
  client: ApiClient,
  filter: RangeFree<ParamsInput<"listOrders">> = {},
  options?: PageOptions,
) =>
  paginate((range) => client.prediction.listOrders({ ...filter, ...range }), {
    endpoint: "listOrders",
    ...options,
  });

export const iterateHistory = (
  client: ApiClient,
  filter: RangeFree<ParamsInput<"listHistory">> = {},
  options?: PageOptions,
) =>
  paginate((range) => client.prediction.listHistory({ ...filter, ...range }), {
    endpoint: "listHistory",
    ...options,
  });

/** Invite history pages by number (`page` >= 1) until `hasMoreData` is false. */
export async function* iterateInvites(
  client: ApiClient,
  address: string,
  options: { readonly maxPages?: number } = {},
) {
  const maxPages = options.maxPages ?? 10_000;
  for (let page = 1; ; page += 1) {
    const answer = await client.send.inviteHistory({ address, page });
    yield* answer.invites;
    if (!answer.hasMoreData) return;
    if (answer.invites.length === 0)
      throw new PaginationError(`inviteHistory: page ${page} was empty yet hasMoreData is true`);
    if (page >= maxPages) throw new PaginationError(`inviteHistory: more than ${maxPages} pages`);
  }
}
