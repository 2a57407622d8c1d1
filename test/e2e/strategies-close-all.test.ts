import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Fastify from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import type { RunningKeeper } from "../../src/app/start-keeper.js";
import type { Position } from "../../src/core/schemas/prediction.js";
import type { RunningSandbox } from "../../src/sandbox/index.js";
import {
  eventually,
  loadTestConfig,
  positionsOf,
  runCli,
  startTestKeeper,
  startTestSandbox,
  usdcBalance,
  writeKeeperConfig,
} from "../helpers/keeper-harness.js";
import { testRedis } from "../helpers/redis.js";

const ONE_USD = 1_000_000;

function yesPriceFor(position: Position, sidePriceMicro: number): number {
  const side = Math.min(ONE_USD - 10_000, Math.max(10_000, Math.round(sidePriceMicro)));
  return position.isYes ? side : ONE_USD - side;
}

/** `keeper ARGS` with no config from the environment: each call names its own with --config. */
const cli = (args: string[]) => runCli(args, { KEEPER_CONFIG: "" });

const isOpen = (p: Position) => p.marketMetadata.status === "open" && !p.claimable && !p.claimed;

describe("close-all end to end: the kill switch and the daily-loss trigger", () => {
  let sandbox: RunningSandbox | undefined;
  let keeper: RunningKeeper | undefined;
  let redis: Awaited<ReturnType<typeof testRedis>> | undefined;
  const webhook = Fastify();
  const notifications: Array<{ keeper: { event: string; breaker?: string; tripped?: boolean } }> = [];
  webhook.post("/hook", async (request) => {
    notifications.push(request.body as (typeof notifications)[number]);
    return { ok: true };
  });

  afterEach(async () => {
    await keeper?.stop();
    await sandbox?.close();
    await redis?.cleanup();
    keeper = undefined;
    sandbox = undefined;
  });

  /** A sandbox whose wallet 0 positions sit at their own average price, and a keeper config for it. */
  async function setUp(label: string, extra: (open: Position[]) => string) {
    ({ sandbox } = await startTestSandbox());
    redis = await testRedis(label);
    const wallet = sandbox.wallets[0] ?? "";
    const open = (await positionsOf(sandbox, wallet)).filter(isOpen);
    if (open.length < 3) throw new Error("the sandbox seed no longer gives wallet 0 three open positions");
    for (const p of open) sandbox.world.setPrice(p.marketId, yesPriceFor(p, Number(p.avgPriceUsd)));
    const file = await writeKeeperConfig(sandbox, redis.prefix, {
      extra: extra(open),
      walletYaml: `wallets:\n  - pubkey: ${wallet}\n`,
    });
    return { wallet, open, file, sandbox, redis };
  }

  it("keeper close-all refuses without a terminal or --yes, then closes every open position and claims every winner once", async () => {
    const { wallet, open, file, sandbox: sb } = await setUp("e2e-close-all-cli", () => "strategies: []\n");
    // The live service answers close-all with a claim for each winner (a winner is claimed, not sold).
    const winners = (await positionsOf(sb, wallet)).filter((p) => p.claimable && !p.claimed);
    expect(winners.length, "the sandbox seed gives wallet 0 a winner").toBeGreaterThan(0);
    const running = (await startTestKeeper(await loadTestConfig(file), sb)).keeper;
    keeper = running;
    const before = await usdcBalance(sb, wallet, sb.usdcMint);

    const refused = await cli(["close-all", "--owner", wallet, "--config", file]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("refusing without confirmation");
    expect(refused.stderr).toContain("--yes");
    const stranger = await cli(["close-all", "--owner", sb.wallets[1] ?? "", "--yes", "--config", file]);
    expect(stranger.code).toBe(2);
    expect(stranger.stderr).toContain("is not one of the configured wallets");
    expect(await running.ledger.list()).toEqual([]);

    const done = await cli(["close-all", "--owner", wallet, "--yes", "--config", file]);
    expect(done.code).toBe(0);
    expect(done.stdout).toMatch(/recorded close-all-/);

    const expected = open.map((p) => `close-${p.pubkey}`).sort();
    const rows = await eventually(
      "every open position closed",
      async () => {
        const closes = (await running.ledger.list()).filter((r) => r.kind === "close");
        return closes.filter((r) => r.status === "confirmed").length >= open.length ? closes : undefined;
      },
      60_000,
    );
    expect(rows.map((r) => r.key).sort()).toEqual(expected);
    for (const row of rows) expect(row).toMatchObject({ status: "confirmed", strategy: "operator" });
    const claims = await eventually(
      "every winner claimed",
      async () => {
        const done = (await running.ledger.list()).filter(
          (r) => r.kind === "claim" && r.status === "confirmed",
        );
        return done.length >= winners.length ? done : undefined;
      },
      60_000,
    );
    expect(claims.map((r) => r.key).sort()).toEqual(winners.map((p) => `claim-${p.pubkey}`).sort());
    const parent = (await running.ledger.list()).filter((r) => r.kind === "closeAll");
    expect(parent).toHaveLength(1);
    expect(parent[0]).toMatchObject({ status: "confirmed", strategy: "operator" });

    expect((await positionsOf(sb, wallet)).filter(isOpen)).toEqual([]);
    expect((await positionsOf(sb, wallet)).filter((p) => p.claimable && !p.claimed)).toEqual([]);
    const proceeds = [...rows, ...claims].reduce((sum, r) => sum + BigInt(r.amountMicroUsd ?? "0"), 0n);
    const payouts = winners.reduce((sum, p) => sum + BigInt(p.payoutUsd), 0n);
    expect(claims.reduce((sum, r) => sum + BigInt(r.amountMicroUsd ?? "0"), 0n)).toBe(payouts);
    expect((await usdcBalance(sb, wallet, sb.usdcMint)) - before).toBe(proceeds);
    const metrics = await running.metrics.render();
    expect(metrics).toContain(`keeper_transactions_total{kind="close",outcome="confirmed"} ${open.length}`);
  }, 120_000);

  it("a stop-loss whose loss passes the limits trips the breaker and closes the rest of the wallet", async () => {
    const hookUrl = `${await webhook.listen({ port: 0, host: "127.0.0.1" })}/hook`;
    const hookFile = join(await mkdtemp(join(tmpdir(), "keeper-hook-")), "url");
    await writeFile(hookFile, hookUrl, { mode: 0o600 });
    let loser: Position | undefined;
    const {
      wallet,
      open,
      file,
      sandbox: sb,
    } = await setUp("e2e-close-all-loss", (positions) => {
      loser = positions.find((p) => p.openOrders === 0);
      return `strategies:
  - name: exit-rules
    overrides:
      - match: { marketId: "${loser?.marketId}", side: ${loser?.isYes ? "yes" : "no"} }
        rules: { stopLossPct: 20 }
protections:
  dailyLossLimitUsd: 5
  closeAllOnDailyLossUsd: 5
notifications:
  webhookUrlFile: ${hookFile}
`;
    });
    if (!loser) throw new Error("no position without orders");
    const running = (await startTestKeeper(await loadTestConfig(file), sb)).keeper;
    keeper = running;
    // Let a poll run at cost: nothing happens, the breakers are ok.
    await eventually("a first poll", async () =>
      (await running.redis.zscore(running.keys.lastPolls, wallet)) ? true : undefined,
    );
    expect(await running.ledger.list()).toEqual([]);
    const ok = await cli(["status", "--json", "--config", file]);
    expect(ok.code).toBe(0);
    expect(
      (JSON.parse(ok.stdout) as { breakers: Array<{ breaker: string; state: string }> }).breakers,
    ).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ breaker: "daily_loss", state: "ok" }),
        expect.objectContaining({ breaker: "stop_loss_streak", state: "off" }),
      ]),
    );

    // The loser's side halves: the stop-loss closes it at a loss well past $5.
    sb.world.setPrice(loser.marketId, yesPriceFor(loser, Number(loser.avgPriceUsd) * 0.5));
    const rows = await eventually(
      "the stop-loss and the close-all of the rest confirmed",
      async () => {
        const all = await running.ledger.list();
        const confirmed = all.filter((r) => r.kind === "close" && r.status === "confirmed");
        return confirmed.length >= open.length ? all : undefined;
      },
      60_000,
    );
    const stop = rows.find((r) => r.key === `close-${loser?.pubkey}`);
    expect(stop).toMatchObject({ strategy: "exit-rules", status: "confirmed" });
    expect(stop?.reason).toMatch(/^stop-loss:/);
    const closeAll = rows.filter((r) => r.kind === "closeAll");
    expect(closeAll).toHaveLength(1);
    expect(closeAll[0]).toMatchObject({ strategy: "protections", status: "confirmed" });
    expect(closeAll[0]?.key).toMatch(new RegExp(`^close-all-${wallet}-\\d{8}$`));
    const rest = rows.filter((r) => r.kind === "close" && r.key !== stop?.key);
    expect(rest.map((r) => r.key).sort()).toEqual(
      open
        .filter((p) => p.pubkey !== loser?.pubkey)
        .map((p) => `close-${p.pubkey}`)
        .sort(),
    );
    for (const row of rest) expect(row).toMatchObject({ strategy: "protections", status: "confirmed" });
    expect((await positionsOf(sb, wallet)).filter(isOpen)).toEqual([]);

    // The breaker says so: metric, status, a notification.
    await eventually("the breaker gauge", async () =>
      (await running.metrics.render()).includes('keeper_circuit_breaker_tripped{breaker="daily_loss"} 1')
        ? true
        : undefined,
    );
    const tripped = await cli(["status", "--config", file]);
    expect(tripped.code).toBe(0);
    expect(tripped.stdout).toContain("TRIPPED daily_loss");
    await eventually("a breaker notification", async () =>
      notifications.find((n) => n.keeper.event === "breaker" && n.keeper.breaker === "daily_loss")
        ? true
        : undefined,
    );
    expect(notifications.find((n) => n.keeper.event === "breaker")?.keeper.tripped).toBe(true);

    // Reset by hand: status says ok again, and the next poll resets the gauge.
    const reset = await cli(["breaker", "reset", "daily_loss", "--config", file]);
    expect(reset.code).toBe(0);
    const after = await cli(["breaker", "status", "--config", file]);
    expect(after.stdout).toMatch(/daily_loss\s+ok/);
    await eventually("the gauge back at 0", async () =>
      (await running.metrics.render()).includes('keeper_circuit_breaker_tripped{breaker="daily_loss"} 0')
        ? true
        : undefined,
    );
    await webhook.close();
  }, 120_000);
});
