import type { Queue } from "bullmq";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, collectAll, createApiClient, iteratePositions } from "../../../../src/api/index.js";
import { expectedInflow } from "../../../../src/chain/inflow-rules.js";
import type { Intent } from "../../../../src/core/intent.js";
import type { Position } from "../../../../src/core/schemas/prediction.js";
import { QUEUES } from "../../../../src/keeper/names.js";
import { processAction } from "../../../../src/keeper/pipeline/action-worker.js";
import { IndexClaims } from "../../../../src/keeper/pipeline/index-claims.js";
import type { ActionJobData, SignJobData } from "../../../../src/keeper/queues/queues.js";
import type { RunningSandbox } from "../../../../src/sandbox/index.js";
import { autoClaim } from "../../../../strategies/auto-claim.js";
import { serviceBuildApi } from "../../../helpers/build-api.js";
import { startCheckedSandbox } from "../../../helpers/checked-sandbox.js";
import { testHolding } from "../../../helpers/holdings.js";
import { type LedgerAndQueues, ledgerAndQueues } from "../../../helpers/ledger-queues.js";

const TOLERANCE_BPS = 50;

/**
 * A claim from the holdings index expects the payout of the wallet's last sweep. When contracts were
 * sold since, the service's build (truthfully) pays less: the signer would refuse it and the claim
 * would wait for a person. The builder defers it instead, nothing signed, and the wallet's next poll
 * claims it with the payout it reads then.
 */
describe("an index claim whose entry is older than a sale is deferred, then claimed from a fresh read", () => {
  let sandbox: RunningSandbox;
  let ctx: LedgerAndQueues;
  let sign: Queue<SignJobData>;
  let client: ApiClient;
  let wallet: string;
  let held: Position;

  beforeAll(async () => {
    sandbox = await startCheckedSandbox({ port: 0, chain: { port: 0, slotMs: 25 }, rateLimit: false });
    ctx = await ledgerAndQueues("index-claim-stale", { options: { maxTries: 3, retryAfterSeconds: 0 } });
    sign = ctx.queue(QUEUES.sign);
    client = createApiClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey });
    wallet = sandbox.wallets[1] ?? "";
    const open = (await collectAll(iteratePositions(client, { ownerPubkey: wallet }))).find(
      (p) =>
        p.marketMetadata.status === "open" && !p.claimable && !p.claimed && p.contractsMicro !== undefined,
    );
    if (!open) throw new Error("the sandbox seed no longer gives wallet 1 an open position");
    held = open;
    sandbox.world.resolveMarket(held.marketId, held.isYes ? "yes" : "no");
  });
  afterAll(async () => {
    await ctx?.cleanup();
    await sandbox?.close();
  });

  const build = (key: string) =>
    processAction(
      { id: `act-${key}-${Date.now()}`, data: { intentKey: key, build: 1 } },
      {
        api: serviceBuildApi(client),
        ledger: ctx.ledger,
        sign,
        logger: pino({ level: "silent" }),
        claimPayoutToleranceBps: TOLERANCE_BPS,
      },
    );
  const signJobs = async () => (await sign.getJobs(["waiting", "prioritized"])).length;

  it("deferred with nothing signed; the poll's claim with the payout read then is built for the signer", async () => {
    const key = `claim-${held.pubkey}`;
    const claims = new IndexClaims({
      mode: "live",
      strategies: [
        { name: "auto-claim", strategy: autoClaim as never, config: autoClaim.configSchema.parse({}) },
      ],
      ledger: ctx.ledger,
      actions: ctx.queue<ActionJobData>(QUEUES.actions),
      logger: pino({ level: "silent" }),
      claimCost: { microUsd: async () => "2000" },
    });
    const market = await client.prediction.getMarket(held.marketId);
    // The index's entry is from before a sale: it counts three contracts more than the wallet holds.
    const stale = (BigInt(held.contractsMicro ?? "0") + 3_000_000n).toString();
    const entry = testHolding({
      wallet,
      marketId: held.marketId,
      eventId: held.eventId,
      position: held.pubkey,
      side: held.isYes ? "yes" : "no",
      contractsMicro: stale,
    });
    expect(await claims.claim(market, [entry], Date.now())).toBe(true);
    expect((await ctx.ledger.get(key))?.intent).toMatchObject({
      expectedPayoutMicroUsd: stale,
      expectedPayoutFrom: "index",
    });

    await build(key);
    const deferred = await ctx.ledger.get(key);
    expect(deferred).toMatchObject({ status: "deferred", builds: 0 });
    expect(deferred?.error).toContain(`the holdings index said ${stale}`);
    expect(await signJobs()).toBe(0);

    // The wallet's next poll: its position read now, auto-claim's claim with that payout.
    const fresh = (await collectAll(iteratePositions(client, { ownerPubkey: wallet }))).find(
      (p) => p.pubkey === held.pubkey,
    );
    const poll = autoClaim.evaluate({
      snapshot: {
        wallet,
        takenAt: Math.floor(Date.now() / 1000),
        positions: fresh ? [fresh] : [],
        openOrders: [],
        inFlight: [],
        balances: {},
        claimCostMicroUsd: "2000",
      },
      state: {},
      config: autoClaim.configSchema.parse({}),
      now: new Date(),
    });
    const claim = poll.intents.find((i): i is Extract<Intent, { kind: "claim" }> => i.key === key);
    expect(claim?.expectedPayoutFrom).toBeUndefined();
    expect(await ctx.ledger.admit(claim as Intent)).toMatchObject({ admitted: true });
    await build(key);
    const built = await ctx.ledger.get(key);
    expect(built).toMatchObject({ status: "built", builds: 1 });
    expect(await signJobs()).toBe(1);
    // What the signer will require of it is the payout read now, which the build pays.
    const inflow = expectedInflow(built?.intent as Intent, built ?? {}, {
      payoutMints: [sandbox.usdcMint],
      toleranceBps: TOLERANCE_BPS,
    });
    expect(inflow?.minRaw).toBeLessThanOrEqual(BigInt(built?.amountMicroUsd ?? "0"));
  });
});
