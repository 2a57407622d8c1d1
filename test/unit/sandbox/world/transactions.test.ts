import { Keypair } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import { SandboxError } from "../../../../src/sandbox/world/errors.js";
import { positionView } from "../../../../src/sandbox/world/views.js";
import { defined, worldFixture } from "./helpers.js";

async function refusal(promise: Promise<unknown>): Promise<SandboxError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof SandboxError) return error;
    throw error;
  }
  throw new Error("expected a SandboxError");
}

function claimableOf(fx: ReturnType<typeof worldFixture>, wallet: number) {
  const p = fx.world.positionsOfWallet(wallet).find((x) => fx.world.isClaimable(x));
  if (p === undefined) throw new Error("no claimable position");
  return p;
}

describe("claim", () => {
  it("builds an unsigned transaction and claims only once it lands", async () => {
    const fx = worldFixture();
    const p = claimableOf(fx, 0);
    const owner = fx.wallet(0);
    const positionPubkey = fx.world.positionPubkey(p);
    const built = await fx.call("claimPosition", { positionPubkey }, { ownerPubkey: owner });
    expect(built.position).toMatchObject({
      positionPubkey,
      payoutAmountUsd: String(p.contracts * 1_000_000),
      ownerPubkey: owner,
    });
    expect(built.txMeta.lastValidBlockHeight).toBeGreaterThan(0);
    // Built, not landed: nothing changed.
    expect(positionView(fx.world, p).claimed).toBe(false);
    const outcome = await fx.chain.submitSigned(fx.sign(built.transaction, 0));
    expect(outcome.err).toBeNull();
    const view = positionView(fx.world, p);
    expect(view).toMatchObject({
      claimed: true,
      claimable: false,
      claimedUsd: String(p.contracts * 1_000_000),
    });
    const history = await fx.call("listHistory", { positionPubkey, end: 100 });
    expect(history.data[0]).toMatchObject({ eventType: "payout_claimed", signature: outcome.signature });
    const again = await refusal(fx.call("claimPosition", { positionPubkey }, { ownerPubkey: owner }));
    expect(again).toMatchObject({ status: 400, param: "positionPubkey", code: "already_claimed" });
  });

  it("an unsigned submission does not land and changes nothing", async () => {
    const fx = worldFixture();
    const p = claimableOf(fx, 1);
    const built = await fx.call(
      "claimPosition",
      { positionPubkey: fx.world.positionPubkey(p) },
      { ownerPubkey: fx.wallet(1) },
    );
    const outcome = await fx.chain.submitSigned(built.transaction);
    expect(outcome.err).not.toBeNull();
    expect(fx.world.isClaimable(p)).toBe(true);
  });

  it.each([
    ["a losing position", "losing", "not_claimable"],
    // As the live service: too early is "not settled yet", to be asked again later.
    ["an unresolved position", "open", "market_not_settled"],
  ])("refuses %s with 400 naming positionPubkey", async (_label, kind, code) => {
    const fx = worldFixture();
    const p = defined(
      fx.world.positionsOfWallet(0).find((x) => {
        if (x.closedAt !== undefined || x.claimedAt !== undefined) return false;
        const state = fx.world.marketState(fx.world.marketOf(x));
        return kind === "losing" ? state.result !== null && !fx.world.isWinning(x) : state.result === null;
      }),
    );
    const err = await refusal(
      fx.call("claimPosition", { positionPubkey: fx.world.positionPubkey(p) }, { ownerPubkey: fx.wallet(0) }),
    );
    expect(err).toMatchObject({ status: 400, param: "positionPubkey", code });
  });

  it("refuses a stranger and an unknown position", async () => {
    const fx = worldFixture();
    const p = claimableOf(fx, 0);
    const stranger = await refusal(
      fx.call("claimPosition", { positionPubkey: fx.world.positionPubkey(p) }, { ownerPubkey: fx.wallet(1) }),
    );
    expect(stranger).toMatchObject({ status: 400, param: "ownerPubkey" });
    const unknown = await refusal(
      fx.call(
        "claimPosition",
        { positionPubkey: Keypair.generate().publicKey.toBase58() },
        { ownerPubkey: fx.wallet(0) },
      ),
    );
    expect(unknown.status).toBe(404);
  });
});

