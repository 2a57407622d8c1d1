/**
 * `keeper sandbox --wallets 50 --keys-dir DIR` as an operator paper-trading a fleet runs it: the
 * spawned sandbox serves 50 wallets and writes their 50 key files and a fleet config; the config passes
 * `keeper config check`, and a keeper started with it (another process) claims every wallet's winner,
 * each payout read on the local chain, then the winners of a market resolved through `keeper sandbox
 * resolve`. Bad sizes are refused before anything is written.
 */
import { access, mkdtemp, readdir, readFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Connection, PublicKey } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { collectAll, createApiClient, iteratePositions } from "../../src/api/index.js";
import type { Position } from "../../src/core/schemas/prediction.js";
import { createWorld } from "../../src/sandbox/world/world.js";
import { eventually, runCli, spawnCli, spawnKeeper } from "../helpers/keeper-harness.js";
import { REDIS_URL, testRedis } from "../helpers/redis.js";

const USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const SEED = 9;
const WALLETS = 50;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  return typeof address === "object" && address ? address.port : 0;
}

async function usdcOf(connection: Connection, owner: string): Promise<bigint> {
  const accounts = await connection.getTokenAccountsByOwner(new PublicKey(owner), {
    mint: new PublicKey(USDC),
  });
  let total = 0n;
  for (const { pubkey } of accounts.value)
    total += BigInt((await connection.getTokenAccountBalance(pubkey)).value.amount);
  return total;
}

