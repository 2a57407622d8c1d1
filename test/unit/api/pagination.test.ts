import { describe, expect, it, vi } from "vitest";
import { PaginationError } from "../../../src/api/errors.js";
import { collectAll, collectUnique, type Page, paginate } from "../../../src/api/pagination.js";

/** A well-behaved paginated source of `total` numbers; `cap` limits how many it gives per page. */
function source(total: number, cap = Number.POSITIVE_INFINITY) {
  const items = Array.from({ length: total }, (_, i) => i);
  return vi.fn(async ({ start, end }: { start: number; end: number }): Promise<Page<number>> => {
    const last = Math.min(end, start + cap, total);
    const data = items.slice(start, last);
    return { data, pagination: { start, end: last, total, hasNext: last < total } };
  });
}

describe("paginate", () => {
  it.each([
    [0, 10, 1],
    [1, 10, 1],
    [10, 10, 1],
    [11, 10, 2],
    [95, 10, 10],
  ])("walks %i items with page size %i in %i requests", async (total, pageSize, requests) => {
    const fetchPage = source(total);
    expect(await collectAll(paginate(fetchPage, { pageSize }))).toEqual(
      Array.from({ length: total }, (_, i) => i),
    );
    expect(fetchPage).toHaveBeenCalledTimes(requests);
    expect(fetchPage.mock.calls.every(([r]) => r.end - r.start === pageSize)).toBe(true);
  });

  it("follows the service when it answers shorter pages than asked", async () => {
    const fetchPage = source(25, 4);
    expect(await collectAll(paginate(fetchPage, { pageSize: 10 }))).toHaveLength(25);
    expect(fetchPage.mock.calls.map(([r]) => r.start)).toEqual([0, 4, 8, 12, 16, 20, 24]);
  });

  it("starts where asked", async () => {
    expect(await collectAll(paginate(source(10), { pageSize: 3, start: 7 }))).toEqual([7, 8, 9]);
  });

  it("refuses a service that says hasNext but makes no progress", async () => {
    const stuck = async ({ start }: { start: number }): Promise<Page<number>> => ({
      data: [],
      pagination: { start, end: start, total: 100, hasNext: true },
    });
    await expect(collectAll(paginate(stuck, { pageSize: 10 }))).rejects.toBeInstanceOf(PaginationError);
  });

  it("refuses a service that never ends", async () => {
    const endless = async ({ start, end }: { start: number; end: number }): Promise<Page<number>> => ({
      data: [start],
      pagination: { start, end, total: end + 1, hasNext: true },
    });
    await expect(collectAll(paginate(endless, { pageSize: 1, maxPages: 50 }))).rejects.toThrow(
      /more than 50 pages/,
    );
  });

  it("stops at an empty page that claims more, naming the endpoint and the rule", async () => {
    const fetchPage = vi.fn(
      async ({ start, end }: { start: number; end: number }): Promise<Page<number>> => ({
        data: [],
        pagination: { start, end, total: 1_000, hasNext: true },
      }),
    );
    const walk = collectAll(paginate(fetchPage, { pageSize: 100, endpoint: "listPositions" }));
    await expect(walk).rejects.toBeInstanceOf(PaginationError);
    await expect(walk).rejects.toThrow(
      "listPositions: the page at start 0 holds no item yet says hasNext (total 1000); a page that claims more must hold items",
    );
    expect(fetchPage).toHaveBeenCalledTimes(1);
  });

  it.each([
    ["total 0", 0, []],
    ["the end reaches the total", 3, [0, 1, 2]],
  ])("takes a page as the last when %s, whatever hasNext says", async (_name, total, items) => {
    const fetchPage = vi.fn(
      async ({ start, end }: { start: number; end: number }): Promise<Page<number>> => ({
        data: items.slice(start, end),
        pagination: { start, end, total, hasNext: true },
      }),
    );
    expect(await collectAll(paginate(fetchPage, { pageSize: 10 }))).toEqual(items);
    expect(fetchPage).toHaveBeenCalledTimes(1);
  });

  it("walks no more pages than the total needs, plus a margin", async () => {
    // One item a page after a full first page: the total (40) needs 4 pages of 10.
    const fetchPage = vi.fn(async ({ start }: { start: number }): Promise<Page<number>> => {
      const data = start === 0 ? Array.from({ length: 10 }, (_, i) => i) : [start];
      const end = start + data.length;
      return { data, pagination: { start, end, total: 40, hasNext: true } };
    });
    await expect(collectAll(paginate(fetchPage, { pageSize: 10, endpoint: "listOrders" }))).rejects.toThrow(
      /^listOrders: more than 6 pages for a total of 40 items/,
    );
    expect(fetchPage).toHaveBeenCalledTimes(6);
  });

  it("refuses a page size that is not a positive integer", async () => {
    await expect(collectAll(paginate(source(1), { pageSize: 0 }))).rejects.toBeInstanceOf(RangeError);
  });

  it("is lazy: stopping early fetches no further page", async () => {
    const fetchPage = source(100);
    for await (const n of paginate(fetchPage, { pageSize: 10 })) if (n === 3) break;
    expect(fetchPage).toHaveBeenCalledTimes(1);
  });
});

describe("collectUnique", () => {
  it("keeps each item once when the list moved between pages (a new item pushed one across the boundary)", async () => {
    // Page one is read, then an item is added at the head: page two starts with page one's last item.
    const pages: Array<Page<{ id: string }>> = [
      { data: [{ id: "a" }, { id: "b" }], pagination: { start: 0, end: 2, total: 3, hasNext: true } },
      { data: [{ id: "b" }, { id: "c" }], pagination: { start: 2, end: 4, total: 4, hasNext: false } },
    ];
    const fetchPage = vi.fn(async ({ start }: { start: number }) => pages[start / 2] as Page<{ id: string }>);
    const items = await collectUnique(paginate(fetchPage, { pageSize: 2 }), (item) => item.id);
    expect(items.map((item) => item.id)).toEqual(["a", "b", "c"]);
  });
});
