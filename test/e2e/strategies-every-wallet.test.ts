import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningKeeper } from "../../src/app/start-keeper.js";
import type { Position } from "../../src/core/schemas/prediction.js";
import type { LedgerRow } from "../../src/keeper/state/ledger.js";
import type { RunningSandbox } from "../../src/sandbox/index.js";
import {
  eventually,
  loadTestConfig,
  positionsOf,
  startTestKeeper,
  startTestSandbox,
  usdcBalance,
  writeKeeperConfig,
} from "../helpers/keeper-harness.js";
import { lastPollsOf } from "../helpers/last-polls.js";
import { testRedis } from "../helpers/redis.js";

const WALLETS = 4;
const ONE_USD = 1_000_000;
const DCA_RAW = 100_000_000n; // one round: $100 of USDC, escrowed by the recurring order
const USDT_KEPT = 400_000_000n; // each wallet's 500 USDT less the 100 the sweep swaps

/** The market's yes price that puts a position's own side at `sidePriceMicro`. */
function yesPriceFor(position: Position, sidePriceMicro: number): number {
  const side = Math.min(ONE_USD - 10_000, Math.max(10_000, Math.round(sidePriceMicro)));
  return position.isYes ? side : ONE_USD - side;
}

const isOpen = (p: Position) => p.marketMetadata.status === "open" && !p.claimable && !p.claimed;

/**
 * Every built-in strategy, every wallet: with one config and four wallets, each wallet gets its own
 * claims, exits, DCA round, limit order (and its cancel) and sweep, under keys of its own, and each
 * lands in that wallet (its token balances on the local chain, the sandbox's orders by maker).
 */
