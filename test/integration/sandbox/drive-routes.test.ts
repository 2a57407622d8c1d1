import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningSandbox } from "../../../src/sandbox/index.js";
import { positionView } from "../../../src/sandbox/world/views.js";
import { startCheckedSandbox } from "../../helpers/checked-sandbox.js";
import { rawRequest } from "../../helpers/raw-http.js";

/** The drive routes' own rules, at the HTTP boundary (the CLI's are in test/e2e/sandbox-drive.test.ts). */
describe("sandbox drive routes (/__sandbox/markets, /clock, /fund)", () => {
  let sandbox: RunningSandbox;
  let marketId: string;

  beforeAll(async () => {
    sandbox = await startCheckedSandbox({ port: 0, chain: false, rateLimit: false });
    const open = sandbox.world.markets.find((m) => sandbox.world.marketState(m).status === "open");
    marketId = open?.marketId ?? "";
  });

  afterAll(async () => {
    await sandbox?.close();
  });

  const post = (url: string, payload: unknown, remoteAddress = "127.0.0.1") =>
    sandbox.server.inject({ method: "POST", url, payload: payload as object, remoteAddress });

  it("answer on loopback only: from another address a resolve is refused and changes nothing", async () => {
    const away = await post(`/__sandbox/markets/${marketId}/resolve`, { result: "yes" }, "10.0.0.5");
    expect(away.statusCode).toBe(403);
    const market = sandbox.world.findMarket(marketId);
    expect(market && sandbox.world.marketState(market).status).toBe("open");
  });

  it("refuse a body outside the rules with 400 naming the field, nothing changed", async () => {
    const before = sandbox.clock.nowSeconds();
    const cases: Array<[string, unknown, RegExp]> = [
      [
        `/__sandbox/markets/${marketId}/resolve`,
        { result: "maybe" },
        /^result: must be one of yes, no, cancelled/,
      ],
      [`/__sandbox/markets/${marketId}/resolve`, { result: "yes", extra: 1 }, /^extra: is not a known field/],
      [
        `/__sandbox/markets/${marketId}/price`,
        { yesPrice: "1.2" },
        /^yesPrice: must be a price strictly between 0 and 1/,
      ],
      [`/__sandbox/markets/${marketId}/price`, { yesPrice: 0.5 }, /^yesPrice: must be a string/],
      [
        `/__sandbox/markets/${marketId}/price`,
        { yesPrice: "0.5", halfSpread: "0.6" },
        /^halfSpread: must be dollars from 0 to below 0.5/,
      ],
      [
        `/__sandbox/markets/${marketId}/price`,
        { yesPrice: "0.1", halfSpread: "0.2" },
        /^halfSpread: must leave both sides a bid above 0/,
      ],
      ["/__sandbox/clock/advance", { seconds: 0 }, /^seconds: must be from 1 to 31536000 seconds/],
      ["/__sandbox/clock/advance", { seconds: 1.5 }, /^seconds: must be an integer/],
      [
        `/__sandbox/markets/${marketId}/resolve`,
        { result: "yes", needsClaim: "no" },
        /^needsClaim: must be a boolean/,
      ],
      ["/__sandbox/fund", { wallet: "x", amount: "1" }, /^wallet: must be a base58 public key/],
    ];
    for (const [url, body, error] of cases) {
      const answer = await post(url, body);
      expect(answer.statusCode, url).toBe(400);
      expect((answer.json() as { error: string }).error).toMatch(error);
    }
    expect(sandbox.clock.nowSeconds()).toBe(before);
    const market = sandbox.world.findMarket(marketId);
    expect(market && sandbox.world.marketState(market).status).toBe("open");
  });

  it("say what the world refuses: an unknown market is 404, funding without a chain 409", async () => {
    const unknown = await post("/__sandbox/markets/NOPE-M9/resolve", { result: "yes" });
    expect(unknown.statusCode).toBe(404);
    expect((unknown.json() as { error: string }).error).toBe("marketId: no market NOPE-M9 in this sandbox");
    const fund = await post("/__sandbox/fund", { wallet: sandbox.wallets[0], amount: "1" });
    expect(fund.statusCode).toBe(409);
    expect((fund.json() as { error: string }).error).toMatch(/^wallet: this sandbox runs no chain/);
  });

  it("resolve, cancel and advance act and answer the new state", async () => {
    const [a, b] = sandbox.world.markets
      .filter((m) => sandbox.world.marketState(m).status === "open" && m.marketId !== marketId)
      .map((m) => m.marketId);
    const resolved = await post(`/__sandbox/markets/${a}/resolve`, { result: "no" });
    expect(resolved.json()).toEqual({ marketId: a, status: "closed", result: "no" });
    const cancelled = await post(`/__sandbox/markets/${b}/resolve`, { result: "cancelled" });
    expect(cancelled.json()).toEqual({ marketId: b, status: "cancelled", result: null });
    const again = await post(`/__sandbox/markets/${b}/resolve`, { result: "yes" });
    expect(again.statusCode).toBe(409);
    const before = sandbox.clock.nowSeconds();
    const advanced = await post("/__sandbox/clock/advance", { seconds: 120 });
    expect((advanced.json() as { nowSeconds: number }).nowSeconds).toBe(before + 120);
    expect(sandbox.clock.nowSeconds()).toBe(before + 120);
  });

  it("resolve --no-claim: winners not claimable, a claim answered no_claim_required; advance pays them a day later", async () => {
    const held = sandbox.world.positions.find(
      (p) =>
        sandbox.world.marketState(sandbox.world.marketOf(p)).status === "open" && p.closedAt === undefined,
    );
    if (!held) throw new Error("the sandbox seed no longer has an open position");
    const market = sandbox.world.marketOf(held);
    const resolved = await post(`/__sandbox/markets/${market.marketId}/resolve`, {
      result: held.isYes ? "yes" : "no",
      needsClaim: false,
    });
    expect(resolved.statusCode).toBe(200);
    expect(sandbox.world.isClaimable(held)).toBe(false);
    const claim = await fetch(
      `${sandbox.url}/prediction/v1/positions/${sandbox.world.positionPubkey(held)}/claim`,
      {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": sandbox.apiKey },
        body: JSON.stringify({ ownerPubkey: sandbox.world.ownerOf(held) }),
      },
    );
    expect(claim.status).toBe(400);
    expect(await claim.json()).toMatchObject({
      code: "no_claim_required",
      message: expect.stringMatching(/no claim is required/),
    });
    const advanced = await post("/__sandbox/clock/advance", { seconds: 86_401 });
    expect((advanced.json() as { serviceClaims: number }).serviceClaims).toBeGreaterThanOrEqual(1);
    expect(held.claimedAt).toBe(sandbox.clock.nowSeconds());
  });

  it("price with a half-spread: the bid sits that far below the mark, which the positions show", async () => {
    const answer = await post(`/__sandbox/markets/${marketId}/price`, {
      yesPrice: "0.8",
      halfSpread: "0.15",
    });
    expect(answer.json()).toEqual({
      marketId,
      buyYesPriceUsd: 0.95,
      sellYesPriceUsd: 0.65,
      buyNoPriceUsd: 0.35,
      sellNoPriceUsd: 0.05,
    });
    const held = sandbox.world.positions.find((p) => sandbox.world.marketOf(p).marketId === marketId);
    if (held !== undefined) {
      const view = positionView(sandbox.world, held);
      expect(view.markPriceUsd).toBe(held.isYes ? "800000" : "200000");
      expect(view.sellPriceUsd).toBe(held.isYes ? "650000" : "50000");
    }
  });

  const statusOf = (id: string) => {
    const market = sandbox.world.findMarket(id);
    return market && sandbox.world.marketState(market).status;
  };

  it("answer only the sandbox's own Host names: a rebound page drives nothing and reads nothing (421)", async () => {
    const before = sandbox.clock.nowSeconds();
    const faultsBefore = sandbox.faults.current();
    const json = { "content-type": "application/json" };
    for (const host of [
      "evil.example",
      `evil.example:${new URL(sandbox.url).port}`,
      "localhost.evil.example",
    ]) {
      const resolve = await rawRequest(`${sandbox.url}/__sandbox/markets/${marketId}/resolve`, {
        method: "POST",
        headers: { host, ...json },
        body: JSON.stringify({ result: "yes" }),
      });
      expect(resolve.status, host).toBe(421);
      expect(JSON.parse(resolve.text)).toEqual({ error: "Host: is not a name this sandbox answers to" });
      const advance = await rawRequest(`${sandbox.url}/__sandbox/clock/advance`, {
        method: "POST",
        headers: { host, ...json },
        body: JSON.stringify({ seconds: 60 }),
      });
      expect(advance.status, host).toBe(421);
      const clear = await rawRequest(`${sandbox.url}/__sandbox/faults`, {
        method: "DELETE",
        headers: { host },
      });
      expect(clear.status, host).toBe(421);
      const read = await rawRequest(`${sandbox.url}/prediction/v1/markets/${marketId}`, {
        headers: { host, "x-api-key": sandbox.apiKey },
      });
      expect(read.status, host).toBe(421);
      expect(read.text).not.toContain("pricing");
    }
    expect(statusOf(marketId)).toBe("open");
    expect(sandbox.clock.nowSeconds()).toBe(before);
    expect(sandbox.faults.current()).toEqual(faultsBefore);
    // Its own names still answer.
    const port = new URL(sandbox.url).port;
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]) {
      const read = await rawRequest(`${sandbox.url}/prediction/v1/markets/${marketId}`, {
        headers: { host, "x-api-key": sandbox.apiKey },
      });
      expect(read.status, host).toBe(200);
    }
  });

  it("take only JSON: a form or body-less POST is refused with 415 and changes nothing", async () => {
    const before = sandbox.clock.nowSeconds();
    const cases: Array<[string, Record<string, string>, string | undefined]> = [
      [
        `/__sandbox/markets/${marketId}/resolve`,
        { "content-type": "application/x-www-form-urlencoded" },
        "result=yes",
      ],
      [`/__sandbox/markets/${marketId}/resolve`, { "content-type": "text/plain" }, '{"result":"yes"}'],
      [`/__sandbox/markets/${marketId}/resolve`, {}, undefined],
      ["/__sandbox/clock/advance", { "content-type": "multipart/form-data; boundary=x" }, "--x--"],
      ["/__sandbox/clock/advance", {}, undefined],
    ];
    for (const [path, headers, body] of cases) {
      const answer = await fetch(`${sandbox.url}${path}`, {
        method: "POST",
        headers,
        ...(body ? { body } : {}),
      });
      expect(answer.status, `${path} ${JSON.stringify(headers)}`).toBe(415);
      expect(await answer.json()).toEqual({ error: "content-type: must be application/json" });
    }
    expect(statusOf(marketId)).toBe("open");
    expect(sandbox.clock.nowSeconds()).toBe(before);
  });

  it("refuse a request another site's page makes (Origin, Sec-Fetch-Site) with 403, and take the sandbox's own", async () => {
    const [target] = sandbox.world.markets
      .filter((m) => sandbox.world.marketState(m).status === "open" && m.marketId !== marketId)
      .map((m) => m.marketId);
    const resolve = (headers: Record<string, string>) =>
      fetch(`${sandbox.url}/__sandbox/markets/${target}/resolve`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify({ result: "yes" }),
      });
    const port = new URL(sandbox.url).port;
    const fromOtherSites: Array<Record<string, string>> = [
      { origin: "http://evil.example" },
      { origin: "http://127.0.0.1:3000" },
      { origin: "null" },
      { "sec-fetch-site": "cross-site" },
      { "sec-fetch-site": "same-site", origin: `http://localhost:${port}` },
    ];
    for (const headers of fromOtherSites) {
      const answer = await resolve(headers);
      expect(answer.status, JSON.stringify(headers)).toBe(403);
      expect(await answer.json()).toEqual({ error: "refused: a request from another site's page" });
    }
    expect(statusOf(target ?? "")).toBe("open");
    const own = await resolve({ origin: sandbox.url, "sec-fetch-site": "same-origin" });
    expect(own.status).toBe(200);
    expect(statusOf(target ?? "")).toBe("closed");
  });
});
