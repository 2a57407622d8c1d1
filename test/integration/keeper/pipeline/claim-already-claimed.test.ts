import { Connection, VersionedTransaction } from "@solana/web3.js";
import type { Queue } from "bullmq";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, collectAll, createApiClient, iteratePositions } from "../../../../src/api/index.js";
import type { Intent } from "../../../../src/core/intent.js";
import { QUEUES } from "../../../../src/keeper/names.js";
import { processAction } from "../../../../src/keeper/pipeline/action-worker.js";
import type { SignJobData } from "../../../../src/keeper/queues/queues.js";
import type { RunningSandbox } from "../../../../src/sandbox/index.js";
import { serviceBuildApi } from "../../../helpers/build-api.js";
import { startCheckedSandbox } from "../../../helpers/checked-sandbox.js";
import { type LedgerAndQueues, ledgerAndQueues } from "../../../helpers/ledger-queues.js";
import { waitFor } from "../../chain/chain-harness.js";

/**
 * A position paid before Keeper's claim is built (claimed by hand, by the service's own free claim a
 * day after settlement, or by a claim of Keeper's whose record was lost): the service answers the
 * claim 400 already_claimed. Nothing is left to do, so nothing failed: the intent ends `settled`, its
 * job completes (no failed-job metric, no retries), and a later poll's claim of it is not admitted.
 */
describe("a claim the service says is already claimed ends settled, not failed", () => {
  let sandbox: RunningSandbox;
  let ctx: LedgerAndQueues;
  let sign: Queue<SignJobData>;
  let client: ApiClient;
  let wallet: string;
  let position: string;
  let nowSeconds = 1_000;

  beforeAll(async () => {
    sandbox = await startCheckedSandbox({ port: 0, chain: { port: 0, slotMs: 25 }, rateLimit: false });
    // A failed intent is admitted again once retryAfterSeconds have passed (the clock is the test's).
    ctx = await ledgerAndQueues("claim-already-claimed", {
      options: { maxTries: 3, retryAfterSeconds: 60 },
      nowSeconds: () => nowSeconds,
    });
    sign = ctx.queue(QUEUES.sign);
    client = createApiClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey });
    wallet = sandbox.wallets[1] ?? "";
    const open = (await collectAll(iteratePositions(client, { ownerPubkey: wallet }))).find(
      (p) => p.marketMetadata.status === "open" && !p.claimable && !p.claimed,
    );
    if (!open) throw new Error("the sandbox seed no longer gives wallet 1 an open position");
    position = open.pubkey;
    sandbox.world.resolveMarket(open.marketId, open.isYes ? "yes" : "no");
    // The user claims it by hand: the service's build, signed by the wallet's key, sent to the chain.
    const built = await client.prediction.claimPosition(position, { ownerPubkey: wallet });
    const tx = VersionedTransaction.deserialize(Buffer.from(built.transaction, "base64"));
    tx.sign([sandbox.world.walletKeypair(1)]);
    const connection = new Connection(sandbox.chain?.url ?? "", { commitment: "confirmed" });
    await connection.sendRawTransaction(tx.serialize(), { skipPreflight: true });
    await waitFor(async () => {
      const listed = await collectAll(iteratePositions(client, { ownerPubkey: wallet }));
      return listed.find((p) => p.pubkey === position)?.claimed === true ? true : undefined;
    }, `the hand claim of ${position}`);
  });
  afterAll(async () => {
    await ctx?.cleanup();
    await sandbox?.close();
  });

  it("the build is answered already_claimed; the intent ends settled, nothing signed, not tried again", async () => {
    await expect(client.prediction.claimPosition(position, { ownerPubkey: wallet })).rejects.toMatchObject({
      status: 400,
      code: "already_claimed",
    });
    const claim: Intent = {
      kind: "claim",
      key: `claim-${position}`,
      wallet,
      strategy: "auto-claim",
      positionPubkey: position,
    };
    expect(await ctx.ledger.admit(claim)).toMatchObject({ admitted: true });
    const settled: Intent[] = [];
    // Resolves: a job that completes is counted completed, not failed, and BullMQ does not retry it.
    await processAction(
      { id: "act-already-claimed", data: { intentKey: claim.key, build: 1 } },
      {
        api: serviceBuildApi(client),
        ledger: ctx.ledger,
        sign,
        logger: pino({ level: "silent" }),
        onClaimSettled: (intent) => settled.push(intent),
      },
    );
    const row = await ctx.ledger.get(claim.key);
    expect(row).toMatchObject({ status: "settled", tries: 1, builds: 0 });
    expect(row?.error).toMatch(/already claimed/);
    expect(settled.map((i) => i.key)).toEqual([claim.key]);
    expect(await sign.getJobs(["waiting", "delayed", "active", "prioritized"])).toHaveLength(0);
    expect(await ctx.ledger.inFlight(wallet)).toEqual([]);
    // Past the retry delay a failed claim would be admitted again; a settled one never is.
    nowSeconds += 3_600;
    expect(await ctx.ledger.admit(claim)).toEqual({ admitted: false, status: "settled", owner: wallet });
  });
});
