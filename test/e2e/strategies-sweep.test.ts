import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningKeeper } from "../../src/app/start-keeper.js";
import type { RunningSandbox } from "../../src/sandbox/index.js";
import {
  eventually,
  loadTestConfig,
  startTestKeeper,
  startTestSandbox,
  usdcBalance,
  writeKeeperConfig,
} from "../helpers/keeper-harness.js";
import { testRedis } from "../helpers/redis.js";

describe("sweep end to end: the excess of a token is swapped through the swap build, assembled and signed here", () => {
  let sandbox: RunningSandbox;
  let keeper: RunningKeeper;
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let wallet: string;

  beforeAll(async () => {
    ({ sandbox } = await startTestSandbox());
    redis = await testRedis("e2e-sweep");
    wallet = sandbox.wallets[0] ?? "";
  }, 60_000);

  afterAll(async () => {
    await keeper?.stop();
    await sandbox?.close();
    await redis?.cleanup();
  });

  it("swaps what is above keepRaw once, and the target token arrives", async () => {
    const keepMint = sandbox.world.tokens.byKey("keep")?.mint ?? "";
    const usdcBefore = await usdcBalance(sandbox, wallet, sandbox.usdcMint);
    const keepBefore = await usdcBalance(sandbox, wallet, keepMint);
    const keepRaw = usdcBefore - 100_000_000n; // sweep $100 of USDC into KEEP
    const config = await loadTestConfig(
      await writeKeeperConfig(sandbox, redis.prefix, {
        walletYaml: `wallets:\n  - pubkey: ${wallet}\n`,
        extra: `strategies:
  - name: sweep
    rules:
      - id: usdc-to-keep
        fromMint: USDC
        toMint: KEEP
        keepRaw: "${keepRaw}"
        minSwapRaw: "1000000"
        slippageBps: 100
`,
      }),
    );
    ({ keeper } = await startTestKeeper(config, sandbox));
    const running = keeper;

    const row = await eventually(
      "the sweep confirmed",
      async () => {
        const found = await running.ledger.get(`sweep-${wallet}-usdc-to-keep-1`);
        return found?.status === "confirmed" ? found : undefined;
      },
      60_000,
    );
    expect(row).toMatchObject({ kind: "swap", strategy: "sweep" });
    expect(row.intent).toMatchObject({
      inputMint: sandbox.usdcMint,
      outputMint: keepMint,
      amount: "100000000",
      slippageBps: 100,
    });
    expect(row.signature).toBeTruthy();

    // On chain: exactly the excess left, and KEEP worth about $100 arrived ($0.42 a KEEP, less fees).
    expect(await usdcBalance(sandbox, wallet, sandbox.usdcMint)).toBe(keepRaw);
    const gained = (await usdcBalance(sandbox, wallet, keepMint)) - keepBefore;
    expect(gained).toBeGreaterThan(200_000_000n);
    expect(gained).toBeLessThan(240_000_000n);

    // Nothing more to sweep: more polls ask for nothing.
    const before = Number(await running.redis.zscore(running.keys.lastPolls, wallet));
    await eventually("two more polls", async () =>
      Number(await running.redis.zscore(running.keys.lastPolls, wallet)) >= before + 2 ? true : undefined,
    );
    expect((await running.ledger.list()).map((r) => r.key)).toEqual([`sweep-${wallet}-usdc-to-keep-1`]);
    expect(await running.metrics.render()).toContain(
      'keeper_transactions_total{kind="swap",outcome="confirmed"} 1',
    );
  }, 120_000);
});
