import { readFile, writeFile } from "node:fs/promises";
import { Connection } from "@solana/web3.js";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiClient } from "../../src/api/index.js";
import type { RunningKeeper } from "../../src/app/start-keeper.js";
import { priorityFeeSettings, recentPriorityFeesOn } from "../../src/chain/priority-fee.js";
import { contractsMicroOf } from "../../src/core/contracts.js";
import type { Position } from "../../src/core/schemas/prediction.js";
import { ClaimCostEstimator, solPriceFrom } from "../../src/keeper/reads/claim-cost.js";
import type { RunningSandbox } from "../../src/sandbox/index.js";
import { TokenPrices } from "../../src/signer/token-prices.js";
import { startCountingProxy } from "../helpers/counting-proxy.js";
import { openForecastPosition } from "../helpers/forecast-position.js";
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

const sideOf = (p: Position) => (p.isYes ? "yes" : "no");
const isOpenHeld = (p: Position) =>
  p.marketMetadata.status === "open" &&
  !p.claimed &&
  contractsMicroOf(p) > 0n &&
  p.contractsMicro !== undefined;

/**
 * Claims from the holdings index. The keeper talks to the sandbox through a proxy that writes down
 * every request; its sweeps run once a day, so after the sweep at start only the market watcher acts.
 * When a market with several indexed winners resolves (it was closed and unresolved at the sweep),
 * each winner costs one claim build and no read of its wallet's positions; the smallest payout is left
 * to the service (auto-claim's fee rule), and a Forecast winner is not claimed at all.
 */