describe("close", () => {
  it("closes an open position once the transaction lands, then refuses to close it again", async () => {
    const fx = worldFixture();
    const owner = fx.wallet(2);
    const p = defined(
      fx.world
        .positionsOfWallet(2)
        .find(
          (x) => x.closedAt === undefined && fx.world.marketState(fx.world.marketOf(x)).status === "open",
        ),
    );
    const positionPubkey = fx.world.positionPubkey(p);
    const built = await fx.call("closePosition", { positionPubkey }, { ownerPubkey: owner });
    expect(built.order).toMatchObject({
      positionPubkey,
      isBuy: false,
      contracts: String(p.contracts),
      newContracts: "0",
    });
    expect(BigInt(built.order.estimatedTotalFeeUsd)).toBe(
      BigInt(built.order.estimatedProtocolFeeUsd) + BigInt(built.order.estimatedVenueFeeUsd),
    );
    expect(
      (await fx.call("listPositions", { ownerPubkey: owner, end: 100 })).data.map(
        (x: { pubkey: string }) => x.pubkey,
      ),
    ).toContain(positionPubkey);
    await fx.chain.submitSigned(fx.sign(built.transaction, 2));
    const after = await fx.call("listPositions", { ownerPubkey: owner, end: 100 });
    expect(after.data.map((x: { pubkey: string }) => x.pubkey)).not.toContain(positionPubkey);
    const history = await fx.call("listHistory", { positionPubkey, end: 100 });
    expect(history.data[0].eventType).toBe("order_closed");
    const again = await refusal(fx.call("closePosition", { positionPubkey }, { ownerPubkey: owner }));
    expect(again).toMatchObject({ status: 400, param: "positionPubkey", code: "position_closed" });
  });

  it("close-all builds a sell per open position and a claim per winner of the owner", async () => {
    const fx = worldFixture();
    const owner = fx.wallet(3);
    const open = fx.world
      .positionsOfWallet(3)
      .filter(
        (x) =>
          x.closedAt === undefined &&
          x.claimedAt === undefined &&
          fx.world.marketState(fx.world.marketOf(x)).status === "open",
      );
    const winners = fx.world.positionsOfWallet(3).filter((x) => fx.world.isClaimable(x));
    const all = await fx.call("closeAllPositions", undefined, {
      ownerPubkey: owner,
      minSellPriceSlippageBps: 200,
    });
    const sells = all.data.filter((item: { order?: unknown }) => item.order !== undefined);
    const claims = all.data.filter((item: { position?: unknown }) => item.position !== undefined);
    expect(sells).toHaveLength(open.length);
    expect(winners.length).toBeGreaterThan(0);
    expect(
      claims.map((c: { position: { positionPubkey: string } }) => c.position.positionPubkey).sort(),
    ).toEqual(winners.map((w) => fx.world.positionPubkey(w)).sort());
    await expect(
      fx.call("closeAllPositions", undefined, { ownerPubkey: owner }),
      "the slippage is required",
    ).rejects.toThrow(/minSellPriceSlippageBps/);
  });

  it("refuses to close a claimed position and one whose market is closed", async () => {
    const fx = worldFixture();
    const owner = fx.wallet(0);
    const claimed = defined(fx.world.positionsOfWallet(0).find((x) => x.claimedAt !== undefined));
    const err = await refusal(
      fx.call("closePosition", { positionPubkey: fx.world.positionPubkey(claimed) }, { ownerPubkey: owner }),
    );
    expect(err).toMatchObject({ status: 400, code: "position_claimed" });
    const claimable = claimableOf(fx, 0);
    const err2 = await refusal(
      fx.call(
        "closePosition",
        { positionPubkey: fx.world.positionPubkey(claimable) },
        { ownerPubkey: owner },
      ),
    );
    expect(err2).toMatchObject({ status: 400, code: "market_not_open" });
  });
});

