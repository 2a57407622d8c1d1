import { VersionedTransaction } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, createApiClient } from "../../../src/api/client.js";
import type { EndpointName } from "../../../src/api/endpoints.js";
import type { OrderListKind } from "../../../src/core/strategy-hooks.js";
import { orderListsFor } from "../../../src/keeper/reads/service-orders.js";
import { type SnapshotSource, takeSnapshot } from "../../../src/keeper/reads/snapshot.js";
import type { RunningSandbox } from "../../../src/sandbox/index.js";
import { DrivenClock } from "../../../src/sandbox/world/clock.js";
import { captureLogger } from "../../helpers/capture-logger.js";
import { startCheckedSandbox } from "../../helpers/checked-sandbox.js";
import { startStub } from "./stub-server.js";

/**
 * A poll's snapshot against the sandbox: the order lists are read through the client only where the
 * strategies need them (`snapshotNeeds`), in a counted number of requests, and carry the sandbox's own states.
 */
let sandbox: RunningSandbox;
let client: ApiClient;
let wallet: string;
const requests: EndpointName[] = [];

beforeAll(async () => {
  sandbox = await startCheckedSandbox({ port: 0, clock: new DrivenClock(), rateLimit: false });
  client = createApiClient({
    baseUrl: sandbox.url,
    apiKey: sandbox.apiKey,
    hooks: { onRequest: (o) => requests.push(o.endpoint) },
  });
  wallet = sandbox.wallets[2] as string;
  const tokens = await client.tokens.search({ query: "USDC,SOL" });
  const mintOf = (symbol: string) => tokens.find((t) => t.symbol === symbol)?.id ?? "";
  const signed = (base64: string) => {
    const tx = VersionedTransaction.deserialize(Buffer.from(base64, "base64"));
    tx.sign([sandbox.world.walletKeypair(2)]);
    return Buffer.from(tx.serialize()).toString("base64");
  };
  for (const making of ["10000000", "20000000"]) {
    const built = await client.trigger.createOrder({
      inputMint: mintOf("USDC"),
      outputMint: mintOf("SOL"),
      maker: wallet,
      payer: wallet,
      params: { makingAmount: making, takingAmount: "50000000" },
    });
    await client.trigger.execute({
      requestId: built.requestId,
      signedTransaction: signed(built.transaction),
    });
  }
  const recurring = await client.recurring.createOrder({
    user: wallet,
    inputMint: mintOf("USDC"),
    outputMint: mintOf("SOL"),
    params: { time: { inAmount: 200_000_000, numberOfOrders: 2, interval: 86_400 } },
  });
  await client.recurring.execute({
    requestId: recurring.requestId,
    signedTransaction: signed(recurring.transaction),
  });
});
afterAll(() => sandbox.close());

async function snapshotWith(lists: OrderListKind[], of = wallet) {
  const source: SnapshotSource = {
    positions: async () => [],
    pendingOrders: async () => [],
    ...orderListsFor(lists, client),
  };
  requests.length = 0;
  return takeSnapshot({ wallet: of, withOrders: false, source, inFlight: [], nowSeconds: 0 });
}

describe("order lists in a poll's snapshot", () => {
  it("reads the trigger and recurring lists where strategies need them: two requests each", async () => {
    const [filled] = [...sandbox.world.swapOrders.values()].filter(
      (o) => o.kind === "trigger" && o.maker === wallet,
    );
    sandbox.world.settleOrder(filled?.order ?? "", "filled");
    const snap = await snapshotWith(["trigger", "recurring"]);
    expect(requests.filter((r) => r === "getTriggerOrders")).toHaveLength(2);
    expect(requests.filter((r) => r === "getRecurringOrders")).toHaveLength(2);
    expect(requests).toHaveLength(4);
    const states = (snap.listedTriggerOrders ?? []).map((o) => o.state).sort();
    expect(states).toEqual(["filled", "open"]);
    expect(snap.listedTriggerOrders?.find((o) => o.order === filled?.order)).toMatchObject({
      state: "filled",
      inAmountRaw: filled?.inAmountRaw.toString(),
      outAmountRaw: "50000000",
    });
    expect(snap.listedRecurringOrders).toEqual([
      expect.objectContaining({ state: "open", inAmountRaw: "200000000" }),
    ]);
  });

  it("reads no list when no strategy needs one", async () => {
    const snap = await snapshotWith([]);
    expect(requests).toEqual([]);
    expect(snap).not.toHaveProperty("listedTriggerOrders");
    expect(snap).not.toHaveProperty("listedRecurringOrders");
  });

  it("tells a list read and empty ([]) from a list not read on this poll (absent)", async () => {
    const empty = await snapshotWith(["recurring"], sandbox.wallets[3] as string);
    expect(empty.listedRecurringOrders).toEqual([]);
    sandbox.faults.configure("getRecurringOrders", { errorRate: 1 });
    try {
      const failed = await snapshotWith(["recurring"]);
      expect(requests.filter((r) => r === "getRecurringOrders").length).toBeGreaterThan(0);
      expect(failed).not.toHaveProperty("listedRecurringOrders");
    } finally {
      sandbox.faults.clear();
    }
  });
});

describe("an order list the service fails to answer", () => {
  it("is logged by its message and status, without a stack trace", async () => {
    const stub = await startStub((_q, r) => r.code(503).send("<html>upstream down</html>"));
    try {
      const { logger, lines } = captureLogger("info");
      const failing = createApiClient({ baseUrl: stub.url, retries: 0 });
      const lists = orderListsFor(["trigger"], failing, logger);
      expect(await lists.triggerOrders?.(wallet)).toBeUndefined();
      const line = lines().find(
        (l) => l.msg === "could not read the trigger orders; this poll goes without them",
      );
      expect(line).toMatchObject({
        err: { message: "getTriggerOrders: HTTP 503: <html>upstream down</html>" },
        status: 503,
        wallet,
      });
      expect(JSON.stringify(line)).not.toContain("stack");
    } finally {
      await stub.close();
    }
  });
});
