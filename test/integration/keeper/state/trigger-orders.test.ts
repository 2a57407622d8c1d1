import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Intent } from "../../../../src/core/intent.js";
import type { Ledger } from "../../../../src/keeper/state/ledger.js";
import { type LedgerAndQueues, ledgerAndQueues } from "../../../helpers/ledger-queues.js";

const wallet = "7YttLkHDoNj9wyDur5pM1ejNaAvT9X4eqaYcHQqtj2G5";
const ORDER = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin";
const USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const SOL = "So11111111111111111111111111111111111111112";

const create = (key: string): Intent => ({
  kind: "createTrigger",
  key,
  wallet,
  strategy: "limit-orders",
  inputMint: USDC,
  outputMint: SOL,
  makingAmount: "10000000",
  takingAmount: "1",
});
const cancel = (key: string, order: string): Intent => ({
  kind: "cancelTrigger",
  key,
  wallet,
  strategy: "limit-orders",
  order,
});

describe("ledger: trigger orders the service cannot list", () => {
  let ctx: LedgerAndQueues;
  let ledger: Ledger;
  beforeEach(async () => {
    ctx = await ledgerAndQueues("trigger-orders");
    ({ ledger } = ctx);
  });
  afterEach(() => ctx.cleanup());

  it("lists a create once confirmed with its order, and drops it once a cancel of that order is confirmed", async () => {
    await ledger.admit(create("limit-a-1"));
    await ledger.update("limit-a-1", { status: "built", order: ORDER });
    expect(await ledger.triggerOrders(wallet)).toEqual([]); // built is not placed
    await ledger.update("limit-a-1", { status: "confirmed" });
    expect(await ledger.triggerOrders(wallet)).toEqual([{ key: "limit-a-1", order: ORDER }]);

    // A failed cancel leaves it open; a confirmed one ends it.
    await ledger.admit(cancel("limit-a-1-cancel", ORDER));
    await ledger.update("limit-a-1-cancel", { status: "failed", error: "boom" });
    expect(await ledger.triggerOrders(wallet)).toHaveLength(1);
    await ledger.admit(cancel("other-cancel", ORDER));
    await ledger.update("other-cancel", { status: "confirmed" });
    expect(await ledger.triggerOrders(wallet)).toEqual([]);
  });

  it("a create that failed is never listed", async () => {
    await ledger.admit(create("limit-b-1"));
    await ledger.update("limit-b-1", { status: "built", order: ORDER });
    await ledger.update("limit-b-1", { status: "failed", error: "refused" });
    expect(await ledger.triggerOrders(wallet)).toEqual([]);
  });
});