describe("keeper sandbox --wallets", () => {
  let sandbox: ReturnType<typeof spawnCli>;
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let dir: string;
  let serviceUrl: string;
  let connection: Connection;
  const wallets = createWorld({ seed: SEED, walletCount: WALLETS }).wallets();

  beforeAll(async () => {
    redis = await testRedis("e2e-sandbox-fleet");
    dir = join(await mkdtemp(join(tmpdir(), "keeper-sandbox-fleet-")), "keys");
    const [port, chainPort] = [await freePort(), await freePort()];
    serviceUrl = `http://127.0.0.1:${port}`;
    connection = new Connection(`http://127.0.0.1:${chainPort}`, "confirmed");
    sandbox = spawnCli(
      [
        ...["sandbox", "--port", String(port), "--chain-port", String(chainPort), "--seed", String(SEED)],
        ...["--wallets", String(WALLETS), "--events-per-category", "2", "--keys-dir", dir],
      ],
      {},
      "spawned-sandbox-fleet",
    );
    await eventually(
      "the sandbox wrote its fleet config",
      async () => (sandbox.stdout().includes("keeper start --config") ? true : undefined),
      60_000,
    );
  }, 90_000);

  afterAll(async () => {
    sandbox?.child.kill("SIGTERM");
    await sandbox?.exited;
    await redis?.cleanup();
  });

  it("serves the fleet, writes a key file per wallet and a config of all of them, and lists a few", async () => {
    const files = await readdir(dir);
    expect(files.filter((f) => /^wallet-\d+\.json$/.test(f))).toHaveLength(WALLETS);
    const out = sandbox.stdout();
    expect(out).toContain(`wallets (${WALLETS}):`);
    expect(out).toContain(`... and ${WALLETS - 4} more`);
    expect(out).not.toContain(wallets[WALLETS - 1]);
    const config = parseYaml(await readFile(join(dir, "keeper.yaml"), "utf8")) as {
      wallets: Array<{ pubkey: string }>;
      service: { requestsPerSecond: number; rateLimitWindowSeconds: number };
    };
    expect(config.wallets.map((w) => w.pubkey)).toEqual(wallets);
    expect(config.service).toMatchObject({ requestsPerSecond: 150, rateLimitWindowSeconds: 60 });
    // --events-per-category 2: two events in each category of each provider, none numbered 3.
    const client = createApiClient({ baseUrl: serviceUrl, apiKey: "sandbox-key" });
    await expect(client.prediction.getEvent("POLY-CRYPTO-002")).resolves.toMatchObject({
      eventId: "POLY-CRYPTO-002",
    });
    await expect(client.prediction.getEvent("POLY-CRYPTO-003")).rejects.toThrow();
  });

  it("a keeper on the written config claims the winners of many wallets, paid on the chain", async () => {
    const configFile = join(dir, "keeper.yaml");
    const env = {
      KEEPER_CONFIG: "",
      KEEPER_REDIS_URL: REDIS_URL,
      KEEPER_REDIS_PREFIX: redis.prefix,
      KEEPER_OPS_PORT: "0",
    };
    const check = await runCli(["config", "check", "--config", configFile], env);
    expect(check.stderr).toBe("");
    expect(check.stdout).toContain(`valid: mode live, ${WALLETS} wallet(s)`);
    expect(check.code).toBe(0);

    const client = createApiClient({ baseUrl: serviceUrl, apiKey: "sandbox-key" });
    const positionsOf = (owner: string) => collectAll(iteratePositions(client, { ownerPubkey: owner }));
    const held = new Map<string, Position[]>();
    for (const owner of wallets) held.set(owner, await positionsOf(owner));
    const winners = [...held].flatMap(([owner, ps]) =>
      ps.filter((p) => p.claimable).map((p) => ({ owner, p })),
    );
    const owners = new Set(winners.map((w) => w.owner));
    expect(owners.size, "most wallets hold a claimable winner").toBeGreaterThan(WALLETS / 2);
    // The open market most wallets hold, resolved for the side most of them took.
    const open = [...held].flatMap(([owner, ps]) =>
      ps
        .filter((p) => p.marketMetadata?.status === "open" && !p.claimable && !p.claimed)
        .map((p) => ({ owner, p })),
    );
    const byMarketSide = new Map<string, typeof open>();
    for (const entry of open) {
      const key = `${entry.p.marketId} ${entry.p.isYes ? "yes" : "no"}`;
      byMarketSide.set(key, [...(byMarketSide.get(key) ?? []), entry]);
    }
    const [resolvedKey, resolvedHolders] =
      [...byMarketSide].sort((a, b) => b[1].length - a[1].length)[0] ?? [];
    expect(resolvedHolders?.length ?? 0, "an open market held by several wallets").toBeGreaterThan(1);
    const [marketId, side] = (resolvedKey ?? "").split(" ");
    const before = new Map<string, bigint>();
    for (const owner of wallets) before.set(owner, await usdcOf(connection, owner));

    const keeper = spawnKeeper(configFile, env);
    try {
      const isClaimed = async (owner: string, pubkey: string) =>
        (await positionsOf(owner)).find((p) => p.pubkey === pubkey)?.claimed === true;
      await eventually(
        `the ${winners.length} winners at start are claimed`,
        async () => {
          for (const { owner, p } of winners) if (!(await isClaimed(owner, p.pubkey))) return undefined;
          return true;
        },
        150_000,
      );
      const resolve = await runCli(
        ["sandbox", "resolve", marketId ?? "", side ?? "", "--url", serviceUrl],
        env,
      );
      expect(resolve.stderr).toBe("");
      expect(resolve.code).toBe(0);
      const resolved = resolvedHolders ?? [];
      await eventually(
        `the ${resolved.length} holders of ${marketId} are claimed`,
        async () => {
          for (const { owner, p } of resolved) if (!(await isClaimed(owner, p.pubkey))) return undefined;
          return true;
        },
        120_000,
      );
      // Each wallet's USDC grew by at least what its winners pay: every payout landed on the chain.
      for (const owner of new Set([...owners, ...resolved.map((r) => r.owner)])) {
        const due = [...winners, ...resolved]
          .filter((w) => w.owner === owner)
          .reduce((sum, w) => sum + BigInt(w.p.payoutUsd ?? "0"), 0n);
        expect(due).toBeGreaterThan(0n);
        expect((await usdcOf(connection, owner)) - (before.get(owner) ?? 0n), owner).toBeGreaterThanOrEqual(
          due,
        );
      }
    } finally {
      keeper.child.kill("SIGTERM");
      await keeper.exited;
    }
  }, 330_000);

  it.each([
    ["--wallets", "0", "must be an integer from 1 to 10000"],
    ["--wallets", "10001", "must be an integer from 1 to 10000"],
    ["--events-per-category", "101", "must be an integer from 1 to 100"],
    ["--idle-wallet-pct", "101", "must be an integer from 0 to 100"],
  ])("refuses %s %s naming the option and its rule (exit 2), writing nothing", async (flag, value, rule) => {
    const keys = join(await mkdtemp(join(tmpdir(), "keeper-sandbox-fleet-bad-")), "keys");
    const run = await runCli(["sandbox", "--port", "0", flag, value, "--keys-dir", keys], {
      KEEPER_CONFIG: "",
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`option '${flag} <n>' argument '${value}' is invalid. ${rule}`);
    await expect(access(keys)).rejects.toThrow(/ENOENT/);
  });
});
