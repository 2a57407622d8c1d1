/**
 * `npm start` (`keeper start` with no config) as a new user runs it: the demo prints its status page,
 * moves three prices past two take-profits (one of a Forecast position, sold through the service's
 * execute endpoint) and a stop-loss, leaves a half-contract winner to the service's free claim (paid a
 * day later on the sandbox's clock), runs a DCA plan and a limit order, and its summary line counts
 * claims, exits, DCA rounds and orders. What it reports is checked against its sandbox through the
 * service's own API, its local chain and its ledger: the exited positions are gone, the sale and the
 * service's claim paid the wallets' USDC, the orders are listed.
 */
import { createServer } from "node:net";
import { Connection } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collectAll, createApiClient, iteratePositions } from "../../src/api/index.js";
import { MAINNET_MINTS } from "../../src/sandbox/world/tokens.js";
import { createWorld } from "../../src/sandbox/world/world.js";
import { eventually, runCli, spawnCli } from "../helpers/keeper-harness.js";
import { REDIS_URL, testRedis } from "../helpers/redis.js";

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  return typeof address === "object" && address ? address.port : 0;
}

const SUMMARY =
  /demo: \d+ polls, \d+ intents, \d+ in flight, (\d+) claims confirmed \(\$[\d.]+\), (\d+) left to the service, (\d+) exits, (\d+) DCA rounds, (\d+) orders, (\d+) failed or refused/g;
const FORECAST_SOLD =
  /demo: sandbox wallet (\d+)'s Forecast position on (\S+) sold through the service's execute endpoint \(bisonfi_swap, co-signed by its vault\): USDC \+\$([\d.]+) on the local chain, transaction (\w+)/;
const LEFT =
  /demo: sandbox wallet (\d+)'s winner on (\S+) \(0\.5 contract\) not claimed early: (left to the service's free claim: payout \$0\.50 is not worth more than 500x .*)/;
const SERVICE_PAID =
  /demo: the service claimed sandbox wallet (\d+)'s winner on (\S+) itself, free: USDC \+\$0\.50 on the local chain, transaction (\w+)/;

function lastSummary(output: string) {
  const match = [...output.matchAll(SUMMARY)].at(-1);
  if (match === undefined) return undefined;
  const [claims, left, exits, dcaRounds, orders, failed] = match.slice(1).map(Number);
  return { claims, left, exits, dcaRounds, orders, failed };
}

/** What a landed transaction moved into the owner's USDC, from the chain's own record of it. */
async function usdcMoved(rpcUrl: string, signature: string, owner: string) {
  const tx = await new Connection(rpcUrl, "confirmed").getTransaction(signature, {
    commitment: "confirmed",
    maxSupportedTransactionVersion: 0,
  });
  const usdc = (balances: readonly { owner?: string; mint: string; uiTokenAmount: { amount: string } }[]) =>
    balances
      .filter((b) => b.owner === owner && b.mint === MAINNET_MINTS.usdc)
      .reduce((sum, b) => sum + BigInt(b.uiTokenAmount.amount), 0n);
  return {
    err: tx?.meta?.err,
    signers: tx?.transaction.signatures.length,
    moved: usdc(tx?.meta?.postTokenBalances ?? []) - usdc(tx?.meta?.preTokenBalances ?? []),
  };
}

