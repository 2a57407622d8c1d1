import { Keypair } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import { fleetSchedules } from "../../../src/sandbox/fleet-config.js";
import { deriveKeypair, seedBytes } from "../../../src/sandbox/world/rng.js";

/** Seconds between two runs of a six-field cron that fires at second 0 every M minutes (or every S s). */
function periodSeconds(cron: string): number {
  const [second, minute] = cron.split(" ");
  if (second?.startsWith("*/")) return Number(second.slice(2));
  if (minute === "*") return 60;
  if (minute === "0") return 3_600;
  return Number(minute?.slice(2)) * 60;
}

describe("fleetSchedules", () => {
  it.each([4, 50, 1_000])("keeps Keeper's defaults while they fit the plan (%i wallets at 150/s)", (n) => {
    expect(fleetSchedules(n, 150)).toEqual({
      pollPositions: "0 * * * * *",
      pollOrders: "*/30 * * * * *",
      sweepSeconds: 60,
    });
  });

  it.each([
    [2_000, 150],
    [10_000, 150],
    [10_000, 10],
    [1_000, 10],
    [200, 1],
  ])("%i wallets at %i/s: both polls fit in the sweep's share, positions swept in its period", (n, rate) => {
    const { pollPositions, pollOrders, sweepSeconds } = fleetSchedules(n, rate);
    const positions = periodSeconds(pollPositions);
    const orders = periodSeconds(pollOrders);
    expect(positions).toBe(sweepSeconds);
    // One read a wallet each sweep, two each orders poll, within 80 % of the plan.
    const readsPerSecond = n / positions + (2 * n) / orders;
    if (positions < 3_600) expect(readsPerSecond).toBeLessThanOrEqual(rate * 0.8);
    // A sweep at the sweep's share ends before the next one starts.
    if (positions < 3_600) expect(n / (rate * 0.8)).toBeLessThan(positions);
    expect(orders).toBeGreaterThanOrEqual(positions);
  });

  it("10,000 wallets at 150/s: positions every 4 minutes, orders every 10", () => {
    expect(fleetSchedules(10_000, 150)).toEqual({
      pollPositions: "0 */4 * * * *",
      pollOrders: "0 */10 * * * *",
      sweepSeconds: 240,
    });
  });
});

describe("deriveKeypair", () => {
  it.each([
    ["wallet:0", 1],
    ["wallet:9999", 1],
    ["vault", 7],
    ["wallet:3", 4_294_967_295],
  ])("%s (seed %i) is the key web3.js derives from the same seed", (label, seed) => {
    const expected = Keypair.fromSeed(seedBytes(label, seed));
    const derived = deriveKeypair(label, seed);
    expect(derived.publicKey.toBase58()).toBe(expected.publicKey.toBase58());
    expect(Buffer.from(derived.secretKey).equals(Buffer.from(expected.secretKey))).toBe(true);
  });
});
