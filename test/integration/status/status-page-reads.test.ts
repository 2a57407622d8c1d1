import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collectAll, createApiClient, iterateOrders } from "../../../src/api/index.js";
import type { RunningKeeper } from "../../../src/app/start-keeper.js";
import { formatUsd } from "../../../src/core/money.js";
import { walletValueMicroUsd } from "../../../src/core/position-value.js";
import type { Order, Position } from "../../../src/core/schemas/prediction.js";
import { ValueSeries } from "../../../src/keeper/state/value-series.js";
import type { RunningSandbox } from "../../../src/sandbox/index.js";
import { centsText } from "../../../src/status/money-text.js";
import {
  eventually,
  loadTestConfig,
  positionsOf,
  startTestKeeper,
  startTestSandbox,
  writeKeeperConfig,
} from "../../helpers/keeper-harness.js";
import { lastPollsOf } from "../../helpers/last-polls.js";
import { testRedis } from "../../helpers/redis.js";

/** Concurrent views of the page, as a page left open in many tabs or a loop of GETs would send. */
const VIEWS = 40;

/**
 * Anyone who reaches the ops port can load `/`: the page must cost the service nothing, or a loop
 * of GETs would spend the rate limit claims and exits need. A keeper (worker role, its own ops
 * server) polls each wallet once; then many concurrent views reach the sandbox not once, and still
 * show every wallet's positions and pending orders as that poll saw them.
 */
describe("status page reads no service", () => {
  let sandbox: RunningSandbox;
  let keeper: RunningKeeper;
  let redis: Awaited<ReturnType<typeof testRedis>>;

  beforeAll(async () => {
    ({ sandbox } = await startTestSandbox());
    redis = await testRedis("status-page-reads");
    const config = await loadTestConfig(
      await writeKeeperConfig(sandbox, redis.prefix, {
        // Far from any position's figures: the page names the nearest rule, nothing is closed.
        extra: "strategies:\n  - name: exit-rules\n    takeProfitPct: 5000\n    stopLossPct: 99\n",
      }),
    );
    // No scheduler: nothing polls but the polls this test asks for, so the count below is the page's.
    ({ keeper } = await startTestKeeper(config, sandbox, ["worker"]));
  }, 60_000);

  afterAll(async () => {
    await keeper?.stop();
    await sandbox?.close();
    await redis?.cleanup();
  });

  it("answers many concurrent views with no request to the service, showing what the poll saw", async () => {
    const tick = Math.floor(Date.now() / 1000);
    for (const wallet of sandbox.wallets)
      await keeper.queues.poll.add("poll", { wallet, kind: "orders", tick }, { jobId: `t-${wallet}` });
    await eventually(
      "every wallet polled",
      async () => {
        const polled = await lastPollsOf(keeper.redis, keeper.keys);
        return sandbox.wallets.every((w) => polled[w] !== undefined) ? true : undefined;
      },
      60_000,
    );
    const client = createApiClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey });
    const seen = new Map<string, { positions: Position[]; orders: Order[] }>();
    for (const wallet of sandbox.wallets)
      seen.set(wallet, {
        positions: (await positionsOf(sandbox, wallet)).filter((p) => !p.claimed),
        orders: (await collectAll(iterateOrders(client, { ownerPubkey: wallet }))).filter(
          (o) => o.status === "pending",
        ),
      });
    expect([...seen.values()].flatMap((s) => s.positions).length).toBeGreaterThan(0);
    expect([...seen.values()].flatMap((s) => s.orders).length).toBeGreaterThan(0);

    let serviceRequests = 0;
    const count = () => {
      serviceRequests += 1;
    };
    sandbox.server.server.on("request", count);
    let pages: string[];
    try {
      pages = await Promise.all(
        Array.from({ length: VIEWS }, async () => {
          const answer = await fetch(`${keeper.ops?.url}/`);
          expect(answer.status).toBe(200);
          return answer.text();
        }),
      );
    } finally {
      sandbox.server.server.off("request", count);
    }
    expect(serviceRequests).toBe(0);

    for (const body of pages) {
      const articles = body.split('<article class="wallet"').slice(1);
      expect(articles).toHaveLength(sandbox.wallets.length);
      for (const [i, wallet] of sandbox.wallets.entries()) {
        const article = articles[i] ?? "";
        expect(article).toContain(`data-wallet="${wallet}"`);
        const { positions, orders } = seen.get(wallet) ?? { positions: [], orders: [] };
        expect(article).toContain(`<h4>Positions (${positions.length})</h4>`);
        for (const p of positions) expect(article).toContain(`data-position="${p.pubkey}"`);
        expect(article).toContain("As the last poll saw them");
        expect(article).toContain(`<h4>Open orders (${orders.length})</h4>`);
        for (const o of orders) expect(article).toContain(o.pubkey);
        expect(article).toContain("Pending prediction orders as the last orders poll listed them");
      }
      // The nearest exit rule is worked out from the recorded positions: in one unit, in full on hover.
      expect(body).toMatch(
        /<td data-label="nearest rule" class="exit" title="(take-profit|stop-loss): realizable pnl -?[\d.]+% \((&gt;= 5000|&lt;= -99)%\)">(take-profit|stop-loss) in [+-][\d.]+ %<\/td>/,
      );
      // The fleet's value now is what the polls saw, and the polls wrote the chart's sample of it.
      const fleetValue = [...seen.values()].reduce((sum, s) => sum + walletValueMicroUsd(s.positions), 0n);
      const fleet = body.slice(body.indexOf('id="fleet-totals"'), body.indexOf("</section>"));
      expect(fleet).toContain(
        `data-figure="value"><span class="label">value now (mark)</span><b class="value"><span class="money" title="$${formatUsd(fleetValue)}">`,
      );
      expect(body).toMatch(
        new RegExp(
          `<circle class="point" [^>]+><title>[^<]+ UTC: ${centsText(fleetValue).replace("$", "\\$")}</title>`,
        ),
      );
    }
    // The last sample is the fleet's total once every wallet's poll wrote its value.
    expect((await new ValueSeries(keeper.redis, keeper.keys).samples()).at(-1)?.valueMicroUsd).toBe(
      [...seen.values()].reduce((sum, s) => sum + walletValueMicroUsd(s.positions), 0n),
    );
  }, 120_000);
});
