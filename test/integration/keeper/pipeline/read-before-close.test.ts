import type { Queue } from "bullmq";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, collectAll, createApiClient, iteratePositions } from "../../../../src/api/index.js";
import type { Intent } from "../../../../src/core/intent.js";
import type { Position } from "../../../../src/core/schemas/prediction.js";
import type { Strategy } from "../../../../src/core/strategy.js";
import { QUEUES } from "../../../../src/keeper/names.js";
import { processAction } from "../../../../src/keeper/pipeline/action-worker.js";
import { type CloseDropReason, positionReader } from "../../../../src/keeper/pipeline/read-before-close.js";
import type { SignJobData } from "../../../../src/keeper/queues/queues.js";
import { StrategyStateStore } from "../../../../src/keeper/state/strategy-state.js";
import type { RunningSandbox } from "../../../../src/sandbox/index.js";
import { exitRules } from "../../../../strategies/exit-rules/index.js";
import { serviceBuildApi } from "../../../helpers/build-api.js";
import { startCheckedSandbox } from "../../../helpers/checked-sandbox.js";
import { type LedgerAndQueues, ledgerAndQueues } from "../../../helpers/ledger-queues.js";

/**
 * Read before selling, against the sandbox over HTTP and real Redis: a close asked for on a poll is
 * built only if the position, read alone right before the build, is still open and still meets the
 * rule that fired. What changed in between drops it, counted, recorded as deferred (not failed).
 */
describe("read before selling: closes dropped when the position changed since the poll", () => {
  let sandbox: RunningSandbox;
  let ctx: LedgerAndQueues;
  let sign: Queue<SignJobData>;
  let client: ApiClient;
  let wallet: string;
  let open: Position[];
  const dropped: CloseDropReason[] = [];
  const config = exitRules.configSchema.parse({ takeProfitPriceUsd: "0.75" });

  beforeAll(async () => {
    sandbox = await startCheckedSandbox({ port: 0, chain: false, rateLimit: false });
    ctx = await ledgerAndQueues("read-before-close");
    sign = ctx.queue(QUEUES.sign);
    client = createApiClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey });
    wallet = sandbox.wallets[0] ?? "";
    const positions = await collectAll(iteratePositions(client, { ownerPubkey: wallet }));
    // One position per market, so setting one market's price changes one position.
    const seen = new Set<string>();
    open = positions.filter((p) => {
      const fresh = p.marketMetadata.status === "open" && !p.claimable && !p.claimed && p.openOrders === 0;
      if (!fresh || seen.has(p.marketId)) return false;
      seen.add(p.marketId);
      return true;
    });
  });
  afterAll(async () => {
    await ctx.cleanup();
    await sandbox.close();
  });

  const deps = () => ({
    api: serviceBuildApi(client),
    ledger: ctx.ledger,
    sign,
    logger: pino({ level: "silent" }),
    readBeforeClose: {
      readPosition: positionReader(client.prediction.getPosition),
      strategies: [{ name: exitRules.name, strategy: exitRules as Strategy, config }],
      loadState: (w: string, s: string) => new StrategyStateStore(ctx.redis, ctx.keys).load(w, s),
      now: () => new Date(sandbox.clock.nowSeconds() * 1000),
      logger: pino({ level: "silent" }),
    },
    onCloseDropped: (reason: CloseDropReason) => dropped.push(reason),
  });

  /** The held side's mark at $0.80, its bid `halfSpread` below. */
  function priceAt(p: Position, halfSpread: string) {
    const market = sandbox.world.findMarket(p.marketId);
    if (market === undefined) throw new Error(`no market ${p.marketId}`);
    sandbox.world.setPrice(p.marketId, p.isYes ? 800_000 : 200_000, {
      halfSpreadMicro: Math.round(Number(halfSpread) * 1_000_000),
    });
  }

  async function closeOf(p: Position, tag: string) {
    const intent: Intent = {
      kind: "close",
      key: `close-${p.pubkey}-${tag}`,
      wallet,
      strategy: "exit-rules",
      positionPubkey: p.pubkey,
      exitRule: "take-profit-price",
      reason: "take-profit-price: bid net of fees $0.78 >= $0.75",
    };
    expect((await ctx.ledger.admit(intent)).admitted).toBe(true);
    await processAction({ id: `act-${tag}`, data: { intentKey: intent.key, build: 1 } }, deps());
    return ctx.ledger.get(intent.key);
  }

  it("builds the close when the bid read now still meets the rule", async () => {
    expect(open.length).toBeGreaterThanOrEqual(2);
    const p = open[0] as Position;
    priceAt(p, "0.005"); // bid $0.795, $0.783 net of 1.5 %
    const row = await closeOf(p, "met");
    expect(row).toMatchObject({ status: "built", builds: 1 });
    expect((await sign.getJobs(["waiting"])).map((j) => j.data.intentKey)).toContain(row?.key);
    expect(dropped).toEqual([]);
  });

  it("drops it when the bid fell below the rule since the poll (the mark alone still meets it)", async () => {
    const p = open[1] as Position;
    priceAt(p, "0.15"); // mark $0.80, bid $0.65
    const row = await closeOf(p, "bid-fell");
    expect(row?.status).toBe("deferred");
    expect(row?.error).toMatch(
      /^read before selling: dropped, no longer met: take-profit-price: bid net of fees/,
    );
    expect(row?.transaction).toBeUndefined();
    expect(dropped).toEqual(["rule_not_met"]);
    // Nothing sold: the sandbox still holds the position open.
    expect((await client.prediction.getPosition(p.pubkey)).marketMetadata.status).toBe("open");
  });

  it("drops it when the position's market closed since the poll", async () => {
    const p = open[0] as Position; // its close above was built, never signed: the position is still open
    sandbox.world.resolveMarket(p.marketId, p.isYes ? "yes" : "no");
    const row = await closeOf(p, "resolved");
    expect(row?.status).toBe("deferred");
    expect(row?.error).toMatch(
      /read before selling: dropped, the position is claimable|its market is closed/,
    );
    expect(dropped.slice(1)).toEqual(["not_open"]);
  });

  it("drops it when the service no longer knows the position (sold in between)", async () => {
    const gone = { ...(open[1] as Position), pubkey: sandbox.wallets[1] ?? "" };
    const row = await closeOf(gone, "gone");
    expect(row?.status).toBe("deferred");
    expect(row?.error).toMatch(/no longer knows the position/);
    expect(dropped.slice(2)).toEqual(["not_found"]);
  });
});
