import { describe, expect, it, vi } from "vitest";
import { createApiClient } from "../../../src/api/client.js";
import type { EndpointName } from "../../../src/api/endpoints.js";
import { PermanentApiError } from "../../../src/api/errors.js";
import { buildTransaction, isClaimItem } from "../../../src/keeper/pipeline/build-transaction.js";
import {
  allTimeLeaderboard,
  closeAllWithClaim,
  eventOfNewProvider,
  historyWithNulls,
  invitesWithNulls,
  LIVE_OWNER,
  marketWithoutPricing,
  ordersOfOwner,
  positionsOfClosedMarket,
  resolvedMarket,
  swapWithoutLookupTables,
  tokensWithApy,
} from "../../fixtures/live/responses.js";

const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });

/** A client whose every request is answered with `body`; the requests it sent are kept. */
function clientAnswering(
  body: unknown,
  options: { apiKey?: string; status?: number; headers?: Record<string, string> } = {},
) {
  const requests: Request[] = [];
  const skipped: Array<[EndpointName, number]> = [];
  const warnings: unknown[] = [];
  const logger = {
    warn: (fields: unknown) => warnings.push(fields),
    debug: () => undefined,
    info: () => undefined,
  };
  const fetchSpy = vi.fn<typeof fetch>(async (input, init) => {
    requests.push(new Request(input, init));
    return json(body, options.status, options.headers);
  });
  const client = createApiClient({
    baseUrl: "http://127.0.0.1:9",
    ...("apiKey" in options ? { apiKey: options.apiKey } : { apiKey: "unit-key" }),
    send: fetchSpy,
    retries: 0,
    logger: logger as never,
    hooks: { onItemsSkipped: (endpoint, count) => skipped.push([endpoint, count]) },
  });
  return { client, requests, skipped, warnings };
}

describe("live-shaped answers parse", () => {
  it("positions of a closed market: null valuation, pnl, sell price and dates", async () => {
    const { client, skipped } = clientAnswering(positionsOfClosedMarket);
    const page = await client.prediction.listPositions({ ownerPubkey: LIVE_OWNER });
    expect(page.data).toHaveLength(2);
    const [won, open] = page.data;
    expect([won?.valueUsd, won?.pnlUsd, won?.pnlUsdPercent, won?.claimableAt]).toEqual([
      null,
      null,
      null,
      null,
    ]);
    expect(won?.payoutUsd).toBe("800000");
    expect(open?.sellPriceUsd).toBeNull();
    expect(open?.eventMetadata.title).toBeUndefined();
    expect(skipped).toEqual([]);
  });

  it("a resolved market: ISO resolveAt, flat fields, null prices", async () => {
    const { client } = clientAnswering(resolvedMarket);
    const market = await client.prediction.getMarket("POLY-RAIN-LDN-0412");
    expect(market.resolveAt).toBe("2026-04-12T21:30:00Z");
    expect(market.title).toBe("Rain in London on 12 April?");
    expect(market.pricing?.buyYesPriceUsd).toBeNull();
  });

  it("a market without pricing, an event of an unknown provider and category", async () => {
    expect(
      (await clientAnswering(marketWithoutPricing).client.prediction.getMarket("x")).pricing,
    ).toBeUndefined();
    const event = await clientAnswering(eventOfNewProvider).client.prediction.getEvent("NEWCO-ELECTION");
    expect(event.category).toBe("weather");
  });

  it("close all mixing a close and a claim; a block height as a decimal string", async () => {
    const { client } = clientAnswering(closeAllWithClaim);
    const answer = await client.prediction.closeAllPositions({
      ownerPubkey: LIVE_OWNER,
      minSellPriceSlippageBps: 300,
    });
    expect(answer.data.map((item) => (isClaimItem(item) ? "claim" : "close"))).toEqual(["close", "claim"]);
    const claim = answer.data[1];
    expect(claim?.txMeta.lastValidBlockHeight).toBe("291004120");
  });

  it("an all-time leaderboard without period bounds", async () => {
    const { client } = clientAnswering(allTimeLeaderboard);
    const board = await client.prediction.leaderboards({ period: "all_time" });
    expect([board.data[0]?.periodStart, board.data[0]?.periodEnd]).toEqual([null, null]);
  });

  it("token search: apy jupEarn, null audit, pool and stats windows", async () => {
    const { client, skipped } = clientAnswering(tokensWithApy);
    const tokens = await client.tokens.search({ query: "USDC,NEW" });
    expect(tokens.map((t) => t.apy?.jupEarn)).toEqual([6.42, undefined]);
    expect(tokens[1]?.audit).toBeNull();
    expect(tokens[0]?.stats7d).toBeNull();
    expect(skipped).toEqual([]);
  });

  it("a swap build without lookup tables and without route usdValue", async () => {
    const { client } = clientAnswering(swapWithoutLookupTables(LIVE_OWNER));
    const build = await client.swap.build({
      inputMint: "So11111111111111111111111111111111111111112",
      outputMint: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
      amount: "1000000",
      taker: LIVE_OWNER,
    });
    expect(build.addressesByLookupTableAddress).toBeNull();
    expect(build.routePlan[0]?.usdValue).toBeUndefined();
  });

  it("orders and history with the unset sides and figures null; invites with null action and mint", async () => {
    const orders = await clientAnswering(ordersOfOwner).client.prediction.listOrders({
      ownerPubkey: LIVE_OWNER,
    });
    expect(orders.data[0]?.maxBuyPriceUsd).toBeNull();
    const history = await clientAnswering(historyWithNulls).client.prediction.listHistory({
      ownerPubkey: LIVE_OWNER,
    });
    expect([
      history.data[0]?.feeUsd,
      history.data[0]?.realizedPnl,
      history.data[0]?.transferAmountToken,
    ]).toEqual([null, null, null]);
    const invites = await clientAnswering(invitesWithNulls).client.send.inviteHistory({
      address: LIVE_OWNER,
    });
    expect(invites.invites.map((i) => [i.action ?? null, i.mint, i.confirmed])).toEqual([
      [null, null, 1],
      [null, null, null],
    ]);
  });
});

