import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningKeeper } from "../../src/app/start-keeper.js";
import type { Position } from "../../src/core/schemas/prediction.js";
import { TERMINAL_STATUSES } from "../../src/keeper/state/ledger.js";
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
import { testRedis } from "../helpers/redis.js";

const WALLETS = 4;
const USDT_KEPT = 400_000_000n; // each wallet's 500 USDT less the 100 the sweep would swap

/**
 * A hostile service: the sandbox's `redirectFunds` fault builds every swap and order so that the
 * wallet's input goes to a stranger's token account (an ordinary key's, not the pool's or the order's
 * escrow), and quotes swaps with `otherAmountThreshold: "0"`. With four wallets and every strategy
 * that spends (dca, limit-orders, sweep) plus auto-claim, Keeper's signer must sign none of those:
 * each ends `refused`, nothing reaches the stranger on the chain, and the wallets keep their inputs.
 * Claims, which the fault leaves honest, still land: the keeper was running all along.
 */
describe("a hostile service that redirects funds gets nothing signed", () => {
  let sandbox: RunningSandbox;
  let keeper: RunningKeeper;
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let wallets: readonly string[];
  let mints: { usdc: string; usdt: string; keep: string };
  const claimable = new Map<string, Position[]>();
  const before = new Map<string, { usdc: bigint; usdt: bigint; keep: bigint }>();

  beforeAll(async () => {
    ({ sandbox } = await startTestSandbox({ walletCount: WALLETS }));
    sandbox.faults.set({ redirectFunds: true });
    redis = await testRedis("e2e-hostile");
    wallets = sandbox.wallets;
    if (wallets.length !== WALLETS)
      throw new Error(`the sandbox gave ${wallets.length} wallets, not ${WALLETS}`);
    const token = (key: string) => sandbox.world.tokens.byKey(key)?.mint ?? "";
    mints = { usdc: sandbox.usdcMint, usdt: token("usdt"), keep: token("keep") };
    for (const wallet of wallets) {
      const winners = (await positionsOf(sandbox, wallet)).filter((p) => p.claimable && !p.claimed);
      if (winners.length === 0)
        throw new Error(`the sandbox seed no longer gives wallet ${wallet} a claimable position`);
      claimable.set(wallet, winners);
      before.set(wallet, {
        usdc: await usdcBalance(sandbox, wallet, mints.usdc),
        usdt: await usdcBalance(sandbox, wallet, mints.usdt),
        keep: await usdcBalance(sandbox, wallet, mints.keep),
      });
    }
    const extra = `strategies:
  - name: auto-claim
  - name: dca
    plans:
      - id: keep-weekly
        inputMint: USDC
        outputMint: KEEP
        inAmountRaw: "100000000"
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
        ttlSeconds: 3600
  - name: sweep
    rules:
      - id: usdt-to-keep
        fromMint: USDT
        toMint: KEEP
        keepRaw: "${USDT_KEPT}"
        minSwapRaw: "1000000"
        slippageBps: 100
`;
    const config = await loadTestConfig(await writeKeeperConfig(sandbox, redis.prefix, { extra }));
    expect(config.wallets.map((w) => w.pubkey)).toEqual(wallets);
    ({ keeper } = await startTestKeeper(config, sandbox));
  }, 60_000);

  afterAll(async () => {
    await keeper?.stop();
    await sandbox?.close();
    await redis?.cleanup();
  });

  it("refuses every redirected swap and order; the stranger holds nothing and the wallets keep their inputs", async () => {
    const spendKeys = (wallet: string) => [
      `dca-${wallet}-keep-weekly-1`,
      `limit-${wallet}-buy-keep-1`,
      `sweep-${wallet}-usdt-to-keep-1`,
    ];
    const claimKeys = (wallet: string) => (claimable.get(wallet) ?? []).map((p) => `claim-${p.pubkey}`);
    const terminal = new Set<string>(TERMINAL_STATUSES);
    const rows = await eventually(
      "every wallet's orders, sweep and claims decided",
      async () => {
        const all = await keeper.ledger.list();
        const decided = (key: string) => terminal.has(all.find((r) => r.key === key)?.status ?? "");
        const done = wallets.every((w) => [...spendKeys(w), ...claimKeys(w)].every(decided));
        return done ? all : undefined;
      },
      150_000,
    );

    const spending = wallets.flatMap(spendKeys).map((key) => rows.find((r) => r.key === key));
    const signed = spending.filter((r) => r?.status !== "refused" || r.signature);
    expect(
      signed.map((r) => `${r?.key}: ${r?.status} ${r?.signature ?? "(no signature)"}`),
      "swap and order intents the signer did not refuse",
    ).toEqual([]);
    // Any policy refusal will do; each is named by a bounded reason and explained in `error`.
    for (const row of spending) {
      expect(row?.reason, `${row?.key} names its policy refusal`).toMatch(/^[a-z][a-z0-9_]*$/);
      expect(row?.error, `${row?.key} explains it`).toBeTruthy();
    }
    // No order exists at the service: an order is created only when its deposit lands.
    expect([...sandbox.world.swapOrders.values()].filter((o) => wallets.includes(o.maker))).toEqual([]);

    // The chain: the stranger holds nothing, of any mint.
    const stranger = sandbox.chain?.assets.stranger.publicKey.toBase58() ?? "";
    for (const mint of Object.values(mints))
      expect(await usdcBalance(sandbox, stranger, mint), `the stranger's ${mint}`).toBe(0n);
    const held = sandbox.chain?.chain
      .tokenAccountsByOwner(sandbox.chain.assets.stranger.publicKey)
      .map((a) => `${a.state.mint.toBase58()} ${a.state.amount}`)
      .filter((line) => !line.endsWith(" 0"));
    expect(held, "the stranger's token accounts").toEqual([]);

    // The wallets: USDT (the sweep's input) and KEEP untouched; USDC (the orders' input) moved only
    // by the claims that landed.
    for (const wallet of wallets) {
      const start = before.get(wallet) ?? { usdc: 0n, usdt: 0n, keep: 0n };
      const claims = rows.filter((r) => r.wallet === wallet && r.kind === "claim");
      expect(claims.map((r) => r.status)).toEqual(claimKeys(wallet).map(() => "confirmed"));
      const paid = claims.reduce((sum, r) => sum + BigInt(r.amountMicroUsd ?? "0"), 0n);
      expect(await usdcBalance(sandbox, wallet, mints.usdc)).toBe(start.usdc + paid);
      expect(await usdcBalance(sandbox, wallet, mints.usdt)).toBe(start.usdt);
      expect(await usdcBalance(sandbox, wallet, mints.keep)).toBe(start.keep);
    }
  }, 240_000);
});
