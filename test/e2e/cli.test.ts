import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load-config.js";
import { redisKeysOf } from "../../src/keeper/names.js";
import { Ledger } from "../../src/keeper/state/ledger.js";
import type { RunningSandbox } from "../../src/sandbox/index.js";
import { startCheckedSandbox } from "../helpers/checked-sandbox.js";
import { runCli } from "../helpers/keeper-harness.js";
import { testRedis } from "../helpers/redis.js";

// Each command is a fresh process that compiles the sources through tsx: seconds apiece when idle, up to a
// minute on a loaded machine; the time limits below only stop a hung run.
describe("the keeper CLI against the sandbox", () => {
  let sandbox: RunningSandbox;
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    sandbox = await startCheckedSandbox({ port: 0, chain: false, rateLimit: false });
    redis = await testRedis("e2e-cli");
    const dir = await mkdtemp(join(tmpdir(), "keeper-cli-"));
    const file = join(dir, "keeper.yaml");
    await writeFile(file, `service:\n  baseUrl: ${sandbox.url}\nredis:\n  prefix: ${redis.prefix}\n`);
    env = { KEEPER_CONFIG: file };
  });
  afterAll(async () => {
    await sandbox?.close();
    await redis?.cleanup();
  });

  it("reads every read endpoint as JSON", async () => {
    const owner = sandbox.wallets[0] ?? "";
    const events = await runCli(["events", "--json", "--limit", "5"], env);
    expect(events.code).toBe(0);
    const eventId =
      (JSON.parse(events.stdout) as { data: Array<{ eventId: string }> }).data[0]?.eventId ?? "";
    const runs: Array<[string[], (json: unknown) => boolean]> = [
      [["markets", eventId, "--json"], (j) => Array.isArray((j as { data: unknown[] }).data)],
      [
        ["positions", owner, "--json"],
        (j) =>
          Array.isArray(j) && (j as Array<{ ownerPubkey: string }>).every((p) => p.ownerPubkey === owner),
      ],
      [["orders", "--owner", owner, "--json"], (j) => Array.isArray(j)],
      [["history", "--owner", owner, "--json"], (j) => Array.isArray(j) && (j as unknown[]).length > 0],
      [["leaderboard", "--limit", "5", "--json"], (j) => (j as { data: unknown[] }).data.length === 5],
      [
        ["tokens", "USDC", "--json"],
        (j) => (j as Array<{ symbol: string }>).some((t) => t.symbol === "USDC"),
      ],
      [["invites", owner, "--json"], (j) => Array.isArray((j as { invites: unknown[] }).invites)],
      [["ledger", "--json"], (j) => Array.isArray(j)],
      [["status", "--json"], (j) => (j as { paused: { paused: boolean } }).paused.paused === false],
    ];
    for (const [args, check] of runs) {
      const run = await runCli(args, env);
      expect(run.code, `${args.join(" ")}: ${run.stderr}`).toBe(0);
      expect(check(JSON.parse(run.stdout)), args.join(" ")).toBe(true);
    }
    const table = await runCli(["positions", owner], env);
    expect(table.stdout.split("\n")[0]).toMatch(/^position\s+marketId\s+market\s+side/);
    // The table shows exact counts: the first position holds a fraction (contracts floored, micro exact).
    const first = sandbox.world.positionsOfWallet(0)[0];
    if (first === undefined) throw new Error("the sandbox wallet has no position");
    const row = table.stdout.split("\n").find((line) => line.startsWith(sandbox.world.positionPubkey(first)));
    expect(row).toMatch(new RegExp(`\\s${first.contracts.toFixed(1).replace(".", "\\.")}\\s`));
    // Beside the title, the market id the drive commands and `orders --market` take.
    const listed = (
      JSON.parse((await runCli(["positions", owner, "--json"], env)).stdout) as Array<{
        pubkey: string;
        marketId: string;
      }>
    ).find((p) => p.pubkey === sandbox.world.positionPubkey(first));
    expect(listed?.marketId).toMatch(/\S/);
    expect(row?.split(/\s+/)[1]).toBe(listed?.marketId);
  }, 300_000);

  it("reads what the live service sends as null or open: closed markets, all-time periods, tokens without stats", async () => {
    const owner = sandbox.wallets[0] ?? "";
    const resolved = sandbox.world.markets.find((m) => sandbox.world.marketState(m).result !== null);
    const eventId = resolved === undefined ? "" : (sandbox.world.events[resolved.eventIndex]?.eventId ?? "");
    const json = async (args: string[]) => {
      const run = await runCli([...args, "--json"], env);
      expect(run.code, `${args.join(" ")}: ${run.stderr}`).toBe(0);
      return JSON.parse(run.stdout) as unknown;
    };
    const table = async (args: string[]) => {
      const run = await runCli(args, env);
      expect(run.code, `${args.join(" ")}: ${run.stderr}`).toBe(0);
      // A null is a blank cell, never the word.
      expect(run.stdout).not.toMatch(/\bnull\b|NaN|undefined/);
      return run.stdout;
    };

    const positions = (await json(["positions", owner])) as Array<{
      valueUsd: string | null;
      pnlUsdPercent: number | null;
    }>;
    expect(positions.some((p) => p.valueUsd === null && p.pnlUsdPercent === null)).toBe(true);
    await table(["positions", owner]);

    const markets = (await json(["markets", eventId])) as {
      data: Array<{ resolveAt: unknown; pricing: { buyYesPriceUsd: unknown } }>;
    };
    const closed = markets.data.find((m) => typeof m.resolveAt === "string");
    expect(closed?.pricing.buyYesPriceUsd).toBeNull();
    await table(["markets", eventId]);

    const all = (await json(["orders", "--owner", owner])) as Array<{
      marketId: string;
      minSellPriceUsd: string | null;
    }>;
    expect(all.some((o) => o.minSellPriceUsd === null)).toBe(true);
    const marketId = all[0]?.marketId ?? "";
    const inMarket = (await json(["orders", "--owner", owner, "--market", marketId])) as Array<{
      marketId: string;
    }>;
    expect(inMarket.length).toBeGreaterThan(0);
    expect(inMarket.length).toBeLessThan(all.length);
    expect(inMarket.every((o) => o.marketId === marketId)).toBe(true);
    await table(["orders", "--owner", owner]);

    const history = (await json(["history", "--owner", owner])) as Array<{ realizedPnl: string | null }>;
    expect(history.some((h) => h.realizedPnl === null)).toBe(true);
    await table(["history", "--owner", owner]);

    const board = (await json(["leaderboard", "--period", "all_time", "--limit", "3"])) as {
      data: Array<{ periodStart: unknown; periodEnd: unknown }>;
    };
    expect(board.data.map((e) => [e.periodStart, e.periodEnd])).toEqual(board.data.map(() => [null, null]));
    await table(["leaderboard", "--period", "all_time", "--limit", "3"]);

    const tokens = (await json(["tokens", "USDC,DUST"])) as Array<{
      symbol: string;
      apy?: { jupEarn: number };
      stats7d?: unknown;
    }>;
    expect(tokens.find((t) => t.symbol === "USDC")?.apy?.jupEarn).toBeGreaterThan(0);
    expect(tokens.find((t) => t.symbol === "DUST")?.stats7d).toBeNull();
    const earn = await table(["tokens", "USDC,SOL"]);
    expect(earn.split("\n")[0]).toMatch(/earn%/);
    await table(["events", "--provider", "bisonfi", "--limit", "5"]);
  }, 300_000);

  it("prints each intent's amount beside its status in the ledger table", async () => {
    const config = await loadConfig({ file: env.KEEPER_CONFIG ?? "" });
    const ledger = new Ledger(redis.redis, redisKeysOf(config));
    const wallet = sandbox.wallets[0] ?? "";
    const position = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin";
    await ledger.admit({
      kind: "claim",
      key: "claim-cli-amount",
      wallet,
      strategy: "auto-claim",
      positionPubkey: position,
    });
    await ledger.update("claim-cli-amount", { status: "confirmed", amountMicroUsd: "68786802" });
    await ledger.admit({
      kind: "close",
      key: "close-cli-amount",
      wallet,
      strategy: "exit-rules",
      positionPubkey: position,
    });
    await ledger.update("close-cli-amount", { status: "failed", amountMicroUsd: "5910000" });
    await ledger.admit({
      kind: "createRecurring",
      key: "dca-cli-amount",
      wallet,
      strategy: "dca",
      inputMint: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
      outputMint: "So11111111111111111111111111111111111111112",
      inAmount: "200000000",
      numberOfOrders: 2,
      intervalSeconds: 86_400,
    });
    const run = await runCli(["ledger"], env);
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.split("\n");
    expect(lines[0]).toMatch(/^key\s+kind\s+status\s+amount\s/);
    const line = (key: string) => lines.find((l) => l.startsWith(key)) ?? "";
    expect(line("claim-cli-amount")).toMatch(/\sconfirmed\s+payout \$68\.786802\s/);
    expect(line("close-cli-amount")).toMatch(/\sfailed\s+proceeds \$5\.91\s/);
    expect(line("dca-cli-amount")).toMatch(/\s(pending|dry-run)\s+200 USDC in 2 orders/);
  }, 300_000);

  it("pauses and resumes through Redis", async () => {
    expect((await runCli(["pause", "--reason", "maintenance"], env)).code).toBe(0);
    const paused = JSON.parse((await runCli(["status", "--json"], env)).stdout) as {
      paused: { paused: boolean; reason: string };
    };
    expect(paused.paused).toMatchObject({ paused: true, reason: "maintenance" });
    expect((await runCli(["resume"], env)).code).toBe(0);
    const resumed = JSON.parse((await runCli(["status", "--json"], env)).stdout) as {
      paused: { paused: boolean };
    };
    expect(resumed.paused.paused).toBe(false);
  }, 300_000);

  it("lists as many ledger rows as --limit says", async () => {
    const run = await runCli(["ledger", "--json", "--limit", "1"], env);
    expect(run.code, run.stderr).toBe(0);
    expect((JSON.parse(run.stdout) as unknown[]).length).toBeLessThanOrEqual(1);
  }, 300_000);

  it("config check refuses a wallet listed twice and an ops.host of every interface, naming each", async () => {
    const wallet = sandbox.wallets[0] ?? "";
    const file = join(await mkdtemp(join(tmpdir(), "keeper-cli-")), "twice.yaml");
    await writeFile(file, `ops:\n  host: ""\nwallets:\n  - pubkey: ${wallet}\n  - pubkey: ${wallet}\n`);
    const run = await runCli(["config", "check", "--config", file], { KEEPER_CONFIG: "" });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`wallets[1].pubkey: wallet ${wallet} is listed twice (first at wallets[0])`);
    expect(run.stderr).toContain("ops.host: expected a host name or IP address to listen on");
  }, 300_000);

  it("config check and start refuse a config file with no wallets alike: one line naming wallets, exit 2", async () => {
    const file = join(await mkdtemp(join(tmpdir(), "keeper-cli-")), "no-wallets.yaml");
    await writeFile(
      file,
      `service:\n  baseUrl: ${sandbox.url}\nredis:\n  prefix: ${redis.prefix}\nwallets: []\n`,
    );
    const line =
      "keeper: invalid configuration:\n  wallets: at least one wallet is required to run the keeper";
    for (const command of ["config check", "start"]) {
      const run = await runCli([...command.split(" "), "--config", file], { KEEPER_CONFIG: "" });
      expect(run.code, command).toBe(2);
      expect(run.stderr, command).toContain(line);
      expect(run.stdout, command).toBe("");
    }
  }, 300_000);

  it("refuses a redis.url that does not parse before any command uses it, never echoing its password", async () => {
    const badUrl = { ...env, KEEPER_REDIS_URL: "redis://:RedisPwInUrl0123456789@[bad" };
    for (const args of [["config", "check"], ["status"]]) {
      const run = await runCli(args, badUrl);
      expect(run.code, args.join(" ")).toBe(2);
      expect(run.stderr).toMatch(/redis\.url: expected a URL that parses/);
      expect(run.stderr).not.toMatch(/RedisPwInUrl|unexpected error|^\s+at /m);
    }
  }, 300_000);

  it.each([
    [["leaderboard", "--limit", "0"], /--limit: expected an integer from 1 to 100/],
    // Categories are an open set on the service: only the choice-list options are refused locally.
    [["events", "--sort-by", "price"], /argument 'price' is invalid/],
    [["positions", "not-a-key"], /ownerPubkey: expected a base58 public key/],
    [["frobnicate"], /unknown command 'frobnicate'/],
    // Was parseInt unchecked: "abc" reached Redis ("unexpected error"), 0 listed everything.
    ...["abc", "0", "-5", "2.9", "1e9", "100001"].map((n): [string[], RegExp] => [
      ["ledger", "--limit", n],
      /--limit: expected an integer from 1 to 100000/,
    ]),
    // Was silent: the action's InvalidArgumentError was taken for one commander had printed.
    [
      ["breaker", "reset", "bogus"],
      /'bogus' is invalid .*expected a breaker: one of daily_loss, stop_loss_streak/,
    ],
  ])(
    "refuses %j with exit 2 and one clear line",
    async (args, message) => {
      const run = await runCli(args, env);
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(message);
      expect(run.stderr).not.toMatch(/^\s+at /m);
    },
    30_000,
  );
});
