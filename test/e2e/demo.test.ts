/**
 * `npm start` (`keeper start` with no config) as a new user runs it: the demo prints its status page,
 * moves two prices past a take-profit and a stop-loss, runs a DCA plan and a limit order, and its
 * summary line counts claims, exits, DCA rounds and orders. What it reports is checked against its
 * sandbox through the service's own API: the exited positions are gone, the orders are listed.
 */
import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collectAll, createApiClient, iteratePositions } from "../../src/api/index.js";
import { createWorld } from "../../src/sandbox/world/world.js";
import { eventually, spawnCli } from "../helpers/keeper-harness.js";
import { REDIS_URL, testRedis } from "../helpers/redis.js";

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  return typeof address === "object" && address ? address.port : 0;
}

const SUMMARY =
  /demo: \d+ polls, \d+ intents, \d+ in flight, (\d+) claims confirmed \(\$[\d.]+\), (\d+) exits, (\d+) DCA rounds, (\d+) orders, (\d+) failed or refused/g;

function lastSummary(output: string) {
  const match = [...output.matchAll(SUMMARY)].at(-1);
  if (match === undefined) return undefined;
  const [claims, exits, dcaRounds, orders, failed] = match.slice(1).map(Number);
  return { claims, exits, dcaRounds, orders, failed };
}

describe("npm start: the demo shows claims, exits, DCA rounds and orders", () => {
  let demo: ReturnType<typeof spawnCli>;
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let serviceUrl: string;

  beforeAll(async () => {
    redis = await testRedis("e2e-demo");
    serviceUrl = `http://127.0.0.1:${await freePort()}`;
    demo = spawnCli(
      ["start"],
      {
        KEEPER_CONFIG: "",
        KEEPER_SERVICE_URL: serviceUrl,
        KEEPER_RPC_URL: `http://127.0.0.1:${await freePort()}`,
        KEEPER_REDIS_URL: REDIS_URL,
        KEEPER_REDIS_PREFIX: redis.prefix,
        KEEPER_OPS_PORT: "0",
      },
      "spawned-demo",
    );
  });

  afterAll(async () => {
    demo?.child.kill("SIGTERM");
    await demo?.exited;
    await redis?.cleanup();
  });

  it("reports an exit of each rule, a DCA round and an order, as its sandbox shows them", async () => {
    const reported = await eventually(
      "a summary with a claim, two exits, a DCA round and an order",
      async () => {
        const summary = lastSummary(demo.output());
        return summary !== undefined &&
          (summary.claims ?? 0) > 0 &&
          (summary.exits ?? 0) >= 2 &&
          (summary.dcaRounds ?? 0) > 0 &&
          (summary.orders ?? 0) > 0
          ? summary
          : undefined;
      },
      240_000,
    ).catch((error: Error) => {
      throw new Error(`${error.message}\n${demo.output()}`);
    });
    const output = demo.output();
    expect(output).toMatch(/demo: status page http:\/\/127\.0\.0\.1:\d+\//);
    expect(lastSummary(output)?.failed).toBe(0);

    // The demo's sandbox is seed 1's world: its wallets are known here without asking it.
    const wallets = createWorld({ seed: 1 }).wallets();
    const client = createApiClient({ baseUrl: serviceUrl, apiKey: "sandbox-key" });
    const moves = [
      ...output.matchAll(
        /market (\S+) YES price moved to .*sandbox wallet (\d+)'s (YES|NO) position passes its (take-profit|stop-loss)/g,
      ),
    ];
    expect(moves.map((m) => m[4]).sort()).toEqual(["stop-loss", "take-profit"]);
    for (const [, marketId, index, side] of moves) {
      const owner = wallets[Number(index)] ?? "";
      const open = await collectAll(iteratePositions(client, { ownerPubkey: owner }));
      // A closed position is no longer listed.
      expect(
        open.filter((p) => p.marketId === marketId && p.isYes === (side === "YES")),
        `${marketId} ${side} of wallet ${index}`,
      ).toEqual([]);
    }
    // Every round and order the summary counted is one the service lists (more may have come since).
    let recurringListed = 0;
    let triggersListed = 0;
    for (const owner of wallets) {
      for (const orderStatus of ["active", "history"] as const) {
        const recurring = await client.recurring.getOrders({
          user: owner,
          orderStatus,
          recurringType: "time",
        });
        recurringListed += recurring.time?.length ?? 0;
      }
      triggersListed += (await client.trigger.getOrders({ user: owner, orderStatus: "active" })).orders
        .length;
    }
    expect(recurringListed).toBeGreaterThanOrEqual(reported.dcaRounds ?? 0);
    expect(triggersListed).toBeGreaterThanOrEqual(reported.orders ?? 0);
  }, 300_000);
});
