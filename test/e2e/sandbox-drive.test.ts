/**
 * `keeper sandbox resolve|price|advance|fund` run as separate processes against a running sandbox: each
 * changes what it says (the world's state, read through the service's own API, and the local chain for
 * `fund`), and a bad argument is refused with exit 2, naming the argument and its rule, nothing changed.
 */
import { Connection, PublicKey } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiClient } from "../../src/api/index.js";
import type { RunningSandbox } from "../../src/sandbox/index.js";
import type { DrivenClock } from "../../src/sandbox/world/clock.js";
import { runCli, startTestSandbox } from "../helpers/keeper-harness.js";

const USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const USDT = "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB";

describe("keeper sandbox resolve|price|advance|fund drive a running sandbox", () => {
  let sandbox: RunningSandbox;
  let clock: DrivenClock;
  let env: Record<string, string>;
  let connection: Connection;
  /** Open markets, each used by one test so that none sees another's change. */
  let openMarkets: string[];

  beforeAll(async () => {
    ({ sandbox, clock } = await startTestSandbox());
    env = { KEEPER_SANDBOX_URL: sandbox.url };
    connection = new Connection(sandbox.chain?.url ?? "", "confirmed");
    openMarkets = sandbox.world.markets
      .filter((m) => sandbox.world.marketState(m).status === "open")
      .map((m) => m.marketId);
  }, 60_000);

  afterAll(async () => {
    await sandbox?.close();
  });

  const client = () => createApiClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey });
  const nextOpenMarket = () => openMarkets.shift() ?? "";
  const getMarket = (marketId: string) => client().prediction.getMarket(marketId);

  async function refused(args: string[], argument: RegExp, runEnv = env) {
    const run = await runCli(args, runEnv);
    expect(run.stderr).toMatch(argument);
    expect(run.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(run.code).toBe(2);
  }

  it("resolve <marketId> yes|no|cancelled sets the market's result; a second resolve is refused", async () => {
    const [yes, no, cancelled] = [nextOpenMarket(), nextOpenMarket(), nextOpenMarket()];
    for (const [marketId, result] of [
      [yes, "yes"],
      [no, "no"],
      [cancelled, "cancelled"],
    ] as const) {
      const run = await runCli(["sandbox", "resolve", marketId, result], env);
      expect(run.stderr).toBe("");
      expect(run.code).toBe(0);
    }
    expect((await getMarket(yes)).result).toBe("yes");
    expect((await getMarket(no)).result).toBe("no");
    expect((await getMarket(cancelled)).status).toBe("cancelled");

    await refused(["sandbox", "resolve", yes, "no"], /marketId: market .* is already resolved yes/);
    expect((await getMarket(yes)).result).toBe("yes");
    await refused(["sandbox", "resolve", "NO-SUCH-MARKET", "yes"], /marketId: no market NO-SUCH-MARKET/);
    const open = nextOpenMarket();
    await refused(["sandbox", "resolve", open, "maybe"], /argument 'result'.*yes, no, cancelled/);
    expect((await getMarket(open)).status).toBe("open");
  }, 180_000);

  it("price <marketId> 0.72 holds the yes price there; a price outside (0, 1) is refused", async () => {
    const marketId = nextOpenMarket();
    const run = await runCli(["sandbox", "price", marketId, "0.72"], env);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const market = await getMarket(marketId);
    // Half a cent of spread either side of the mid.
    expect(market.pricing?.buyYesPriceUsd).toBe(725_000);
    expect(market.pricing?.sellYesPriceUsd).toBe(715_000);

    for (const bad of ["1.5", "0", "0.1234567", "abc"])
      await refused(["sandbox", "price", marketId, bad], /argument 'price'.*strictly between 0 and 1/);
    expect((await getMarket(marketId)).pricing?.buyYesPriceUsd).toBe(725_000);
    const resolved = nextOpenMarket();
    await runCli(["sandbox", "resolve", resolved, "yes"], env);
    await refused(["sandbox", "price", resolved, "0.5"], /marketId: market .* is already resolved yes/);
  }, 180_000);

  it("advance <seconds> moves the world's clock; zero, negative or fractional seconds are refused", async () => {
    const before = clock.nowSeconds();
    const run = await runCli(["sandbox", "advance", "3600"], env);
    expect(run.stderr).toBe("");
    expect(run.stdout).toContain(new Date((before + 3600) * 1000).toISOString());
    expect(clock.nowSeconds()).toBe(before + 3600);
    for (const bad of ["0", "1.5", "x", String(366 * 86_400)])
      await refused(["sandbox", "advance", bad], /argument 'seconds'/);
    expect(clock.nowSeconds()).toBe(before + 3600);
  }, 180_000);

  it("fund <wallet> <amount> [--mint] lands tokens or SOL on the chain; bad ones change nothing", async () => {
    const wallet = sandbox.wallets[1] ?? "";
    const owner = new PublicKey(wallet);
    const tokenBalance = async (mint: string) => {
      const accounts = await connection.getTokenAccountsByOwner(owner, { mint: new PublicKey(mint) });
      let total = 0n;
      for (const { pubkey } of accounts.value)
        total += BigInt((await connection.getTokenAccountBalance(pubkey)).value.amount);
      return total;
    };
    const [usdc, usdt, sol] = [
      await tokenBalance(USDC),
      await tokenBalance(USDT),
      await connection.getBalance(owner),
    ];

    for (const args of [
      [wallet, "250"],
      [wallet, "12.5", "--mint", "USDT"],
      [wallet, "2", "--mint", "SOL"],
    ]) {
      const run = await runCli(["sandbox", "fund", ...args], env);
      expect(run.stderr).toBe("");
      expect(run.code).toBe(0);
    }
    expect((await tokenBalance(USDC)) - usdc).toBe(250_000_000n);
    expect((await tokenBalance(USDT)) - usdt).toBe(12_500_000n);
    expect((await connection.getBalance(owner)) - sol).toBe(2_000_000_000);

    await refused(["sandbox", "fund", "not-a-key", "1"], /argument 'wallet'.*base58 public key/);
    await refused(["sandbox", "fund", wallet, "-3"], /amount|argument/);
    await refused(["sandbox", "fund", wallet, "1.1234567", "--mint", USDT], /amount: USDT has 6 decimals/);
    await refused(
      ["sandbox", "fund", wallet, "1", "--mint", "NOPE"],
      /mint: "NOPE" is not a token of this sandbox/,
    );
    await refused(["sandbox", "fund", wallet, "1", "--mint", "MOON"], /mint: "MOON" matches 2 tokens/);
    expect((await tokenBalance(USDC)) - usdc).toBe(250_000_000n);
    expect((await tokenBalance(USDT)) - usdt).toBe(12_500_000n);
  }, 180_000);

  it("talks only to a sandbox on loopback, and says when none answers", async () => {
    await refused(["sandbox", "advance", "5", "--url", "https://api.example.com"], /--url.*loopback/);
    await refused(["sandbox", "advance", "5"], /KEEPER_SANDBOX_URL: must be a sandbox on this machine/, {
      KEEPER_SANDBOX_URL: "http://10.1.2.3:8787",
    });
    const down = await runCli(["sandbox", "advance", "5", "--url", "http://127.0.0.1:9"], env);
    expect(down.stderr).toMatch(/no sandbox answers at http:\/\/127\.0\.0\.1:9/);
    expect(down.code).toBe(1);
  }, 60_000);
});
