import { describe, expect, it, vi } from "vitest";
import { PriorityLanes, type QueuedPlan } from "../../../src/api/index.js";

/** A plan that grants turns only when the test says so, in the order they were asked for. */
function manualPlan() {
  const waiting: Array<{ name: string; grant: () => void }> = [];
  const log: string[] = [];
  const plan: QueuedPlan = {
    /** Every asker waits, as for a full window. */
    get queued() {
      return waiting.length;
    },
    acquire: () => new Promise<void>((resolve) => waiting.push({ name: "", grant: resolve })),
    async backOff(ms) {
      log.push(`backOff:${ms}`);
    },
  };
  return {
    plan,
    log,
    waiting,
    /** Grants the oldest turn asked for. */
    grantNext() {
      const next = waiting.shift();
      if (!next) throw new Error("nobody waits for a turn");
      next.grant();
    },
  };
}

/** Lets every settled promise's callbacks run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("priority lanes over one plan (targeted work ahead of the sweep)", () => {
  it("the sweep enters the plan one request at a time; targeted requests enter side by side", async () => {
    const { plan, waiting, grantNext } = manualPlan();
    const lanes = new PriorityLanes(plan, 0); // never stands aside: the line alone orders them
    const order: string[] = [];
    const take = (lane: "first" | "after", name: string) =>
      lanes[lane].acquire().then(() => {
        order.push(name);
      });

    const sweeps = [take("after", "sweep-1"), take("after", "sweep-2"), take("after", "sweep-3")];
    await settle();
    expect(waiting).toHaveLength(1);
    const targeted = [take("first", "claim-1"), take("first", "claim-2")];
    await settle();
    expect(waiting).toHaveLength(3);
    expect(lanes.firstWaiting).toBe(2);

    grantNext(); // sweep-1 was in the plan before the claims asked
    await settle();
    expect(waiting).toHaveLength(3); // sweep-2 now queued behind both claims
    grantNext();
    grantNext();
    await Promise.all(targeted);
    expect(lanes.firstWaiting).toBe(0);
    grantNext();
    await settle();
    grantNext();
    await Promise.all(sweeps);
    expect(order).toEqual(["sweep-1", "claim-1", "claim-2", "sweep-2", "sweep-3"]);
  });

  it("while targeted requests wait for a full window, the sweep's next request stands aside until they went", async () => {
    const { plan, waiting, grantNext } = manualPlan();
    const lanes = new PriorityLanes(plan, 60_000);
    const order: string[] = [];
    const take = (lane: "first" | "after", name: string) =>
      lanes[lane].acquire().then(() => {
        order.push(name);
      });
    const claims = [take("first", "claim-1"), take("first", "claim-2")];
    const sweep = take("after", "sweep-1");
    await settle();
    expect(waiting).toHaveLength(2); // the sweep is not in the line
    grantNext();
    const claim3 = take("first", "claim-3"); // a claim that comes later still goes first
    await settle();
    expect(waiting).toHaveLength(2);
    grantNext();
    grantNext();
    await Promise.all([...claims, claim3]);
    await settle();
    expect(waiting).toHaveLength(1); // the line emptied: the sweep went in
    grantNext();
    await sweep;
    expect(order).toEqual(["claim-1", "claim-2", "claim-3", "sweep-1"]);
  });

  it("a sweep request stands aside for a bounded time, then takes its place in the line", async () => {
    const { plan, waiting, grantNext } = manualPlan();
    const lanes = new PriorityLanes(plan, 20);
    void lanes.first.acquire();
    let sweepWent = false;
    const sweep = lanes.after.acquire().then(() => {
      sweepWent = true;
    });
    await settle();
    expect(waiting).toHaveLength(1);
    await vi.waitFor(() => expect(waiting).toHaveLength(2), { timeout: 5_000 });
    grantNext(); // the claim that was first in line
    grantNext();
    await sweep;
    expect(sweepWent).toBe(true);
  });

  it("a sweep request standing aside gives up when its signal aborts", async () => {
    const { plan, waiting } = manualPlan();
    const lanes = new PriorityLanes(plan, 60_000);
    void lanes.first.acquire();
    const stop = new AbortController();
    const held = lanes.after.acquire(stop.signal);
    await settle();
    stop.abort(new Error("stopping"));
    await expect(held).rejects.toThrow("stopping");
    expect(waiting).toHaveLength(1);
  });

  it("a sweep request held back gives up when its signal aborts, and the next one goes on", async () => {
    const { plan, waiting, grantNext } = manualPlan();
    const lanes = new PriorityLanes(plan);
    const entered = lanes.after.acquire();
    const stop = new AbortController();
    const held = lanes.after.acquire(stop.signal);
    const next = lanes.after.acquire();
    await settle();
    expect(waiting).toHaveLength(1);
    stop.abort(new Error("stopping"));
    await expect(held).rejects.toThrow("stopping");
    grantNext();
    await entered;
    await settle();
    expect(waiting).toHaveLength(1);
    grantNext();
    await expect(next).resolves.toBeUndefined();
  });

  it("a 429 from either lane backs the whole plan off", async () => {
    const { plan, log } = manualPlan();
    const lanes = new PriorityLanes(plan);
    await lanes.first.backOff(1000);
    await lanes.after.backOff(2000);
    expect(log).toEqual(["backOff:1000", "backOff:2000"]);
  });
});