describe("trigger and recurring orders", () => {
  it("creates a trigger order only when its execute lands, then cancels it", async () => {
    const fx = worldFixture();
    const maker = fx.wallet(0);
    const usdc = fx.mint("usdc");
    const sol = fx.mint("sol");
    const created = await fx.call("createTriggerOrder", undefined, {
      inputMint: usdc,
      outputMint: sol,
      maker,
      payer: maker,
      params: { makingAmount: "10000000", takingAmount: "70000000" },
    });
    expect(fx.world.swapOrders.has(created.order)).toBe(false);
    const executed = await fx.call("executeTrigger", undefined, {
      requestId: created.requestId,
      signedTransaction: fx.sign(created.transaction, 0),
    });
    // As the live service may answer: a success without `code`.
    expect(executed).toEqual({ signature: expect.any(String), status: "Success" });
    expect(fx.world.swapOrders.get(created.order)?.status).toBe("open");
    const cancel = await fx.call("cancelTriggerOrder", undefined, { maker, order: created.order });
    await fx.call("executeTrigger", undefined, {
      requestId: cancel.requestId,
      signedTransaction: fx.sign(cancel.transaction, 0),
    });
    expect(fx.world.swapOrders.get(created.order)?.status).toBe("cancelled");
  });

  it("refuses a trigger order worth less than $5, and an execute with a foreign transaction", async () => {
    const fx = worldFixture();
    const maker = fx.wallet(0);
    const usdc = fx.mint("usdc");
    const sol = fx.mint("sol");
    const small = await refusal(
      fx.call("createTriggerOrder", undefined, {
        inputMint: usdc,
        outputMint: sol,
        maker,
        payer: maker,
        params: { makingAmount: "4999999", takingAmount: "1" },
      }),
    );
    expect(small).toMatchObject({ status: 400, param: "params.makingAmount", code: "order_too_small" });
    const a = await fx.call("createTriggerOrder", undefined, {
      inputMint: usdc,
      outputMint: sol,
      maker,
      payer: maker,
      params: { makingAmount: "5000000", takingAmount: "1" },
    });
    const b = await fx.call("createTriggerOrder", undefined, {
      inputMint: usdc,
      outputMint: sol,
      maker,
      payer: maker,
      params: { makingAmount: "6000000", takingAmount: "1" },
    });
    const mismatch = await refusal(
      fx.call("executeTrigger", undefined, {
        requestId: a.requestId,
        signedTransaction: fx.sign(b.transaction, 0),
      }),
    );
    expect(mismatch).toMatchObject({ status: 400, param: "signedTransaction" });
    const unknown = await refusal(
      fx.call("executeTrigger", undefined, {
        requestId: "nope",
        signedTransaction: fx.sign(b.transaction, 0),
      }),
    );
    expect(unknown).toMatchObject({ status: 400, param: "requestId" });
  });

  it.each([
    [
      "total below $100",
      { time: { inAmount: 99_000_000, numberOfOrders: 2, interval: 3_600 } },
      "params.time.inAmount",
    ],
    [
      "orders below $50 each",
      { time: { inAmount: 120_000_000, numberOfOrders: 3, interval: 3_600 } },
      "params.time.numberOfOrders",
    ],
    [
      "price plan below $100",
      { price: { depositAmount: 90_000_000, incrementUsdcValue: 50, interval: 3_600 } },
      "params.price.depositAmount",
    ],
    [
      "price increment below $50",
      { price: { depositAmount: 200_000_000, incrementUsdcValue: 40, interval: 3_600 } },
      "params.price.incrementUsdcValue",
    ],
  ])("refuses a recurring order with %s", async (_label, params, param) => {
    const fx = worldFixture();
    const user = fx.wallet(0);
    const err = await refusal(
      fx.call("createRecurringOrder", undefined, {
        user,
        inputMint: fx.mint("usdc"),
        outputMint: fx.mint("sol"),
        params,
      }),
    );
    expect(err).toMatchObject({ status: 400, param });
  });

  it("values recurring minimums with the token's price and decimals, and creates the order on execute", async () => {
    const fx = worldFixture();
    const user = fx.wallet(1);
    // 1 SOL at $150 in two orders of $75: above both minimums.
    const created = await fx.call("createRecurringOrder", undefined, {
      user,
      inputMint: fx.mint("sol"),
      outputMint: fx.mint("usdc"),
      params: { time: { inAmount: 1_000_000_000, numberOfOrders: 2, interval: 86_400 } },
    });
    const executed = await fx.call("executeRecurring", undefined, {
      requestId: created.requestId,
      signedTransaction: fx.sign(created.transaction, 1),
    });
    expect(executed.status).toBe("Success");
    expect(executed.error).toBeNull();
    expect(fx.world.swapOrders.get(executed.order)?.kind).toBe("recurring");
  });
});

