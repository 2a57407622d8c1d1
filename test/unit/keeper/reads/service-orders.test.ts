import { describe, expect, it } from "vitest";
import type { RecurringOrdersParams } from "../../../../src/core/schemas/recurring.js";
import type { TriggerOrdersParams } from "../../../../src/core/schemas/trigger.js";
import {
  fromRecurringOrder,
  fromTriggerOrder,
  listedOrderState,
} from "../../../../src/core/service-orders.js";
import {
  listRecurringOrders,
  listTriggerOrders,
  MAX_ACTIVE_PAGES,
  orderListsFor,
} from "../../../../src/keeper/reads/service-orders.js";
import { captureLogger } from "../../../helpers/capture-logger.js";
import { fakePubkey, WALLET } from "../../../helpers/fixtures.js";

const USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const SOL = "So11111111111111111111111111111111111111112";

const triggerOrder = (orderKey: string, status: string) => ({
  orderKey,
  userPubkey: WALLET,
  inputMint: USDC,
  outputMint: SOL,
  makingAmount: "10",
  takingAmount: "0.07",
  rawMakingAmount: "10000000",
  rawTakingAmount: "70000000",
  status,
  createdAt: "2026-01-01T00:00:00.000Z",
});

/**
 * A trigger API answering from pages of orders per status, counting its requests; without
 * `totalPages` when told to leave it out.
 */
function fakeTrigger(
  pages: Record<"active" | "history", ReturnType<typeof triggerOrder>[][]>,
  withTotalPages = true,
) {
  const calls: TriggerOrdersParams[] = [];
  return {
    calls,
    getOrders: async (params: TriggerOrdersParams) => {
      calls.push(params);
      const list = pages[params.orderStatus];
      const page = Number(params.page ?? 1);
      return { orders: list[page - 1] ?? [], page, ...(withTotalPages ? { totalPages: list.length } : {}) };
    },
  };
}

describe("service order states", () => {
  it.each([
    ["Open", "open"],
    ["active", "open"],
    ["Filled", "filled"],
    ["Completed", "completed"],
    ["Cancelled", "cancelled"],
    ["canceled", "cancelled"],
    ["Expired", "expired"],
    ["Paused", "unknown"],
  ])("%s reads as %s", (word, state) => {
    expect(listedOrderState(word)).toBe(state);
  });

  it("a trigger order completed is filled; an unknown word is open while listed active", () => {
    expect(fromTriggerOrder(triggerOrder("a".repeat(32), "Completed"), "history")).toMatchObject({
      state: "filled",
      inAmountRaw: "10000000",
      outAmountRaw: "70000000",
      createdAt: 1_767_225_600,
    });
    expect(fromTriggerOrder(triggerOrder("a".repeat(32), "Pending"), "active").state).toBe("open");
    expect(fromTriggerOrder(triggerOrder("a".repeat(32), "Pending"), "history").state).toBe("unknown");
  });

  it("a recurring order without status reads from its list: active open, history completed or user-closed", () => {
    const base = {
      orderKey: "b".repeat(32),
      userPubkey: WALLET,
      inputMint: USDC,
      outputMint: SOL,
      createdAt: 1_767_225_600,
    };
    expect(fromRecurringOrder(base, "active").state).toBe("open");
    expect(fromRecurringOrder(base, "history").state).toBe("completed");
    expect(fromRecurringOrder({ ...base, userClosed: true }, "history").state).toBe("cancelled");
  });
});

