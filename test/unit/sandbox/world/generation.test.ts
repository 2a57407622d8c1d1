import { describe, expect, it } from "vitest";
import { HISTORY_EVENT_TYPES } from "../../../../src/core/schemas/prediction.js";
import { DrivenClock } from "../../../../src/sandbox/world/clock.js";
import { queryHistory } from "../../../../src/sandbox/world/history.js";
import { WORLD_CATEGORIES } from "../../../../src/sandbox/world/topics.js";
import { marketView, positionView } from "../../../../src/sandbox/world/views.js";
import { createWorld } from "../../../../src/sandbox/world/world.js";
import { defined } from "./helpers.js";

const fingerprint = (seed: number) => {
  const world = createWorld({ seed, clock: new DrivenClock() });
  return JSON.stringify({
    markets: world.markets.map((m) => marketView(world, m)),
    positions: world.positions.slice(0, 12).map((p) => positionView(world, p)),
    wallets: world.wallets(),
  });
};

describe("world generation", () => {
  it("is deterministic for a seed and differs between seeds", () => {
    expect(fingerprint(7)).toBe(fingerprint(7));
    expect(fingerprint(7)).not.toBe(fingerprint(8));
  });

  it("defaults to seed 1 and four sandbox wallets with usable keypairs", () => {
    const world = createWorld({ clock: new DrivenClock() });
    expect(world.seed).toBe(1);
    expect(world.wallets()).toHaveLength(4);
    expect(world.walletKeypair(2).publicKey.toBase58()).toBe(world.wallets()[2]);
  });

  it("leaves about idleWalletPct of the wallets past the first four empty, the same ones for a seed", () => {
    const holders = (seed: number, idleWalletPct?: number) =>
      new Set(
        createWorld({
          seed,
          clock: new DrivenClock(),
          walletCount: 2_000,
          ...(idleWalletPct === undefined ? {} : { idleWalletPct }),
        }).positions.map((p) => p.ownerIndex),
      );
    expect(holders(1).size).toBe(2_000);
    const half = holders(1, 50);
    for (const rich of [0, 1, 2, 3]) expect(half.has(rich)).toBe(true);
    expect(half.size).toBeGreaterThan(900);
    expect(half.size).toBeLessThan(1_100);
    expect([...holders(1, 50)]).toEqual([...half]);
    expect([...holders(2, 50)]).not.toEqual([...half]);
    expect(holders(1, 100).size).toBe(4);
    expect(() => createWorld({ clock: new DrivenClock(), idleWalletPct: 101 })).toThrow(
      "idleWalletPct must be between 0 and 100",
    );
  });

  it("holds events in every category from both providers it imitates", () => {
    const world = createWorld({ clock: new DrivenClock() });
    for (const provider of ["polymarket", "kalshi"])
      for (const category of WORLD_CATEGORIES)
        expect(world.events.some((e) => e.provider === provider && e.category === category)).toBe(true);
  });

  it("starts with open, closed, resolved yes and no, and cancelled markets", () => {
    const world = createWorld({ clock: new DrivenClock() });
    const views = world.markets.map((m) => marketView(world, m));
    expect(views.some((m) => m.status === "open")).toBe(true);
    expect(views.some((m) => m.status === "closed" && m.result === null)).toBe(true);
    expect(views.some((m) => m.status === "closed" && m.result === "yes")).toBe(true);
    expect(views.some((m) => m.status === "closed" && m.result === "no")).toBe(true);
    expect(views.some((m) => m.status === "cancelled")).toBe(true);
  });

  it("gives every sandbox wallet claimable, claimed, losing and open positions, with pending and filled orders", () => {
    const world = createWorld({ clock: new DrivenClock() });
    for (let w = 0; w < world.walletCount; w++) {
      const views = world
        .positionsOfWallet(w)
        .filter((p) => p.closedAt === undefined)
        .map((p) => positionView(world, p));
      expect(views.some((p) => p.claimable)).toBe(true);
      expect(views.some((p) => p.claimed)).toBe(true);
      expect(
        views.some(
          // A closed market's position has no valuation on the live service: null.
          (p) => p.marketMetadata.result !== null && !p.claimable && !p.claimed && p.valueUsd === null,
        ),
      ).toBe(true);
      expect(views.some((p) => p.marketMetadata.status === "open" && p.openOrders === 1)).toBe(true);
    }
  });

  it("has history records of every event type", () => {
    const world = createWorld({ clock: new DrivenClock() });
    const types = new Set(queryHistory(world, {}).map((r) => r.eventType));
    for (const type of HISTORY_EVENT_TYPES) expect(types).toContain(type);
  });

  it("scales to 1,000 wallets with a few positions each, deriving keys only when asked", () => {
    const world = createWorld({ clock: new DrivenClock(), walletCount: 1_000 });
    expect(world.positions.length).toBe(4 * 9 + 996 * 3);
    const last = world.positionsOfWallet(999);
    expect(last).toHaveLength(3);
    const key = world.positionPubkey(defined(last[0]));
    expect(world.findPosition(key)).toBe(last[0]);
  });
});
