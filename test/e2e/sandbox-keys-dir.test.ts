/**
 * `keeper sandbox --keys-dir DIR` as a new user runs it: a spawned sandbox writes the wallets' key files
 * and a ready config; the config passes `keeper config check`, and a keeper started with it (another
 * process) claims a position of a market resolved through `keeper sandbox resolve`, the payout checked
 * on the local chain.
 */
import { mkdir, mkdtemp, readFile, stat, symlink, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Connection, Keypair, PublicKey } from "@solana/web3.js";
import bs58 from "bs58";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { collectAll, createApiClient, iteratePositions } from "../../src/api/index.js";
import { createWorld } from "../../src/sandbox/world/world.js";
import { eventually, runCli, spawnCli, spawnKeeper } from "../helpers/keeper-harness.js";
import { REDIS_URL, testRedis } from "../helpers/redis.js";

const USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const SEED = 5;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  return typeof address === "object" && address ? address.port : 0;
}

async function usdcOf(rpcUrl: string, owner: string): Promise<bigint> {
  const connection = new Connection(rpcUrl, "confirmed");
  const accounts = await connection.getTokenAccountsByOwner(new PublicKey(owner), {
    mint: new PublicKey(USDC),
  });
  let total = 0n;
  for (const { pubkey } of accounts.value)
    total += BigInt((await connection.getTokenAccountBalance(pubkey)).value.amount);
  return total;
}

/** `keeper sandbox --keys-dir DIR` on free ports, without a config, run to its exit. */
async function sandboxWithKeysDir(keys: string) {
  const ports = ["--port", String(await freePort()), "--chain-port", String(await freePort())];
  return runCli(["sandbox", ...ports, "--keys-dir", keys], { KEEPER_CONFIG: "" });
}

describe("keeper sandbox --keys-dir", () => {
  let sandbox: ReturnType<typeof spawnCli>;
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let dir: string;
  let serviceUrl: string;
  let rpcUrl: string;
  /** The seed's wallet keypairs, made here too so the suite's secret scan looks for them everywhere. */
  const expected = (() => {
    const world = createWorld({ seed: SEED });
    return world.wallets().map((pubkey, i) => ({ pubkey, keypair: world.walletKeypair(i) }));
  })();

  beforeAll(async () => {
    redis = await testRedis("e2e-sandbox-keys");
    dir = join(await mkdtemp(join(tmpdir(), "keeper-sandbox-keys-")), "keys");
    const [port, chainPort] = [await freePort(), await freePort()];
    serviceUrl = `http://127.0.0.1:${port}`;
    rpcUrl = `http://127.0.0.1:${chainPort}`;
    sandbox = spawnCli(
      [
        "sandbox",
        "--port",
        String(port),
        "--chain-port",
        String(chainPort),
        "--seed",
        String(SEED),
        "--keys-dir",
        dir,
      ],
      {},
      "spawned-sandbox",
    );
    await eventually(
      "the sandbox printed its config",
      async () => (sandbox.stdout().includes("strategies:") ? true : undefined),
      60_000,
    );
  }, 90_000);

  afterAll(async () => {
    sandbox?.child.kill("SIGTERM");
    await sandbox?.exited;
    await redis?.cleanup();
  });

  it("writes one Solana CLI key file per wallet (0600, in a 0700 directory) and never prints a key", async () => {
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    for (const [i, { pubkey, keypair }] of expected.entries()) {
      const file = join(dir, `wallet-${i}.json`);
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      const bytes = JSON.parse(await readFile(file, "utf8")) as number[];
      expect(bytes).toHaveLength(64);
      expect(Keypair.fromSecretKey(Uint8Array.from(bytes)).publicKey.toBase58()).toBe(pubkey);
      const out = sandbox.output();
      expect(out).not.toContain(bs58.encode(keypair.secretKey));
      expect(out).not.toContain(JSON.stringify(Array.from(keypair.secretKey)));
      expect(out).not.toContain(bytes.slice(0, 8).join(","));
    }
  });

  it("prints the config it wrote; it passes config check and a keeper started with it claims", async () => {
    const configFile = join(dir, "keeper.yaml");
    const written = await readFile(configFile, "utf8");
    expect(sandbox.stdout()).toContain(written.trimEnd());
    const config = parseYaml(written) as { wallets: Array<{ pubkey: string; keyFile: string }> };
    expect(config.wallets.map((w) => w.pubkey)).toEqual(expected.map((w) => w.pubkey));

    const env = {
      KEEPER_CONFIG: "",
      KEEPER_REDIS_URL: REDIS_URL,
      KEEPER_REDIS_PREFIX: redis.prefix,
      KEEPER_OPS_PORT: "0",
    };
    const check = await runCli(["config", "check", "--config", configFile], env);
    expect(check.stderr).toBe("");
    expect(check.stdout).toContain("valid: mode live");
    expect(check.code).toBe(0);

    // An open position of wallet 0, read from the sandbox as any client would.
    const owner = expected[0]?.pubkey ?? "";
    const client = createApiClient({ baseUrl: serviceUrl, apiKey: "sandbox-key" });
    const positions = await collectAll(iteratePositions(client, { ownerPubkey: owner }));
    const open = positions.find((p) => p.marketMetadata?.status === "open" && !p.claimable && !p.claimed);
    expect(open, "wallet 0 holds a position in an open market").toBeDefined();
    const position = open as (typeof positions)[number];
    const before = await usdcOf(rpcUrl, owner);

    const keeper = spawnKeeper(configFile, env);
    try {
      const resolve = await runCli(
        ["sandbox", "resolve", position.marketId, position.isYes ? "yes" : "no", "--url", serviceUrl],
        env,
      );
      expect(resolve.stderr).toBe("");
      expect(resolve.code).toBe(0);
      await eventually(
        "the resolved position is claimed",
        async () => {
          const now = await collectAll(iteratePositions(client, { ownerPubkey: owner }));
          return now.find((p) => p.pubkey === position.pubkey)?.claimed === true ? true : undefined;
        },
        120_000,
      );
      const payout = BigInt(position.payoutUsd ?? "0");
      expect(payout).toBeGreaterThan(0n);
      expect((await usdcOf(rpcUrl, owner)) - before).toBeGreaterThanOrEqual(payout);
    } finally {
      keeper.child.kill("SIGTERM");
      await keeper.exited;
    }
  }, 180_000);

  it("refuses a key file planted as a link (exit 2, no stack): the file it points at is unchanged", async () => {
    const base = await mkdtemp(join(tmpdir(), "keeper-sandbox-planted-"));
    const victim = join(base, "victim.txt");
    await writeFile(victim, "not a key\n", { mode: 0o644 });
    const keys = join(base, "keys");
    await mkdir(keys, { mode: 0o700 });
    await symlink(victim, join(keys, "api-key"));
    const run = await sandboxWithKeysDir(keys);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      `keeper: invalid configuration:\n  --keys-dir: ${join(keys, "api-key")} is a symbolic link: key files are written only as new files of their own; remove it and run again\n`,
    );
    expect(await readFile(victim, "utf8")).toBe("not a key\n");
  }, 90_000);

  it("refuses a directory it cannot make (under /proc) at once, naming it, without a stack", async () => {
    const keys = "/proc/self/keeper-keys/wallets";
    const run = await sandboxWithKeysDir(keys);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /^keeper: invalid configuration:\n {2}--keys-dir: cannot create \/proc\/self\/keeper-keys\/wallets \(E[A-Z]+\)\n$/,
    );
  }, 90_000);
});
