import { getAssociatedTokenAddressSync } from "@solana/spl-token";
import { Connection, type Keypair, PublicKey, VersionedTransaction } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningSandbox } from "../../../../src/sandbox/index.js";
import { DrivenClock } from "../../../../src/sandbox/world/clock.js";
import { startCheckedSandbox } from "../../../helpers/checked-sandbox.js";

/**
 * POST /orders, POST /execute, POST /orders/execute and Forecast (bisonfi) markets on the local chain:
 * built over HTTP, signed with the wallet's key, executed through the service; balances read on chain.
 */
// biome-ignore lint/suspicious/noExplicitAny: the answers are read field by field, checked by the assertions
type Answer = Record<string, any>;
let sandbox: RunningSandbox;
let connection: Connection;

beforeAll(async () => {
  sandbox = await startCheckedSandbox({
    port: 0,
    clock: new DrivenClock(),
    rateLimit: false,
    chain: { slotMs: 25 },
    walletFunding: { sol: 10, usdcRaw: 1_000_000_000n },
  });
  connection = new Connection(sandbox.chain?.url ?? "", { commitment: "confirmed" });
});
afterAll(() => sandbox.close());

async function call(method: string, path: string, body?: unknown) {
  const response = await fetch(`${sandbox.url}${path}`, {
    method,
    headers: {
      "x-api-key": sandbox.apiKey,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Answer };
}

async function ok(method: string, path: string, body?: unknown) {
  const answer = await call(method, path, body);
  expect(answer.status, `${method} ${path}: ${JSON.stringify(answer.body)}`).toBe(200);
  return answer.body;
}

const signed = (base64: string, signer: Keypair): string => {
  const tx = VersionedTransaction.deserialize(Buffer.from(base64, "base64"));
  tx.sign([signer]);
  return Buffer.from(tx.serialize()).toString("base64");
};

async function usdcOf(owner: PublicKey): Promise<bigint> {
  const account = getAssociatedTokenAddressSync(new PublicKey(sandbox.usdcMint), owner, true);
  return BigInt((await connection.getTokenAccountBalance(account)).value.amount);
}

const forecastEvents = () => ok("GET", "/prediction/v1/events?provider=bisonfi&includeMarkets=true");

async function openForecast(owner: Keypair, marketId: string, depositAmount = "20000000") {
  const build = await ok("POST", "/prediction/v1/orders", {
    ownerPubkey: owner.publicKey.toBase58(),
    marketId,
    isYes: true,
    isBuy: true,
    depositAmount,
  });
  const answer = await ok("POST", "/prediction/v1/execute", {
    signedTransaction: signed(build.transaction, owner),
    context: build.execution.context,
  });
  return { build, answer };
}

describe("Forecast markets and the execute endpoints", () => {
  it("lists Forecast events whose markets carry lifecycleStatus, tradable, outcomeMint, outcomeSide, marketPda", async () => {
    const events = (await forecastEvents()).data as Answer[];
    expect(events.length).toBeGreaterThan(0);
    const markets = events.flatMap((e) => e.markets);
    expect(new Set(markets.map((m) => m.lifecycleStatus))).toEqual(new Set(["open", "resolving", "settled"]));
    for (const m of markets) {
      expect(m).toMatchObject({ tradable: m.lifecycleStatus === "open" });
      expect(["up", "down"]).toContain(m.outcomeSide);
      expect(typeof m.outcomeMint).toBe("string");
      expect(typeof m.marketPda).toBe("string");
    }
  });

  it("opens a Forecast position through execute: USDC leaves the wallet, the position exists, the build names the service's key", async () => {
    const owner = sandbox.world.walletKeypair(0);
    const market = (await forecastEvents()).data[0].markets[0];
    const before = await usdcOf(owner.publicKey);
    const { build, answer } = await openForecast(owner, market.marketId);
    expect(build).toMatchObject({
      execution: { endpoint: "/prediction/v1/execute", context: { type: "bisonfi_swap" } },
      executionModel: "atomic_swap",
      settlement: "auto",
    });
    expect(build.requiredSigners).toEqual([
      owner.publicKey.toBase58(),
      sandbox.chain?.assets.vault.publicKey.toBase58(),
    ]);
    expect(build.jupiterSwapRequestId).toEqual(expect.any(String));
    expect(answer).toMatchObject({ status: "Success", error: null, signature: expect.any(String) });
    const paid = Number(build.order.orderCostUsd) + Number(build.order.estimatedTotalFeeUsd);
    expect(await usdcOf(owner.publicKey)).toBe(before - BigInt(paid));
    const position = await ok(
      "GET",
      `/prediction/v1/positions?ownerPubkey=${owner.publicKey.toBase58()}&marketId=${market.marketId}`,
    );
    expect(position.data).toHaveLength(1);
    expect(position.data[0]).toMatchObject({ claimable: false, contracts: build.order.contracts });
  });

  it("refuses an order under $5, over $250 on Forecast, and a context that is not the transaction's", async () => {
    const owner = sandbox.world.walletKeypair(1);
    const market = (await forecastEvents()).data[1].markets[0];
    const body = {
      ownerPubkey: owner.publicKey.toBase58(),
      marketId: market.marketId,
      isYes: true,
      isBuy: true,
    };
    const small = await call("POST", "/prediction/v1/orders", { ...body, depositAmount: "4999999" });
    expect(small).toMatchObject({ status: 400, body: { code: "order_too_small", param: "depositAmount" } });
    const large = await call("POST", "/prediction/v1/orders", { ...body, depositAmount: "250000001" });
    expect(large).toMatchObject({ status: 400, body: { code: "order_too_large" } });
    const a = await ok("POST", "/prediction/v1/orders", { ...body, depositAmount: "10000000" });
    const other = await ok("POST", "/prediction/v1/orders", {
      ...body,
      marketId: market.marketId.replace("-UP", "-DOWN"),
      depositAmount: "10000000",
    });
    const mismatch = await call("POST", "/prediction/v1/execute", {
      signedTransaction: signed(a.transaction, owner),
      context: other.execution.context,
    });
    expect(mismatch).toMatchObject({ status: 400, body: { code: "context_mismatch", param: "context" } });
  });

  it("a Forecast sell sent straight to the RPC does not land; through execute it pays the owner", async () => {
    const owner = sandbox.world.walletKeypair(2);
    const market = (await forecastEvents()).data[0].markets[1];
    await openForecast(owner, market.marketId);
    const listed = await ok(
      "GET",
      `/prediction/v1/positions?ownerPubkey=${owner.publicKey.toBase58()}&marketId=${market.marketId}`,
    );
    const pubkey = listed.data[0].pubkey as string;
    const close = await ok("DELETE", `/prediction/v1/positions/${pubkey}`, {
      ownerPubkey: owner.publicKey.toBase58(),
    });
    expect(close).toMatchObject({
      executionModel: "atomic_swap",
      execution: { context: { type: "bisonfi_swap" } },
    });
    const bytes = signed(close.transaction, owner);
    const before = await usdcOf(owner.publicKey);
    await expect(
      connection.sendRawTransaction(Buffer.from(bytes, "base64"), { skipPreflight: false }),
    ).rejects.toThrow(/signature/i);
    const sent = await call("POST", "/prediction/v1/orders/execute", { signedTransaction: bytes });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    expect((await connection.getSignatureStatus(sent.body.signature)).value?.err).toBeNull();
    expect(await usdcOf(owner.publicKey)).toBe(
      before + BigInt(close.order.orderCostUsd) - BigInt(close.order.estimatedTotalFeeUsd),
    );
    // The same bytes again: the same signature, nothing paid twice.
    const again = await ok("POST", "/prediction/v1/execute", {
      signedTransaction: bytes,
      context: close.execution.context,
    });
    expect(again).toMatchObject({ status: "Success", signature: sent.body.signature });
    expect(await usdcOf(owner.publicKey)).toBe(
      before + BigInt(close.order.orderCostUsd) - BigInt(close.order.estimatedTotalFeeUsd),
    );
  });

  it("a keeper-filled close names a create_order context and only the owner as signer", async () => {
    const owner = sandbox.world.walletKeypair(3);
    const positions = await ok(
      "GET",
      `/prediction/v1/positions?ownerPubkey=${owner.publicKey.toBase58()}&end=50`,
    );
    const open = (positions.data as Answer[]).find(
      (p) => p.sellPriceUsd !== null && !p.marketId.startsWith("BF-"),
    );
    const close = await ok("DELETE", `/prediction/v1/positions/${open?.pubkey}`, {
      ownerPubkey: owner.publicKey.toBase58(),
    });
    expect(close).toMatchObject({
      execution: { endpoint: "/prediction/v1/execute", context: { type: "create_order" } },
      executionModel: null,
      settlement: null,
      requiredSigners: [owner.publicKey.toBase58()],
      jupiterSwapRequestId: null,
    });
  });

  it("settles a resolved Forecast winner without a claim; a claim is answered that none is required", async () => {
    const owner = sandbox.world.walletKeypair(1);
    const market = (await forecastEvents()).data[1].markets[0];
    await openForecast(owner, market.marketId, "30000000");
    const listed = await ok(
      "GET",
      `/prediction/v1/positions?ownerPubkey=${owner.publicKey.toBase58()}&marketId=${market.marketId}`,
    );
    const position = listed.data[0];
    const before = await usdcOf(owner.publicKey);
    sandbox.world.resolveMarket(market.marketId, "yes");
    const claim = await call("POST", `/prediction/v1/positions/${position.pubkey}/claim`, {
      ownerPubkey: owner.publicKey.toBase58(),
    });
    expect(claim).toMatchObject({
      status: 400,
      body: { code: "no_claim_required", param: "positionPubkey" },
    });
    // A winning contract pays $1: the exact count in micro-contracts is the payout in micro-USD.
    const payout = BigInt(position.contractsMicro);
    for (let i = 0; i < 200 && (await usdcOf(owner.publicKey)) !== before + payout; i++)
      await new Promise((resolve) => setTimeout(resolve, 25));
    expect(await usdcOf(owner.publicKey)).toBe(before + payout);
    const after = await ok(
      "GET",
      `/prediction/v1/positions?ownerPubkey=${owner.publicKey.toBase58()}&marketId=${market.marketId}`,
    );
    expect(after.data[0]).toMatchObject({ claimed: true, claimable: false });
  });

  // Last: it moves the world's clock days ahead.
  it("settles a Forecast winner whose market resolved by its schedule, once positions are read", async () => {
    const owner = sandbox.world.walletKeypair(3);
    const event = (await forecastEvents()).data[0];
    const market = event.markets[0];
    await openForecast(owner, market.marketId);
    const before = await usdcOf(owner.publicKey);
    const unclaimedBefore = new Set(
      sandbox.world
        .positionsOfWallet(3)
        .filter((p) => p.claimedAt === undefined)
        .map((p) => p.index),
    );
    const forecastIndex = sandbox.world
      .positionsOfWallet(3)
      .find((p) => sandbox.world.marketOf(p).marketId === market.marketId)?.index;
    const record = sandbox.world.findMarket(market.marketId);
    if (record === undefined) throw new Error("no market");
    // Past its close and resolution: the walk decides the side; hold the price so "up" wins.
    sandbox.world.setPrice(market.marketId, 900_000);
    const clock = sandbox.world.clock as DrivenClock;
    clock.advance(record.resolveTime - sandbox.world.now() + 60);
    const path = `/prediction/v1/positions?ownerPubkey=${owner.publicKey.toBase58()}&marketId=${market.marketId}`;
    const position = (await ok("GET", path)).data[0];
    // A winning contract pays $1: the exact count in micro-contracts is the payout in micro-USD.
    const payout = BigInt(position.contractsMicro);
    // Days on, the service's own free claim also pays the wallet's other winners: counted apart.
    const paidByService = () =>
      sandbox.world
        .positionsOfWallet(3)
        .filter((p) => unclaimedBefore.has(p.index) && p.claimedAt !== undefined && p.index !== forecastIndex)
        .reduce((sum, p) => sum + BigInt(p.claimedMicro ?? 0), 0n);
    const expected = () => before + payout + paidByService();
    // The service's claims keep landing while the balance is read: a read counts only when no claim
    // landed during it (the expected sum is the same before and after), else it is read again.
    const balanceSettles = async () => {
      let seen = { balance: -1n, expected: expected() };
      for (let i = 0; i < 400; i++) {
        const expectedBefore = expected();
        const balance = await usdcOf(owner.publicKey);
        if (expected() === expectedBefore) {
          seen = { balance, expected: expectedBefore };
          if (balance === expectedBefore) break;
        }
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect(seen.balance).toBe(seen.expected);
    };
    await balanceSettles();
    // Read again: paid once.
    await ok("GET", path);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await balanceSettles();
    expect((await ok("GET", path)).data[0]).toMatchObject({ claimed: true, claimable: false });
  });
});
