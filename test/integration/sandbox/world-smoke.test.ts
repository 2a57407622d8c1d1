import { VersionedTransaction } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EndpointName, endpoints } from "../../../src/api/endpoints.js";
import type { RunningSandbox } from "../../../src/sandbox/index.js";
import { DrivenClock } from "../../../src/sandbox/world/clock.js";
import { startCheckedSandbox } from "../../helpers/checked-sandbox.js";

/**
 * Every endpoint of the table, called over HTTP against the real world: each answers 200 with a body
 * that passes its response schema. Ids come from the sandbox's own answers, as a client would find them.
 */
let sandbox: RunningSandbox;
const answered = new Set<EndpointName>();

beforeAll(async () => {
  sandbox = await startCheckedSandbox({ port: 0, clock: new DrivenClock(), rateLimit: false });
});
afterAll(() => sandbox.close());

async function call<N extends EndpointName>(
  name: N,
  path: string,
  body?: unknown,
): Promise<Record<string, unknown> & unknown[]> {
  const def = endpoints[name];
  const response = await fetch(`${sandbox.url}${path}`, {
    method: def.method,
    headers: {
      "x-api-key": sandbox.apiKey,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  expect(response.status, `${name}: ${text}`).toBe(200);
  const json: unknown = JSON.parse(text);
  const parsed = def.response.safeParse(json);
  expect(parsed.success, `${name}: ${parsed.error?.message}`).toBe(true);
  answered.add(name);
  return json as Record<string, unknown> & unknown[];
}

/** Signs a transaction the service built with the sandbox wallet that owes the signature. */
function signAs(walletIndex: number, base64: string): string {
  const tx = VersionedTransaction.deserialize(Buffer.from(base64, "base64"));
  tx.sign([sandbox.world.walletKeypair(walletIndex)]);
  return Buffer.from(tx.serialize()).toString("base64");
}

interface Row {
  [key: string]: unknown;
}

describe("sandbox with the real world", () => {
  it("answers every endpoint with a body that passes its response schema", async () => {
    const wallet = sandbox.wallets[0] as string;

    const events = (await call("listEvents", "/prediction/v1/events?includeMarkets=true&end=50"))
      .data as Row[];
    const event = events.find((e) => Array.isArray(e.markets) && e.markets.length > 0) as Row;
    const eventId = String(event.eventId);
    await call("getEvent", `/prediction/v1/events/${encodeURIComponent(eventId)}?includeMarkets=true`);
    await call("searchEvents", "/prediction/v1/events/search?query=a&limit=5");
    const markets = (
      await call("listEventMarkets", `/prediction/v1/events/${encodeURIComponent(eventId)}/markets`)
    ).data as Row[];
    const marketId = String(markets[0]?.marketId);
    await call("getEventMarket", `/prediction/v1/events/${encodeURIComponent(eventId)}/markets/${marketId}`);
    await call("getMarket", `/prediction/v1/markets/${marketId}`);

    const positions = (await call("listPositions", `/prediction/v1/positions?ownerPubkey=${wallet}&end=100`))
      .data as Row[];
    await call("listOrders", `/prediction/v1/orders?ownerPubkey=${wallet}`);
    await call("listHistory", `/prediction/v1/history?ownerPubkey=${wallet}`);
    await call("leaderboards", "/prediction/v1/leaderboards?period=weekly&metric=volume&limit=10");
    const claimable = positions.find((p) => p.claimable === true && p.claimed === false) as Row;
    await call("claimPosition", `/prediction/v1/positions/${claimable.pubkey}/claim`, {
      ownerPubkey: wallet,
    });
    const open = positions.find((p) => p.claimable === false && p.claimed === false && p.contracts !== "0");
    await call("getPosition", `/prediction/v1/positions/${open?.pubkey}`);
    await call("closePosition", `/prediction/v1/positions/${open?.pubkey}`, { ownerPubkey: wallet });
    await call("closeAllPositions", "/prediction/v1/positions", {
      ownerPubkey: wallet,
      minSellPriceSlippageBps: 100,
    });

    const tokens = (await call("searchTokens", "/ultra/v1/search?query=USDC,SOL")) as unknown as Row[];
    const mintOf = (symbol: string) => String(tokens.find((t) => t.symbol === symbol)?.id);
    const [usdc, sol] = [mintOf("USDC"), mintOf("SOL")];
    await call(
      "buildSwap",
      `/swap/v2/build?inputMint=${usdc}&outputMint=${sol}&amount=10000000&taker=${wallet}`,
    );

    const trigger = await call("createTriggerOrder", "/trigger/v1/createOrder", {
      inputMint: usdc,
      outputMint: sol,
      maker: wallet,
      payer: wallet,
      params: { makingAmount: "10000000", takingAmount: "50000000" },
    });
    const executed = await call("executeTrigger", "/trigger/v1/execute", {
      requestId: trigger.requestId,
      signedTransaction: signAs(0, String(trigger.transaction)),
    });
    expect(executed.status).toBe("Success");
    await call("cancelTriggerOrder", "/trigger/v1/cancelOrder", { maker: wallet, order: trigger.order });
    const second = await call("createTriggerOrder", "/trigger/v1/createOrder", {
      inputMint: usdc,
      outputMint: sol,
      maker: wallet,
      payer: wallet,
      params: { makingAmount: "10000000", takingAmount: "60000000" },
    });
    await call("executeTrigger", "/trigger/v1/execute", {
      requestId: second.requestId,
      signedTransaction: signAs(0, String(second.transaction)),
    });
    const listed = await call(
      "getTriggerOrders",
      `/trigger/v1/getTriggerOrders?user=${wallet}&orderStatus=active`,
    );
    expect(JSON.stringify(listed)).toContain(String(second.order));
    await call("cancelTriggerOrders", "/trigger/v1/cancelOrders", { maker: wallet, orders: [second.order] });

    const recurring = await call("createRecurringOrder", "/recurring/v1/createOrder", {
      user: wallet,
      inputMint: usdc,
      outputMint: sol,
      params: { time: { inAmount: 200_000_000, numberOfOrders: 2, interval: 86_400 } },
    });
    await call("executeRecurring", "/recurring/v1/execute", {
      requestId: recurring.requestId,
      signedTransaction: signAs(0, String(recurring.transaction)),
    });
    const recurringOrders = await call(
      "getRecurringOrders",
      `/recurring/v1/getRecurringOrders?user=${wallet}&orderStatus=active&recurringType=time`,
    );
    const recurringOrder =
      recurring.order ?? JSON.stringify(recurringOrders).match(/"orderKey":"(\w+)"/)?.[1];
    await call("cancelRecurringOrder", "/recurring/v1/cancelOrder", { user: wallet, order: recurringOrder });
    await call("inviteHistory", `/send/v1/invite-history?address=${wallet}`);

    const forecast = (await call("listEvents", "/prediction/v1/events?provider=bisonfi&includeMarkets=true"))
      .data as Row[];
    const forecastMarket = ((forecast[0]?.markets ?? []) as Row[])[0];
    const buy = (body: Row) =>
      call("createOrder", "/prediction/v1/orders", {
        ownerPubkey: wallet,
        isYes: true,
        isBuy: true,
        depositAmount: "10000000",
        ...body,
      });
    const forecastBuy = await buy({ marketId: forecastMarket?.marketId });
    const bought = await call("executePrediction", "/prediction/v1/execute", {
      signedTransaction: signAs(0, String(forecastBuy.transaction)),
      context: (forecastBuy.execution as Row).context,
    });
    expect(bought.status).toBe("Success");
    const keeperFilled = await buy({ marketId });
    const filled = await call("executeOrder", "/prediction/v1/orders/execute", {
      signedTransaction: signAs(0, String(keeperFilled.transaction)),
    });
    expect(filled.signature).toEqual(expect.any(String));

    expect([...answered].sort()).toEqual(Object.keys(endpoints).sort());
  });

  it("answers a world refusal in the area's shape (unknown market → 404 naming marketId)", async () => {
    const response = await fetch(`${sandbox.url}/prediction/v1/markets/no-such-market`, {
      headers: { "x-api-key": sandbox.apiKey },
    });
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ type: "invalid_request_error", param: "marketId" });
  });

  it("an id of one blank character names nothing: 404, not 400", async () => {
    const response = await fetch(`${sandbox.url}/prediction/v1/events/%20`, {
      headers: { "x-api-key": sandbox.apiKey },
    });
    expect(response.status).toBe(404);
  });
});