describe("claims from the index: one request per winner, no positions read", () => {
  let sandbox: RunningSandbox;
  let keeper: RunningKeeper;
  let proxy: Awaited<ReturnType<typeof startCountingProxy>>;
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let marketId: string;
  let side: "yes" | "no";
  let small: Position;
  let claimed: Position[];
  let forecast: Position;

  beforeAll(async () => {
    ({ sandbox } = await startTestSandbox({ walletCount: 12 }));
    redis = await testRedis("e2e-index-claims");
    proxy = await startCountingProxy(sandbox.url);
    /** A Forecast market's position: the position does not say so, its market does. */
    const isForecast = (p: Position) => sandbox.world.findMarket(p.marketId)?.forecast !== undefined;
    const positions = (await Promise.all(sandbox.wallets.map((w) => positionsOf(sandbox, w)))).flat();
    // The market with the most holders of one side, at least three, whose smallest payout is alone.
    const bySide = new Map<string, Position[]>();
    for (const p of positions.filter((p) => isOpenHeld(p) && !isForecast(p))) {
      const key = `${p.marketId} ${sideOf(p)}`;
      bySide.set(key, [...(bySide.get(key) ?? []), p]);
    }
    const pick = [...bySide.values()]
      .map((list) => [...list].sort((a, b) => Number(contractsMicroOf(a) - contractsMicroOf(b))))
      .filter((list) => {
        const [first, second] = list;
        return list.length >= 3 && first && second && contractsMicroOf(first) < contractsMicroOf(second);
      })
      .sort((a, b) => b.length - a.length)[0];
    if (!pick?.[0]) throw new Error("the sandbox seed no longer gives a market with three winners");
    [small, ...claimed] = pick;
    marketId = small.marketId;
    side = sideOf(small);
    // A Forecast position of a wallet that wins nothing here: bought through the service's execute endpoint.
    const winning = new Set(pick.map((p) => p.ownerPubkey));
    const other = sandbox.wallets.findIndex((w) => !winning.has(w));
    forecast = await openForecastPosition(sandbox, other);
    expect(isForecast(forecast)).toBe(true);

    // The claim's cost as the keeper will estimate it, and a ratio that leaves just the smallest payout.
    const client = createApiClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey });
    const logger = pino({ level: "silent" });
    const probe = await loadTestConfig(await writeKeeperConfig(sandbox, redis.prefix));
    const cost = await new ClaimCostEstimator({
      recentFees: recentPriorityFeesOn(new Connection(sandbox.chain?.url ?? ""), logger),
      settings: priorityFeeSettings(probe.signer),
      solPrice: solPriceFrom(new TokenPrices(client.tokens.search)),
      logger,
    }).microUsd();
    const [a, b] = [Number(contractsMicroOf(small)), Number(contractsMicroOf(claimed[0] as Position))];
    const ratio = Math.round(Math.sqrt(a * b) / Number(cost));
    expect(ratio).toBeGreaterThan(0);

    // A real market closes before its result comes: the keeper's one sweep sees it closed and
    // unresolved, and must keep its holders indexed for the watcher to claim from when it resolves.
    sandbox.world.closeMarket(marketId);

    const file = await writeKeeperConfig(sandbox, redis.prefix, {
      pollPositions: "0 0 3 * * *",
      pollOrders: "0 0 3 * * *",
      extra: `watcher:\n  schedule: "* * * * * *"\n  retriggerSeconds: 2\nstrategies:\n  - name: auto-claim\n    minPayoutToCostRatio: ${ratio}\n`,
    });
    // The keeper's service is the proxy; its chain is the sandbox's own.
    await writeFile(
      file,
      (await readFile(file, "utf8")).replace(`baseUrl: ${sandbox.url}`, `baseUrl: ${proxy.url}`),
    );
    ({ keeper } = await startTestKeeper(await loadTestConfig(file), sandbox));
  }, 90_000);

  afterAll(async () => {
    await keeper?.stop();
    await proxy?.close();
    await sandbox?.close();
    await redis?.cleanup();
  });

  it("claims each winner with one build, reads no positions, leaves the small payout and skips Forecast", async () => {
    const winners = [small, ...claimed];
    await eventually(
      "every wallet swept once, its holdings indexed, and every genesis claim done",
      async () => {
        const polled = await lastPollsOf(keeper.redis, keeper.keys);
        if (!sandbox.wallets.every((w) => polled[w] !== undefined)) return undefined;
        const held = await keeper.redis.hgetall(keeper.keys.holdingsMarkets);
        if (held[marketId] === undefined || held[forecast.marketId] === undefined) return undefined;
        const ledger = await keeper.ledger.list();
        return ledger.some(
          (row) => !["confirmed", "failed", "refused", "settled", "left_to_service"].includes(row.status),
        )
          ? undefined
          : true;
      },
      90_000,
    );
    const usdc = sandbox.usdcMint;
    const wallets = [...new Set([...winners, forecast].map((p) => p.ownerPubkey))];
    const before = new Map<string, bigint>();
    for (const w of wallets) before.set(w, await usdcBalance(sandbox, w, usdc));
    const from = proxy.seen.length;

    sandbox.world.resolveMarket(marketId, side);
    sandbox.world.resolveMarket(forecast.marketId, sideOf(forecast));

    const rows = await eventually(
      "a confirmed claim of each winner worth its fee, the small one left to the service",
      async () => {
        const ledger = await keeper.ledger.list();
        const done =
          claimed.every((p) =>
            ledger.some((r) => r.key === `claim-${p.pubkey}` && r.status === "confirmed"),
          ) && ledger.some((r) => r.key === `claim-${small.pubkey}-left` && r.status === "left_to_service");
        return done ? ledger : undefined;
      },
      90_000,
    );
    // A few more watcher cycles (retriggerSeconds 2): the winners are decided again and nothing is asked.
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    const since = proxy.seen.slice(from);

    for (const p of winners) {
      const builds = since.filter(
        (r) => r.method === "POST" && r.path === `/prediction/v1/positions/${p.pubkey}/claim`,
      );
      expect(builds.length, `claim builds of ${p.pubkey}`).toBe(p === small ? 0 : 1);
    }
    for (const p of [...winners, forecast]) {
      const reads = since.filter(
        (r) =>
          r.method === "GET" &&
          ((r.path === "/prediction/v1/positions" && r.query.get("ownerPubkey") === p.ownerPubkey) ||
            r.path === `/prediction/v1/positions/${p.pubkey}`),
      );
      expect(reads.length, `positions reads for ${p.ownerPubkey}`).toBe(0);
    }
    expect(since.filter((r) => r.path === `/prediction/v1/positions/${forecast.pubkey}/claim`)).toHaveLength(
      0,
    );
    expect(rows.some((r) => r.key.startsWith(`claim-${forecast.pubkey}`))).toBe(false);

    // Confirmed once: each wallet got exactly its claimed payouts on the chain, the small one nothing
    // yet; the Forecast winner is paid by its market's own settlement, without a claim.
    for (const w of wallets) {
      const paid = [...claimed, forecast]
        .filter((p) => p.ownerPubkey === w)
        .reduce(
          (sum, p) =>
            sum +
            (p === forecast
              ? contractsMicroOf(p)
              : BigInt(rows.find((r) => r.key === `claim-${p.pubkey}`)?.amountMicroUsd ?? "0")),
          0n,
        );
      expect((await usdcBalance(sandbox, w, usdc)) - (before.get(w) ?? 0n), `USDC received by ${w}`).toBe(
        paid,
      );
    }
    for (const p of claimed)
      expect(rows.find((r) => r.key === `claim-${p.pubkey}`)?.amountMicroUsd).toBe(
        contractsMicroOf(p).toString(),
      );

    const metrics = await keeper.metrics.render();
    expect(metrics).toContain(`keeper_index_claims_total{outcome="claimed"} ${claimed.length}`);
    expect(metrics).toContain('keeper_index_claims_total{outcome="left_to_service"} 1');
    expect(metrics).toMatch(/keeper_index_claims_total\{outcome="nothing"\} [1-9]/);
    expect(metrics).not.toMatch(/keeper_targeted_polls_total\{trigger="resolved"\} [1-9]/);
  }, 240_000);
});
