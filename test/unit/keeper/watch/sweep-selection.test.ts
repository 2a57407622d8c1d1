import { describe, expect, it } from "vitest";
import type { WalletActivity } from "../../../../src/keeper/state/poll-record.js";
import { isIdle, selectSweep } from "../../../../src/keeper/watch/sweep-selection.js";

const NOW = 1_700_000_000;
const INTERVAL = 60;

describe("sweep selection: idle wallets", () => {
  it.each([
    ["nothing held, no pending orders", { positionsAt: NOW, held: 0, otherOpen: 0, pendingOrders: 0 }, true],
    ["a position held", { positionsAt: NOW, held: 1, otherOpen: 0, pendingOrders: 0 }, false],
    ["a pending order", { positionsAt: NOW, held: 0, otherOpen: 0, pendingOrders: 2 }, false],
    [
      "an intent in flight or a swap order open",
      { positionsAt: NOW, held: 0, otherOpen: 1, pendingOrders: 0 },
      false,
    ],
    ["orders never listed", { positionsAt: NOW, held: 0, otherOpen: 0 }, false],
    ["never polled", undefined, false],
  ])("%s: idle %s", (_, activity, idle) => {
    expect(isIdle(activity as WalletActivity | undefined)).toBe(idle);
  });

  it("an idle wallet is swept once every `multiple` sweeps, wherever in its sweep it was polled", () => {
    const multiple = 4;
    for (const offset of [0, 1, 30, 59]) {
      // Polled `offset` seconds into sweep 0; which of the next sweeps take it?
      let polledAt = offset;
      const taken: number[] = [];
      for (let sweep = 1; sweep <= 12; sweep++) {
        const now = sweep * INTERVAL;
        const activity = new Map([["w", { positionsAt: polledAt, held: 0, otherOpen: 0, pendingOrders: 0 }]]);
        const { due } = selectSweep(["w"], activity, {
          nowSeconds: now,
          intervalSeconds: INTERVAL,
          multiple,
        });
        if (due.includes("w")) {
          taken.push(sweep);
          polledAt = now + offset;
        }
      }
      expect(taken, `polled ${offset} s into its sweep`).toEqual([4, 8, 12]);
    }
  });

  it("busy wallets are swept every time; idle ones not due are listed apart", () => {
    const activity = new Map<string, WalletActivity>([
      ["idle-fresh", { positionsAt: NOW - 30, held: 0, otherOpen: 0, pendingOrders: 0 }],
      ["idle-due", { positionsAt: NOW - 4 * INTERVAL, held: 0, otherOpen: 0, pendingOrders: 0 }],
      ["holder", { positionsAt: NOW - 30, held: 2, otherOpen: 0, pendingOrders: 0 }],
      ["orders", { positionsAt: NOW - 30, held: 0, otherOpen: 0, pendingOrders: 1 }],
    ]);
    const wallets = ["idle-fresh", "idle-due", "holder", "orders", "unknown"];
    expect(
      selectSweep(wallets, activity, { nowSeconds: NOW, intervalSeconds: INTERVAL, multiple: 4 }),
    ).toEqual({
      due: ["idle-due", "holder", "orders", "unknown"],
      idleSkipped: ["idle-fresh"],
    });
  });

  it.each([
    ["multiple 1", { intervalSeconds: INTERVAL, multiple: 1 }],
    ["no interval yet (the first tick since start)", { intervalSeconds: undefined, multiple: 4 }],
  ])("%s: every wallet", (_, options) => {
    const activity = new Map([["w", { positionsAt: NOW, held: 0, otherOpen: 0, pendingOrders: 0 }]]);
    expect(selectSweep(["w"], activity, { nowSeconds: NOW, ...options }).due).toEqual(["w"]);
  });
});
