import type { Queue } from "bullmq";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, collectAll, createApiClient, iteratePositions } from "../../../../src/api/index.js";
import type { Intent } from "../../../../src/core/intent.js";
import type { Position } from "../../../../src/core/schemas/prediction.js";
import { QUEUES } from "../../../../src/keeper/names.js";
import { processAction } from "../../../../src/keeper/pipeline/action-worker.js";
import type { SignJobData } from "../../../../src/keeper/queues/queues.js";
import type { RunningSandbox } from "../../../../src/sandbox/index.js";
import { serviceBuildApi } from "../../../helpers/build-api.js";
import { startCheckedSandbox } from "../../../helpers/checked-sandbox.js";
import { type LedgerAndQueues, ledgerAndQueues } from "../../../helpers/ledger-queues.js";

/**
 * Some markets pay their winners without a claim: the service answers a claim of one 400
 * no_claim_required. The claim intent's business is over: it ends `settled`, not failed, nothing is
 * signed, and a later poll's claim of it is not admitted again.
 */
describe("a claim the service says is not required ends settled, not failed", () => {
  let sandbox: RunningSandbox;
  let ctx: LedgerAndQueues;
  let sign: Queue<SignJobData>;
  let client: ApiClient;
  let wallet: string;
  let held: Position;

  beforeAll(async () => {
    sandbox = await startCheckedSandbox({ port: 0, chain: { port: 0, slotMs: 25 }, rateLimit: false });
    ctx = await ledgerAndQueues("claim-settled");
    sign = ctx.queue(QUEUES.sign);
    client = createApiClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey });
    wallet = sandbox.wallets[1] ?? "";
    const open = (await collectAll(iteratePositions(client, { ownerPubkey: wallet }))).find(
      (p) => p.marketMetadata.status === "open" && !p.claimable && !p.claimed,
    );
    if (!open) throw new Error("the sandbox seed no longer gives wallet 1 an open position");
    held = open;
  });
  afterAll(async () => {
    await ctx?.cleanup();
    await sandbox?.close();
  });

  it("the sandbox answers no_claim_required; the intent ends settled and nothing is signed", async () => {
    sandbox.world.resolveMarket(held.marketId, held.isYes ? "yes" : "no", { needsClaim: false });
    const listed = (await collectAll(iteratePositions(client, { ownerPubkey: wallet }))).find(
      (p) => p.pubkey === held.pubkey,
    );
    // A candidate by the result (as the service's own client reads it), though not claimable.
    expect(listed).toMatchObject({ claimable: false, claimed: false });
    expect(listed?.marketMetadata.result).toBe(held.isYes ? "yes" : "no");
    await expect(client.prediction.claimPosition(held.pubkey, { ownerPubkey: wallet })).rejects.toMatchObject(
      {
        status: 400,
        code: "no_claim_required",
      },
    );

    const claim: Intent = {
      kind: "claim",
      key: `claim-${held.pubkey}`,
      wallet,
      strategy: "auto-claim",
      positionPubkey: held.pubkey,
    };
    expect(await ctx.ledger.admit(claim)).toMatchObject({ admitted: true });
    let settledIntents = 0;
    await processAction(
      { id: "act-no-claim", data: { intentKey: claim.key, build: 1 } },
      {
        api: serviceBuildApi(client),
        ledger: ctx.ledger,
        sign,
        logger: pino({ level: "silent" }),
        onClaimSettled: () => {
          settledIntents += 1;
        },
      },
    );
    const row = await ctx.ledger.get(claim.key);
    // Nothing was built: the record counts no build.
    expect(row).toMatchObject({ status: "settled", tries: 1, builds: 0 });
    expect(row?.error).toMatch(/no claim required/);
    expect(settledIntents).toBe(1);
    expect(await sign.getJobs(["waiting", "delayed", "active"])).toHaveLength(0);
    expect(await ctx.ledger.inFlight(wallet)).toEqual([]);
    // Done: asked again by a later poll, it is not admitted (and so never failed or retried).
    expect(await ctx.ledger.admit(claim)).toEqual({ admitted: false, status: "settled", owner: wallet });
  });
});