describe("a list item that cannot be read", () => {
  it("is skipped, counted and logged with its field; the rest of the page is used", async () => {
    const [won, open] = positionsOfClosedMarket.data;
    const broken = { ...open, sizeUsd: "12.5" };
    const { client, skipped, warnings } = clientAnswering({
      ...positionsOfClosedMarket,
      data: [won, broken],
    });
    const page = await client.prediction.listPositions({ ownerPubkey: LIVE_OWNER });
    expect(page.data.map((p) => p.pubkey)).toEqual([won?.pubkey]);
    expect(skipped).toEqual([["listPositions", 1]]);
    expect(warnings).toContainEqual(
      expect.objectContaining({
        endpoint: "listPositions",
        skipped: 1,
        items: [{ index: 1, fields: ["data[1].sizeUsd: expected an integer string of micro-USD"] }],
      }),
    );
  });

  it("in a close-all answer fails the whole answer: each item is a transaction to sign", async () => {
    const [close, claim] = closeAllWithClaim.data;
    const { client } = clientAnswering({ data: [close, { ...claim, transaction: "" }] });
    await expect(
      client.prediction.closeAllPositions({ ownerPubkey: LIVE_OWNER, minSellPriceSlippageBps: 300 }),
    ).rejects.toThrow(/closeAllPositions: response data\[1\]/);
  });

  it("a broken pagination still fails the page", async () => {
    const { client } = clientAnswering({ ...positionsOfClosedMarket, pagination: { start: 0 } });
    await expect(client.prediction.listPositions()).rejects.toThrow(/pagination/);
  });
});

describe("requests as the live service takes them", () => {
  it("sends any provider name, and no key when none is configured", async () => {
    const { client, requests } = clientAnswering(
      { data: [], pagination: { start: 0, end: 0, total: 0, hasNext: false } },
      { apiKey: undefined },
    );
    await client.prediction.listEvents({ provider: "bisonfi", category: "weather" });
    const url = new URL(requests[0]?.url ?? "");
    expect(url.searchParams.get("provider")).toBe("bisonfi");
    expect(requests[0]?.headers.has("x-api-key")).toBe(false);
  });

  it("reads the gateway's request id into errors", async () => {
    const { client } = clientAnswering(
      {
        type: "invalid_request_error",
        message: "market is not settled yet",
        code: "market_not_settled",
        request_id: "",
      },
      { status: 400, headers: { "x-api-gateway-request-id": "gw-123" } },
    );
    const error = await client.prediction
      .claimPosition(positionsOfClosedMarket.data[0]?.pubkey ?? "", { ownerPubkey: LIVE_OWNER })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PermanentApiError);
    expect((error as PermanentApiError).requestId).toBe("gw-123");
    expect((error as PermanentApiError).code).toBe("market_not_settled");
  });

  it("a claim's block height given as a string is kept as a number", async () => {
    const claimItem = closeAllWithClaim.data[1];
    const built = await buildTransaction(
      {
        claimPosition: async () => claimItem as never,
        closePosition: async () => {
          throw new Error("not used");
        },
        createTriggerOrder: async () => {
          throw new Error("not used");
        },
        cancelTriggerOrder: async () => {
          throw new Error("not used");
        },
        createRecurringOrder: async () => {
          throw new Error("not used");
        },
        cancelRecurringOrder: async () => {
          throw new Error("not used");
        },
      },
      {
        kind: "claim",
        key: "claim-x",
        wallet: LIVE_OWNER,
        strategy: "auto-claim",
        positionPubkey: positionsOfClosedMarket.data[0]?.pubkey ?? "",
      },
    );
    expect(built.lastValidBlockHeight).toBe(291_004_120);
  });
});