describe("listing a wallet's orders", () => {
  it("reads every page of open orders and the first page of history: one request a page", async () => {
    const [a, b, c, d] = [fakePubkey("T"), fakePubkey("T"), fakePubkey("T"), fakePubkey("T")];
    const api = fakeTrigger({
      active: [[triggerOrder(a, "open"), triggerOrder(b, "open")], [triggerOrder(c, "open")]],
      history: [[triggerOrder(d, "filled")], [triggerOrder(fakePubkey("T"), "filled")]],
    });
    const listed = await listTriggerOrders(api, WALLET);
    expect(listed.map((o) => [o.order, o.state])).toEqual([
      [a, "open"],
      [b, "open"],
      [c, "open"],
      [d, "filled"],
    ]);
    expect(api.calls).toEqual([
      { user: WALLET, orderStatus: "active", page: 1 },
      { user: WALLET, orderStatus: "active", page: 2 },
      { user: WALLET, orderStatus: "history", page: 1 },
    ]);
  });

  // Strategies take an order on neither list as no longer open, so a list is whole or not at all.
  it("without totalPages, reads pages of open orders until an empty one", async () => {
    const [a, b] = [fakePubkey("T"), fakePubkey("T")];
    const api = fakeTrigger(
      { active: [[triggerOrder(a, "open")], [triggerOrder(b, "open")]], history: [] },
      false,
    );
    expect((await listTriggerOrders(api, WALLET)).map((o) => o.order)).toEqual([a, b]);
    expect(api.calls.map((c) => [c.orderStatus, c.page])).toEqual([
      ["active", 1],
      ["active", 2],
      ["active", 3],
      ["history", 1],
    ]);
  });

  it.each([
    ["more pages of open orders than it reads", true],
    ["pages of open orders without end, and no totalPages", false],
  ])("%s: the list is not read at all rather than in part", async (_label, withTotalPages) => {
    const pages = Array.from({ length: MAX_ACTIVE_PAGES + 1 }, () => [triggerOrder(fakePubkey("T"), "open")]);
    const { logger, lines } = captureLogger();
    const api = fakeTrigger({ active: pages, history: [] }, withTotalPages);
    const lists = orderListsFor(
      ["trigger"],
      { trigger: api, recurring: { getOrders: async () => ({}) } },
      logger,
    );
    expect(await lists.triggerOrders?.(WALLET)).toBeUndefined();
    expect(api.calls).toHaveLength(MAX_ACTIVE_PAGES);
    expect(lines()).toEqual([
      expect.objectContaining({
        msg: "could not read the trigger orders; this poll goes without them",
        err: expect.objectContaining({
          message: `more than ${MAX_ACTIVE_PAGES} pages of open orders: a part of the list would hide open orders`,
        }),
      }),
    ]);
  });

  it("an order that closed between the two requests counts as in history", async () => {
    const a = fakePubkey("T");
    const api = fakeTrigger({
      active: [[triggerOrder(a, "open")]],
      history: [[triggerOrder(a, "cancelled")]],
    });
    expect((await listTriggerOrders(api, WALLET)).map((o) => o.state)).toEqual(["cancelled"]);
  });

  it("asks for time-based recurring orders and reads them under `time`", async () => {
    const calls: RecurringOrdersParams[] = [];
    const order = {
      orderKey: fakePubkey("R"),
      userPubkey: WALLET,
      inputMint: USDC,
      outputMint: SOL,
      createdAt: 1,
    };
    const listed = await listRecurringOrders(
      {
        getOrders: async (params: RecurringOrdersParams) => {
          calls.push(params);
          return params.orderStatus === "active" ? { time: [order], totalPages: 1 } : {};
        },
      },
      WALLET,
    );
    expect(listed).toEqual([expect.objectContaining({ order: order.orderKey, state: "open" })]);
    expect(calls.map((c) => [c.orderStatus, c.recurringType])).toEqual([
      ["active", "time"],
      ["history", "time"],
    ]);
  });

  it("lists only the order lists asked for: none when none is", async () => {
    const requests: string[] = [];
    const client = {
      trigger: {
        getOrders: async () => {
          requests.push("trigger");
          return { orders: [] };
        },
      },
      recurring: {
        getOrders: async () => {
          requests.push("recurring");
          return {};
        },
      },
    };
    expect(orderListsFor([], client)).toEqual({});
    const both = orderListsFor(["trigger", "recurring"], client);
    await both.triggerOrders?.(WALLET);
    await both.recurringOrders?.(WALLET);
    const onlyRecurring = orderListsFor(["recurring"], client);
    expect(onlyRecurring.triggerOrders).toBeUndefined();
    expect(requests).toEqual(["trigger", "trigger", "recurring", "recurring"]);
  });
});

describe("an order list that cannot be read", () => {
  it("is left out of the poll, logged, instead of failing it", async () => {
    const { logger, lines } = captureLogger();
    const lists = orderListsFor(
      ["trigger"],
      {
        trigger: {
          getOrders: async () => {
            throw new Error("503 from getTriggerOrders");
          },
        },
        recurring: { getOrders: async () => ({}) },
      },
      logger,
    );
    expect(await lists.triggerOrders?.(WALLET)).toBeUndefined();
    expect(lines()).toEqual([
      expect.objectContaining({
        msg: "could not read the trigger orders; this poll goes without them",
        wallet: WALLET,
      }),
    ]);
  });
});
