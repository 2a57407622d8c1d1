import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiClient } from "../../../../src/api/index.js";
import { loadConfig } from "../../../../src/config/load-config.js";
import { redisKeys } from "../../../../src/keeper/names.js";
import { PauseSwitch } from "../../../../src/keeper/operator/pause.js";
import { IndexClaims } from "../../../../src/keeper/pipeline/index-claims.js";
import { createQueues, type KeeperQueues } from "../../../../src/keeper/queues/queues.js";
import { HoldingsIndex } from "../../../../src/keeper/state/holdings.js";
import { Ledger } from "../../../../src/keeper/state/ledger.js";
import { MarketWatcher } from "../../../../src/keeper/watch/market-watcher.js";
import type { RunningSandbox } from "../../../../src/sandbox/index.js";
import { autoClaim } from "../../../../strategies/auto-claim.js";
import { startCheckedSandbox } from "../../../helpers/checked-sandbox.js";
import { testHolding } from "../../../helpers/holdings.js";
import { REDIS_URL, testRedis } from "../../../helpers/redis.js";

const [WITH_COUNT, WITHOUT_COUNT] = [
  "7YttLkHDoNj9wyDur5pM1ejNaAvT9X4eqaYcHQqtj2G5",
  "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin",
];
const [POS_A, POS_B] = [
  "PosA111111111111111111111111111111111111111",
  "PosB111111111111111111111111111111111111111",
];

/**
 * The watcher over the sandbox, real Redis and queues: a market resolves; the winner whose index entry
 * carries its exact count is claimed from the index (a build queued, no poll), the one whose entry
 * does not is polled as before.
 */
describe("market watcher: a resolution's winners claimed from the index, or polled", () => {
  let sandbox: RunningSandbox;
  let ctx: Awaited<ReturnType<typeof testRedis>>;
  let queues: KeeperQueues;

  beforeAll(async () => {
    sandbox = await startCheckedSandbox({ port: 0, chain: false, rateLimit: false });
    ctx = await testRedis("watcher-index-claims");
    queues = createQueues({ url: REDIS_URL }, ctx.prefix, await loadConfig({ env: {} }));
  });
  afterAll(async () => {
    await queues?.close();
    await ctx?.cleanup();
    await sandbox?.close();
  });

  it("claims the winner with an exact count from its entry and polls the other", async () => {
    const client = createApiClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey });
    const events = await client.prediction.listEvents({ includeMarkets: true });
    const found = events.data
      .flatMap((e) => (e.markets ?? []).map((m) => ({ eventId: e.eventId, marketId: m.marketId, m })))
      .find(({ m }) => m.status === "open");
    if (!found) throw new Error("the sandbox has no open market");
    const keys = redisKeys(ctx.prefix, "live");
    const index = new HoldingsIndex(ctx.redis, keys);
    const at = { marketId: found.marketId, eventId: found.eventId, side: "yes" as const };
    await index.replaceWallet(WITH_COUNT, [
      testHolding({ wallet: WITH_COUNT, position: POS_A, contractsMicro: "5000000", ...at }),
    ]);
    await index.replaceWallet(WITHOUT_COUNT, [
      testHolding({ wallet: WITHOUT_COUNT, position: POS_B, ...at }),
    ]);
    const ledger = new Ledger(ctx.redis, keys);
    const logger = pino({ level: "silent" });
    const watcher = new MarketWatcher({
      client,
      index,
      redis: ctx.redis,
      keys,
      poll: queues.poll,
      pause: new PauseSwitch(ctx.redis, keys),
      logger,
      settings: {
        bandPct: 2,
        retriggerSeconds: 600,
        pageSize: 50,
        wallets: new Set([WITH_COUNT, WITHOUT_COUNT]),
      },
      claims: new IndexClaims({
        mode: "live",
        strategies: [
          { name: "auto-claim", strategy: autoClaim as never, config: autoClaim.configSchema.parse({}) },
        ],
        ledger,
        actions: queues.actions,
        logger,
        claimCost: { microUsd: async () => "2000" },
      }),
    });
    expect((await watcher.run()).decisions).toEqual([]);

    sandbox.world.resolveMarket(found.marketId, "yes");
    const cycle = await watcher.run();
    expect(cycle.claimedFromIndex).toEqual([WITH_COUNT]);
    expect(cycle.polled).toEqual([WITHOUT_COUNT]);
    expect((await ledger.get(`claim-${POS_A}`))?.status).toBe("pending");
    expect(await ledger.get(`claim-${POS_B}`)).toBeUndefined();
    const builds = await queues.actions.getJobs(["prioritized", "waiting"]);
    expect(builds.map((j) => j.data.intentKey)).toEqual([`claim-${POS_A}`]);
    const polls = await queues.poll.getJobs(["prioritized", "waiting"]);
    expect(polls.map((j) => [j.data.wallet, j.data.target?.trigger])).toEqual([[WITHOUT_COUNT, "resolved"]]);
  });
});