describe("npm start: the demo shows claims, exits, DCA rounds and orders", () => {
  let demo: ReturnType<typeof spawnCli>;
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let serviceUrl: string;
  let rpcUrl: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    redis = await testRedis("e2e-demo");
    serviceUrl = `http://127.0.0.1:${await freePort()}`;
    rpcUrl = `http://127.0.0.1:${await freePort()}`;
    env = {
      KEEPER_CONFIG: "",
      KEEPER_SERVICE_URL: serviceUrl,
      KEEPER_RPC_URL: rpcUrl,
      KEEPER_REDIS_URL: REDIS_URL,
      KEEPER_REDIS_PREFIX: redis.prefix,
      KEEPER_OPS_PORT: "0",
    };
    demo = spawnCli(["start"], env, "spawned-demo");
  });

  afterAll(async () => {
    demo?.child.kill("SIGTERM");
    await demo?.exited;
    await redis?.cleanup();
  });

  it("reports an exit of each rule, a Forecast exit through execute, a claim left to the service, a DCA round and an order, as its sandbox shows them", async () => {
    const reported = await eventually(
      "a summary with a claim, a claim left to the service and paid by it, three exits, a DCA round and an order",
      async () => {
        const summary = lastSummary(demo.output());
        return summary !== undefined &&
          SERVICE_PAID.test(demo.output()) &&
          (summary.claims ?? 0) > 0 &&
          (summary.left ?? 0) >= 1 &&
          (summary.exits ?? 0) >= 3 &&
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
        /market (\S+) YES price moved to .*sandbox wallet (\d+)'s (?:Forecast )?(YES|NO) position passes its (take-profit|stop-loss)/g,
      ),
    ];
    expect(moves.map((m) => m[4]).sort()).toEqual(["stop-loss", "take-profit", "take-profit"]);
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

    // The Forecast exit: a move of its own, sold through execute (the wallet's and the vault's
    // signatures on the landed swap), paid into the wallet's USDC as the chain records it.
    const sold = FORECAST_SOLD.exec(output);
    expect(sold, output).not.toBeNull();
    const [, soldIndex = "", forecastMarket = "", soldUsd = "", soldSignature = ""] = sold ?? [];
    expect(moves.some((m) => m[1] === forecastMarket && m[0].includes("Forecast YES"))).toBe(true);
    const seller = wallets[Number(soldIndex)] ?? "";
    const sale = await usdcMoved(rpcUrl, soldSignature, seller);
    expect(sale.err).toBeNull();
    expect(sale.signers).toBe(2);
    expect(sale.moved).toBeGreaterThan(0n);
    expect(Number(sale.moved) / 1e6).toBe(Number(soldUsd));

    // The small winner: left to the service by auto-claim at its default ratio, then claimed by the
    // service itself (no claim of Keeper's), its 0.5 contract paying $0.50 on the chain.
    const left = LEFT.exec(output);
    const paid = SERVICE_PAID.exec(output);
    expect(left, output).not.toBeNull();
    const [, leftIndex = "", leftMarket = ""] = left ?? [];
    expect(paid?.slice(1, 3)).toEqual([leftIndex, leftMarket]);
    const winner = wallets[Number(leftIndex)] ?? "";
    const serviceClaim = await usdcMoved(rpcUrl, paid?.[3] ?? "", winner);
    expect(serviceClaim.err).toBeNull();
    expect(serviceClaim.moved).toBe(500_000n);
    const listed = (await collectAll(iteratePositions(client, { ownerPubkey: winner }))).find(
      (p) => p.marketId === leftMarket,
    );
    expect(listed).toMatchObject({ claimed: true, claimable: false, claimedUsd: "500000" });

    // Keeper's ledger, as `keeper ledger` shows the demo's: the Forecast close confirmed through the
    // build's execute context, the small claim left to the service and never claimed by Keeper.
    const ledger = await runCli(["ledger", "--json"], env);
    expect(ledger.code, ledger.stderr).toBe(0);
    const rows = JSON.parse(ledger.stdout) as {
      key: string;
      kind: string;
      status: string;
      reason?: string;
      signature?: string;
      execution?: { context?: { type?: string } };
    }[];
    expect(rows.find((r) => r.kind === "close" && r.signature === soldSignature)).toMatchObject({
      status: "confirmed",
      execution: { context: { type: "bisonfi_swap" } },
    });
    const leftRow = rows.find((r) => r.status === "left_to_service");
    expect(leftRow?.reason).toBe(left?.[3]);
    const smallPubkey = /^claim-(\w+)-left$/.exec(leftRow?.key ?? "")?.[1];
    expect(listed?.pubkey).toBe(smallPubkey);
    expect(rows.some((r) => r.key === `claim-${smallPubkey}`)).toBe(false);
  }, 300_000);
});
