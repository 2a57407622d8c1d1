import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningSandbox } from "../../../src/sandbox/index.js";
import { DrivenClock } from "../../../src/sandbox/world/clock.js";
import { startCheckedSandbox } from "../../helpers/checked-sandbox.js";

/**
 * The sandbox read by a client written for the live service: plain HTTP, the requests and fields
 * api-live lists (the service's own command-line client among them), no Keeper code in between.
 */
let sandbox: RunningSandbox;

beforeAll(async () => {
  sandbox = await startCheckedSandbox({ port: 0, clock: new DrivenClock(), rateLimit: false, chain: false });
});
afterAll(() => sandbox.close());

type Row = Record<string, unknown>;

async function get(path: string): Promise<{ status: number; json: Row }> {
  const response = await fetch(`${sandbox.url}/prediction/v1${path}`, {
    headers: { "x-api-key": sandbox.apiKey },
  });
  return { status: response.status, json: (await response.json()) as Row };
}

async function getOk(path: string): Promise<Row> {
  const { status, json } = await get(path);
  expect(status, `${path}: ${JSON.stringify(json)}`).toBe(200);
  return json;
}

const rows = (json: Row): Row[] => json.data as Row[];

describe("events as the live service's client reads them", () => {
  it("carries volume24hr (micro-USD string) and liveScore (null when none) on every event", async () => {
    const events = rows(await getOk("/events?end=100"));
    expect(events.length).toBeGreaterThan(0);
    for (const event of events) {
      expect(event.volume24hr, String(event.eventId)).toMatch(/^\d+$/);
      expect(BigInt(event.volume24hr as string)).toBeLessThanOrEqual(BigInt(event.volumeUsd as string));
      expect("liveScore" in event, String(event.eventId)).toBe(true);
    }
    expect(events.some((e) => e.liveScore === null)).toBe(true);
    const kalshi = rows(await getOk("/events?provider=kalshi&filter=live&end=100"));
    const matches = [...events, ...kalshi].filter(
      (e) => e.isLive === true && (e.category === "sports" || e.category === "esports"),
    );
    expect(matches.length).toBeGreaterThan(0);
    for (const match of matches) expect(match.liveScore).toMatchObject({ homeScore: expect.any(Number) });
  });

  it("sorts by volume24hr, by volume and by beginAt", async () => {
    const byDay = rows(await getOk("/events?sortBy=volume24hr&sortDirection=desc&end=100"));
    const day = byDay.map((e) => BigInt(e.volume24hr as string));
    expect(day).toEqual([...day].sort((a, b) => (a > b ? -1 : a < b ? 1 : 0)));
    const byTotal = rows(await getOk("/events?sortBy=volume&sortDirection=asc&end=100"));
    const total = byTotal.map((e) => BigInt(e.volumeUsd as string));
    expect(total).toEqual([...total].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    const byBegin = rows(await getOk("/events?sortBy=beginAt&end=100"))
      .map((e) => e.beginAt)
      .filter((b) => b !== null)
      .map(Number);
    expect(byBegin).toEqual([...byBegin].sort((a, b) => a - b));
  });

  it("filters upcoming events: active, beginning after now", async () => {
    const now = sandbox.world.now();
    const upcoming = rows(await getOk("/events?filter=upcoming&end=100"));
    expect(upcoming.length).toBeGreaterThan(0);
    for (const event of upcoming) {
      expect(event.isActive).toBe(true);
      expect(Number(event.beginAt)).toBeGreaterThan(now);
    }
  });

  it("takes includeAllMarkets on the list and includeMarkets on search, and answers them", async () => {
    const all = rows(await getOk("/events?includeAllMarkets=true&end=10"));
    for (const event of all) expect(Array.isArray(event.markets)).toBe(true);
    const found = rows(await getOk("/events/search?query=a&limit=5&includeMarkets=true"));
    expect(found.length).toBeGreaterThan(0);
    for (const event of found) expect((event.markets as Row[]).length).toBeGreaterThan(0);
    const bare = rows(await getOk("/events/search?query=a&limit=5"));
    for (const event of bare) expect(event.markets).toBeUndefined();
  });

  it("ignores query parameters it does not know, as the live service does", async () => {
    const plain = rows(await getOk("/events?end=5"));
    const withExtra = rows(await getOk("/events?end=5&colour=red&utm_source=cli"));
    expect(withExtra.map((e) => e.eventId)).toEqual(plain.map((e) => e.eventId));
    // A known parameter still follows its rule.
    const { status, json } = await get("/events?sortBy=hot&colour=red");
    expect(status).toBe(400);
    expect(String(json.message)).toMatch(/^sortBy: /);
  });
});

describe("the sandbox's /openapi.json", () => {
  it("describes the new fields and parameters, so its self-check holds its answers to them", async () => {
    const doc = (await (await fetch(`${sandbox.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { parameters?: { name: string }[]; responses: Row }>>;
    };
    const names = (path: string) => (doc.paths[path]?.get?.parameters ?? []).map((p) => p.name);
    expect(names("/prediction/v1/events")).toEqual(
      expect.arrayContaining(["includeAllMarkets", "sortBy", "filter"]),
    );
    expect(names("/prediction/v1/events/search")).toContain("includeMarkets");
    const event = JSON.stringify(doc.paths["/prediction/v1/events/{eventId}"]?.get?.responses);
    for (const field of ["volume24hr", "liveScore"]) expect(event).toContain(`"${field}"`);
    const history = JSON.stringify(doc.paths["/prediction/v1/history"]?.get?.responses);
    for (const field of ["contractsMicro", "filledContractsMicro", "contractsSettledMicro"])
      expect(history).toContain(`"${field}"`);
  });
});

describe("fractional contracts", () => {
  it("a position of 2.5-style size shows the floored contracts with the exact count beside it", async () => {
    const wallet = sandbox.wallets[0] as string;
    const positions = rows(await getOk(`/positions?ownerPubkey=${wallet}&end=100`));
    for (const p of positions) {
      expect(p.contractsMicro, String(p.pubkey)).toMatch(/^\d+$/);
      expect(String(BigInt(p.contractsMicro as string) / 1_000_000n)).toBe(p.contracts);
    }
    const fractional = positions.filter((p) => BigInt(p.contractsMicro as string) % 1_000_000n !== 0n);
    expect(fractional.length).toBeGreaterThan(0);
    const first = fractional[0] as Row;
    const micro = BigInt(first.contractsMicro as string);
    expect(first.contractsDecimal).toBe(`${micro / 1_000_000n}.5`);
    expect(first.contracts).toBe(String(micro / 1_000_000n));
    // Its size is the exact count times the average price, not the floored one.
    expect(BigInt(first.sizeUsd as string)).toBe((micro * BigInt(first.avgPriceUsd as string)) / 1_000_000n);
  });

  it("orders and history carry exact counts beside every legacy count", async () => {
    const wallet = sandbox.wallets[0] as string;
    const orders = rows(await getOk(`/orders?ownerPubkey=${wallet}`));
    expect(orders.some((o) => /^\d+\.5$/.test(String(o.contractsDecimal)))).toBe(true);
    for (const o of orders) expect(o.filledContractsMicro).toMatch(/^\d+$/);
    const history = rows(await getOk(`/history?ownerPubkey=${wallet}&end=200`));
    for (const r of history) {
      expect(String(BigInt(r.contractsMicro as string) / 1_000_000n)).toBe(r.contracts);
      expect(String(BigInt(r.filledContractsMicro as string) / 1_000_000n)).toBe(r.filledContracts);
      expect(String(BigInt(r.contractsSettledMicro as string) / 1_000_000n)).toBe(r.contractsSettled);
    }
    expect(history.some((r) => /^\d+\.5$/.test(String(r.contractsDecimal)))).toBe(true);
  });

  it("a close of the fractional position sells the exact count", async () => {
    const wallet = sandbox.wallets[0] as string;
    const position = sandbox.world.positions.find((p) => !Number.isInteger(p.contracts));
    expect(position).toBeDefined();
    const pubkey = sandbox.world.positionPubkey(position as NonNullable<typeof position>);
    const response = await fetch(`${sandbox.url}/prediction/v1/positions/${pubkey}`, {
      method: "DELETE",
      headers: { "x-api-key": sandbox.apiKey, "content-type": "application/json" },
      body: JSON.stringify({ ownerPubkey: wallet }),
    });
    const json = (await response.json()) as { order: Row };
    expect(response.status, JSON.stringify(json)).toBe(200);
    const micro = BigInt(json.order.contractsMicro as string);
    expect(micro % 1_000_000n).toBe(500_000n);
    expect(json.order.contracts).toBe(String(micro / 1_000_000n));
    expect(json.order.newContractsMicro).toBe("0");
  });
});
