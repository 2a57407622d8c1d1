import { VersionedTransaction } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, createApiClient } from "../../../../src/api/client.js";
import type { Intent } from "../../../../src/core/intent.js";
import type { StrategyState } from "../../../../src/core/strategy.js";
import { orderListsFor } from "../../../../src/keeper/reads/service-orders.js";
import { takeSnapshot } from "../../../../src/keeper/reads/snapshot.js";
import type { RunningSandbox } from "../../../../src/sandbox/index.js";
import { DrivenClock } from "../../../../src/sandbox/world/clock.js";
import { ORDERS_PER_PAGE } from "../../../../src/sandbox/world/order-views.js";
import { type KnownTriggerOrder, limitOrders } from "../../../../strategies/limit-orders.js";
import { startCheckedSandbox } from "../../../helpers/checked-sandbox.js";

/**
 * A limit order whose terms changed while the service filled its old order, behind enough newer
 * orders that the old one is on neither the open list nor the first page of history: the service
 * refuses its cancel, and the strategy, reading the lists through the sandbox as a poll does, takes
 * it as no longer open and places the new terms.
 */
let sandbox: RunningSandbox;
let client: ApiClient;
let clock: DrivenClock;
let wallet: string;
let usdc: string;
let sol: string;

beforeAll(async () => {
  clock = new DrivenClock();
  sandbox = await startCheckedSandbox({ port: 0, clock, rateLimit: false });
  client = createApiClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey });
  wallet = sandbox.wallets[1] as string;
  const tokens = await client.tokens.search({ query: "USDC,SOL" });
  usdc = tokens.find((t) => t.symbol === "USDC")?.id ?? "";
  sol = tokens.find((t) => t.symbol === "SOL")?.id ?? "";
});
afterAll(() => sandbox.close());

/** Places a trigger order through the sandbox, signed by the wallet; answers its order account. */
async function place(makingAmount: string, takingAmount: string): Promise<string> {
  const built = await client.trigger.createOrder({
    inputMint: usdc,
    outputMint: sol,
    maker: wallet,
    payer: wallet,
    params: { makingAmount, takingAmount },
  });
  const tx = VersionedTransaction.deserialize(Buffer.from(built.transaction, "base64"));
  tx.sign([sandbox.world.walletKeypair(1)]);
  await client.trigger.execute({
    requestId: built.requestId,
    signedTransaction: Buffer.from(tx.serialize()).toString("base64"),
  });
  const placed = [...sandbox.world.swapOrders.values()].find(
    (o) => o.maker === wallet && o.inAmountRaw === BigInt(makingAmount) && o.status === "open",
  );
  if (!placed) throw new Error(`the sandbox holds no open order of ${makingAmount}`);
  return placed.order;
}

describe("limit-orders: a retired order finished behind newer ones", () => {
  it("is no longer open once two polls 60 s apart list it nowhere: its cancel is forgotten, the new terms are placed", async () => {
    const buy = (price: string) => ({
      id: "buy-sol",
      side: "buy",
      inputMint: usdc,
      outputMint: sol,
      inputDecimals: 6,
      outputDecimals: 9,
      amount: "10",
      price,
    });
    let state: StrategyState = {};
    let known: KnownTriggerOrder[] = [];
    const source = {
      positions: async () => [],
      pendingOrders: async () => [],
      ...orderListsFor(["trigger"], client),
    };
    const poll = async (price: string): Promise<readonly Intent[]> => {
      const nowSeconds = clock.nowSeconds();
      const snapshot = await takeSnapshot({
        wallet,
        withOrders: false,
        source,
        inFlight: [],
        nowSeconds,
        triggerOrders: known,
      });
      const result = limitOrders.evaluate({
        snapshot,
        state,
        config: limitOrders.configSchema.parse({ orders: [buy(price)] }),
        now: new Date(nowSeconds * 1000),
      });
      state = result.state;
      return result.intents;
    };

    const [created] = await poll("150");
    if (created?.kind !== "createTrigger") throw new Error("expected the first generation's create");
    const order = await place(created.makingAmount, created.takingAmount);
    known = [{ key: created.key, order }];
    clock.advance(10);
    expect(await poll("150")).toEqual([]);

    // New terms: the old order is to be cancelled first.
    clock.advance(10);
    const retiring = await poll("160");
    expect(retiring).toEqual([expect.objectContaining({ kind: "cancelTrigger", order })]);

    // Before the cancel is sent, the service fills the order; the wallet's newer orders finish too,
    // enough to fill the first page of history.
    sandbox.world.settleOrder(order, "filled");
    clock.advance(1);
    for (let i = 0; i < ORDERS_PER_PAGE; i += 1)
      sandbox.world.settleOrder(await place(String(5_000_000 + i), "1"), "expired");
    // The cancel the strategy asked for is refused: the order is not open.
    await expect(client.trigger.cancelOrder({ maker: wallet, order })).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining("is filled"),
    });

    // Listed nowhere: the cancel waits out the grace (a new order may be listed late)...
    clock.advance(10);
    expect(await poll("160")).toEqual([expect.objectContaining({ kind: "cancelTrigger", order })]);
    // ...and a poll 60 s later, still listing it nowhere, places the new terms.
    clock.advance(60);
    const next = await poll("160");
    expect(next).toEqual([
      expect.objectContaining({ kind: "createTrigger", key: `limit-${wallet}-buy-sol-2` }),
    ]);
  });
});