describe("order lists and cancels beyond the spec", () => {
  async function placeTrigger(fx: ReturnType<typeof worldFixture>, makingAmount: string) {
    const maker = fx.wallet(0);
    const created = await fx.call("createTriggerOrder", undefined, {
      inputMint: fx.mint("usdc"),
      outputMint: fx.mint("sol"),
      maker,
      payer: maker,
      params: { makingAmount, takingAmount: "70000000", expiredAt: "1900000000" },
    });
    await fx.call("executeTrigger", undefined, {
      requestId: created.requestId,
      signedTransaction: fx.sign(created.transaction, 0),
    });
    return created.order as string;
  }

  it("lists a maker's trigger orders as active until they leave open, then as history with their status", async () => {
    const fx = worldFixture();
    const maker = fx.wallet(0);
    const first = await placeTrigger(fx, "10000000");
    const second = await placeTrigger(fx, "20000000");
    const active = await fx.call("getTriggerOrders", { user: maker, orderStatus: "active" });
    expect(active.orders.map((o: { orderKey: string }) => o.orderKey).sort()).toEqual([first, second].sort());
    expect(active.orders.find((o: { orderKey: string }) => o.orderKey === first)).toMatchObject({
      userPubkey: maker,
      makingAmount: "10",
      rawMakingAmount: "10000000",
      rawTakingAmount: "70000000",
      status: "open",
      expiredAt: 1_900_000_000,
    });
    expect(active).toMatchObject({ page: 1, totalPages: 1 });
    // Another maker sees none of them.
    const other = await fx.call("getTriggerOrders", { user: fx.wallet(1), orderStatus: "active" });
    expect(other.orders).toEqual([]);

    fx.world.settleOrder(first, "filled");
    const after = await fx.call("getTriggerOrders", { user: maker, orderStatus: "active" });
    expect(after.orders.map((o: { orderKey: string }) => o.orderKey)).toEqual([second]);
    const history = await fx.call("getTriggerOrders", { user: maker, orderStatus: "history" });
    expect(history.orders).toEqual([expect.objectContaining({ orderKey: first, status: "filled" })]);
    // A filled order cannot be cancelled.
    const refused = await refusal(fx.call("cancelTriggerOrder", undefined, { maker, order: first }));
    expect(refused).toMatchObject({ status: 400, code: "order_not_open", param: "order" });
  });

  it("cancels several trigger orders with one requestId, one transaction each", async () => {
    const fx = worldFixture();
    const maker = fx.wallet(0);
    const orders = [await placeTrigger(fx, "10000000"), await placeTrigger(fx, "20000000")];
    const built = await fx.call("cancelTriggerOrders", undefined, { maker, orders });
    expect(built.transactions).toHaveLength(2);
    for (const transaction of built.transactions)
      await fx.call("executeTrigger", undefined, {
        requestId: built.requestId,
        signedTransaction: fx.sign(transaction, 0),
      });
    expect(orders.map((o) => fx.world.swapOrders.get(o)?.status)).toEqual(["cancelled", "cancelled"]);
    // Nothing left to cancel: without `orders` the maker's open orders are none.
    const none = await refusal(fx.call("cancelTriggerOrders", undefined, { maker }));
    expect(none).toMatchObject({ status: 400, code: "no_open_orders", param: "maker" });
  });

  it("refuses to cancel another maker's order, naming the list entry", async () => {
    const fx = worldFixture();
    const order = await placeTrigger(fx, "10000000");
    const refused = await refusal(
      fx.call("cancelTriggerOrders", undefined, { maker: fx.wallet(1), orders: [order] }),
    );
    expect(refused).toMatchObject({ status: 400, code: "maker_mismatch", param: "maker" });
  });

  it("lists a recurring order under its type, cancels it, and lists it as history closed by the user", async () => {
    const fx = worldFixture();
    const user = fx.wallet(1);
    const created = await fx.call("createRecurringOrder", undefined, {
      user,
      inputMint: fx.mint("sol"),
      outputMint: fx.mint("usdc"),
      params: { time: { inAmount: 1_000_000_000, numberOfOrders: 2, interval: 86_400 } },
    });
    const executed = await fx.call("executeRecurring", undefined, {
      requestId: created.requestId,
      signedTransaction: fx.sign(created.transaction, 1),
    });
    const active = await fx.call("getRecurringOrders", {
      user,
      orderStatus: "active",
      recurringType: "time",
    });
    expect(active.time).toEqual([
      expect.objectContaining({
        orderKey: executed.order,
        rawInDeposited: "1000000000",
        numberOfOrders: 2,
        cycleFrequency: 86_400,
        status: "open",
      }),
    ]);
    const wrongType = await refusal(
      fx.call("cancelRecurringOrder", undefined, { user, order: executed.order, recurringType: "price" }),
    );
    expect(wrongType).toMatchObject({ status: 400, param: "recurringType" });
    const cancel = await fx.call("cancelRecurringOrder", undefined, { user, order: executed.order });
    const cancelled = await fx.call("executeRecurring", undefined, {
      requestId: cancel.requestId,
      signedTransaction: fx.sign(cancel.transaction, 1),
    });
    expect(cancelled).toMatchObject({ status: "Success", error: null, order: null });
    const history = await fx.call("getRecurringOrders", {
      user,
      orderStatus: "history",
      recurringType: "all",
    });
    expect(history.all).toEqual([
      expect.objectContaining({ orderKey: executed.order, status: "cancelled", userClosed: true }),
    ]);
  });
});

describe("swap build", () => {
  it("quotes from catalogue prices with slippage and returns instructions and a blockhash", async () => {
    const fx = worldFixture();
    const taker = fx.wallet(0);
    const built = await fx.call("buildSwap", {
      inputMint: fx.mint("usdc"),
      outputMint: fx.mint("sol"),
      amount: "150000000",
      taker,
      slippageBps: "100",
    });
    // $150 of USDC buys about 1 SOL, less the pool fee.
    expect(BigInt(built.outAmount)).toBeGreaterThan(990_000_000n);
    expect(BigInt(built.outAmount)).toBeLessThan(1_000_000_000n);
    expect(BigInt(built.otherAmountThreshold)).toBe((BigInt(built.outAmount) * 9_900n) / 10_000n);
    expect(built.blockhashWithMetadata.blockhash).toHaveLength(32);
  });

  it("refuses a mint it does not route", async () => {
    const fx = worldFixture();
    const err = await refusal(
      fx.call("buildSwap", {
        inputMint: Keypair.generate().publicKey.toBase58(),
        outputMint: fx.mint("sol"),
        amount: "1",
        taker: fx.wallet(0),
      }),
    );
    expect(err).toMatchObject({ status: 400, param: "inputMint" });
  });
});