describe("every strategy runs for every wallet", () => {
  let sandbox: RunningSandbox;
  let keeper: RunningKeeper;
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let wallets: readonly string[];
  let mints: { usdc: string; usdt: string; keep: string };
  /** Per wallet: the claimable positions at start, and the one position its exit rule closes. */
  const claimable = new Map<string, Position[]>();
  const exits = new Map<string, Position>();
  const before = new Map<string, { usdc: bigint; usdt: bigint; keep: bigint }>();

  beforeAll(async () => {
    ({ sandbox } = await startTestSandbox({ walletCount: WALLETS }));
    redis = await testRedis("e2e-every-wallet");
    wallets = sandbox.wallets;
    if (wallets.length !== WALLETS)
      throw new Error(`the sandbox gave ${wallets.length} wallets, not ${WALLETS}`);
    const token = (key: string) => sandbox.world.tokens.byKey(key)?.mint ?? "";
    mints = { usdc: sandbox.usdcMint, usdt: token("usdt"), keep: token("keep") };

    const positions = new Map<string, Position[]>();
    for (const wallet of wallets) positions.set(wallet, await positionsOf(sandbox, wallet));
    const all = [...positions.values()].flat();
    // Exit candidates: open, no open orders, and alone in their market (moving its price moves no
    // other wallet's position).
    const holders = new Map<string, number>();
    for (const p of all.filter(isOpen)) holders.set(p.marketId, (holders.get(p.marketId) ?? 0) + 1);
    for (const wallet of wallets) {
      const own = positions.get(wallet) ?? [];
      const winners = own.filter((p) => p.claimable && !p.claimed);
      const exit = own.find((p) => isOpen(p) && p.openOrders === 0 && holders.get(p.marketId) === 1);
      if (winners.length === 0 || !exit)
        throw new Error(
          `the sandbox seed no longer gives wallet ${wallet} a claimable and a lone open position`,
        );
      claimable.set(wallet, winners);
      exits.set(wallet, exit);
      // At its own average price: the take-profit does not hold before the test moves the price.
      sandbox.world.setPrice(exit.marketId, yesPriceFor(exit, Number(exit.avgPriceUsd)));
      before.set(wallet, {
        usdc: await usdcBalance(sandbox, wallet, mints.usdc),
        usdt: await usdcBalance(sandbox, wallet, mints.usdt),
        keep: await usdcBalance(sandbox, wallet, mints.keep),
      });
    }

    const side = (p: Position) => (p.isYes ? "yes" : "no");
    const overrides = [...exits.values()]
      .map(
        (p) =>
          `      - match: { marketId: "${p.marketId}", side: ${side(p)} }\n        rules: { takeProfitPct: 20 }`,
      )
      .join("\n");
    const extra = `strategies:
  - name: auto-claim
  - name: exit-rules
    overrides:
${overrides}
  - name: dca
    plans:
      - id: keep-weekly
        inputMint: USDC
        outputMint: KEEP
        inAmountRaw: "${DCA_RAW}"
        numberOfOrders: 2
        intervalSeconds: 604800
  - name: limit-orders
    orders:
      - id: buy-keep
        side: buy
        inputMint: USDC
        outputMint: KEEP
        inputDecimals: 6
        outputDecimals: 6
        amount: "10"
        price: "0.40"
        ttlSeconds: 3
  - name: sweep
    rules:
      - id: usdt-to-keep
        fromMint: USDT
        toMint: KEEP
        keepRaw: "${USDT_KEPT}"
        minSwapRaw: "1000000"
        slippageBps: 100
`;
    // Every sandbox wallet, one config: the harness lists them all.
    const config = await loadTestConfig(await writeKeeperConfig(sandbox, redis.prefix, { extra }));
    expect(config.wallets.map((w) => w.pubkey)).toEqual(wallets);
    ({ keeper } = await startTestKeeper(config, sandbox));
  }, 60_000);

  afterAll(async () => {
    await keeper?.stop();
    await sandbox?.close();
    await redis?.cleanup();
  });

  it("each wallet claims, exits, places its DCA round and limit order, cancels it and sweeps, on its own", async () => {
    for (const p of exits.values())
      sandbox.world.setPrice(p.marketId, yesPriceFor(p, Number(p.avgPriceUsd) * 1.5));

    /** The keys each wallet must end with, all confirmed. */
    const expectedKeys = (wallet: string) =>
      [
        ...(claimable.get(wallet) ?? []).map((p) => `claim-${p.pubkey}`),
        `close-${exits.get(wallet)?.pubkey}`,
        `dca-${wallet}-keep-weekly-1`,
        `limit-${wallet}-buy-keep-1`,
        `limit-${wallet}-buy-keep-1-cancel`,
        `sweep-${wallet}-usdt-to-keep-1`,
      ].sort();
    const rows = await eventually(
      "every wallet's intents confirmed",
      async () => {
        const all = await keeper.ledger.list();
        const done = wallets.every((wallet) =>
          expectedKeys(wallet).every((key) => all.find((r) => r.key === key)?.status === "confirmed"),
        );
        return done ? all : undefined;
      },
      150_000,
    );

    const rowsOf = (wallet: string) => rows.filter((r) => r.wallet === wallet);
    for (const wallet of wallets) {
      // The ledger: exactly these rows for this wallet, each confirmed and signed, each its own.
      const own = rowsOf(wallet);
      expect(own.map((r) => r.key).sort()).toEqual(expectedKeys(wallet));
      for (const row of own) {
        expect(row).toMatchObject({ status: "confirmed", wallet });
        expect(row.intent.wallet).toBe(wallet);
      }
      const byKey = (key: string) => own.find((r) => r.key === key) as LedgerRow;
      expect(byKey(`close-${exits.get(wallet)?.pubkey}`).reason).toMatch(/^take-profit: realizable pnl/);
      expect(byKey(`limit-${wallet}-buy-keep-1-cancel`).reason).toMatch(/^ttl: order buy-keep/);

      // The sandbox's orders by maker: the wallet's own recurring order, open, and its trigger order, cancelled.
      const orders = [...sandbox.world.swapOrders.values()].filter((o) => o.maker === wallet);
      expect(orders.filter((o) => o.kind === "recurring" && o.status === "open")).toHaveLength(1);
      const triggers = orders.filter((o) => o.kind === "trigger");
      expect(triggers.map((o) => [o.order, o.status])).toEqual([
        [byKey(`limit-${wallet}-buy-keep-1`).order, "cancelled"],
      ]);

      // The chain: USDC moved by exactly its claims and close (in) and its DCA round (escrowed out;
      // the trigger's 10 came back with its cancel); USDT down to what the sweep keeps; KEEP came in.
      const paid = own
        .filter((r) => r.kind === "claim" || r.kind === "close")
        .reduce((sum, r) => sum + BigInt(r.amountMicroUsd ?? "0"), 0n);
      const start = before.get(wallet) ?? { usdc: 0n, usdt: 0n, keep: 0n };
      expect(await usdcBalance(sandbox, wallet, mints.usdc)).toBe(start.usdc + paid - DCA_RAW);
      expect(await usdcBalance(sandbox, wallet, mints.usdt)).toBe(USDT_KEPT);
      const keepGained = (await usdcBalance(sandbox, wallet, mints.keep)) - start.keep;
      expect(keepGained).toBeGreaterThan(200_000_000n); // $100 of USDT at about $0.42 a KEEP, less fees
      expect(keepGained).toBeLessThan(240_000_000n);

      // The service: the winners claimed, the exited position gone.
      const after = await positionsOf(sandbox, wallet);
      for (const p of claimable.get(wallet) ?? [])
        expect(after.find((a) => a.pubkey === p.pubkey)?.claimed).toBe(true);
      expect(after.find((a) => a.pubkey === exits.get(wallet)?.pubkey)).toBeUndefined();
    }

    // More polls of every wallet add nothing, and no wallet's intent ever met another wallet's key.
    const ticks = await lastPollsOf(keeper.redis, keeper.keys);
    await eventually("two more polls of every wallet", async () => {
      const now = await lastPollsOf(keeper.redis, keeper.keys);
      return wallets.every((w) => Number(now[w]) >= Number(ticks[w]) + 2) ? true : undefined;
    });
    expect((await keeper.ledger.list()).map((r) => r.key).sort()).toEqual(rows.map((r) => r.key).sort());
    expect(await keeper.metrics.render()).not.toContain('reason="other_wallet"');
  }, 240_000);
});
