import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningKeeper } from "../../src/app/start-keeper.js";
import type { Position } from "../../src/core/schemas/prediction.js";
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

const ONE_USD = 1_000_000;

/**
 * Exits on what can be realized, end to end: two positions whose marks both rise 35 % above what
 * was paid. One market's book is thin (its bid stays at the price paid): its take-profit, which only
 * the mark reaches, sells nothing. The other's bid follows the mark: it is sold, and its proceeds
 * land on the local chain.
 */
describe("exit-rules end to end: a take-profit only the mark reaches sells nothing", () => {
  let sandbox: RunningSandbox;
  let keeper: RunningKeeper;
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let wallet: string;
  let thin: Position;
  let deep: Position;

  /** Sets the held side's mark to `markMicro` with half the book's spread `halfSpreadMicro`. */
  function quote(p: Position, markMicro: number, halfSpreadMicro: number) {
    sandbox.world.setPrice(p.marketId, p.isYes ? markMicro : ONE_USD - markMicro, { halfSpreadMicro });
  }
  const risen = (p: Position) => Math.round(Number(p.avgPriceUsd) * 1.35);

  async function polls(count: number) {
    const before = Number((await keeper.redis.zscore(keeper.keys.lastPolls, wallet)) ?? 0);
    await eventually(`${count} more polls`, async () =>
      Number((await keeper.redis.zscore(keeper.keys.lastPolls, wallet)) ?? 0) >= before + count
        ? true
        : undefined,
    );
  }

  beforeAll(async () => {
    ({ sandbox } = await startTestSandbox());
    redis = await testRedis("e2e-exit-realizable");
    wallet = sandbox.wallets[0] ?? "";
    const open = (await positionsOf(sandbox, wallet)).filter(
      (p) => p.marketMetadata.status === "open" && !p.claimable && !p.claimed && p.openOrders === 0,
    );
    const byMarket = new Map<string, Position>();
    // A mark 35 % up must stay a price (below $0.98).
    for (const p of open) if (risen(p) < 980_000 && !byMarket.has(p.marketId)) byMarket.set(p.marketId, p);
    const [first, second] = [...byMarket.values()];
    if (!first || !second)
      throw new Error("the sandbox seed no longer gives wallet 0 two free cheap positions");
    [thin, deep] = [first, second];
    for (const p of [thin, deep]) quote(p, Number(p.avgPriceUsd), 5_000);

    const side = (p: Position) => (p.isYes ? "yes" : "no");
    const extra = `strategies:
  - name: exit-rules
    overrides:
      - match: { marketId: "${thin.marketId}", side: ${side(thin)} }
        rules: { takeProfitPct: 20 }
      - match: { marketId: "${deep.marketId}", side: ${side(deep)} }
        rules: { takeProfitPct: 20 }
`;
    const config = await loadTestConfig(
      await writeKeeperConfig(sandbox, redis.prefix, {
        extra,
        walletYaml: `wallets:\n  - pubkey: ${wallet}\n`,
      }),
    );
    ({ keeper } = await startTestKeeper(config, sandbox));
  }, 60_000);

  afterAll(async () => {
    await keeper?.stop();
    await sandbox?.close();
    await redis?.cleanup();
  });

  it("sells the position whose bid meets the rule, and leaves the thin one open", async () => {
    await polls(2);
    expect(await keeper.ledger.list()).toEqual([]);
    const before = await usdcBalance(sandbox, wallet, sandbox.usdcMint);

    // Both marks 35 % up; the thin book's bid stays at what was paid, the deep one's follows.
    quote(thin, risen(thin), risen(thin) - Number(thin.avgPriceUsd));
    quote(deep, risen(deep), 5_000);

    const [row] = await eventually(
      "the deep position's close confirmed",
      async () => {
        const rows = await keeper.ledger.list();
        return rows.some((r) => r.status === "confirmed") ? rows : undefined;
      },
      60_000,
    );
    expect(row).toMatchObject({ key: `close-${deep.pubkey}`, status: "confirmed", strategy: "exit-rules" });
    expect(row?.reason).toMatch(/^take-profit: realizable pnl [\d.]+% >= 20%$/);
    // Its proceeds are on the owner's USDC account, as the build announced them.
    expect((await usdcBalance(sandbox, wallet, sandbox.usdcMint)) - before).toBe(
      BigInt(row?.amountMicroUsd ?? "x"),
    );

    // More polls: the thin position is never asked to close, though its mark is up 35 %.
    await polls(2);
    expect((await keeper.ledger.list()).map((r) => r.key)).toEqual([`close-${deep.pubkey}`]);
    const after = await positionsOf(sandbox, wallet);
    expect(after.find((p) => p.pubkey === deep.pubkey)).toBeUndefined();
    const still = after.find((p) => p.pubkey === thin.pubkey);
    expect(still?.marketMetadata.status).toBe("open");
    expect(still?.pnlUsdPercent).toBeGreaterThan(20); // the mark's pnl: the old rule would have sold it
    expect(Number(still?.sellPriceUsd)).toBe(Number(thin.avgPriceUsd));
    const record = sandbox.world.positions.find((p) => sandbox.world.positionPubkey(p) === thin.pubkey);
    expect(record?.closedAt).toBeUndefined();
  }, 120_000);
});
