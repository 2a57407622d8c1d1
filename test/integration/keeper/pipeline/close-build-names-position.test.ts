import type { Queue } from "bullmq";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, collectAll, createApiClient, iteratePositions } from "../../../../src/api/index.js";
import type { Intent } from "../../../../src/core/intent.js";
import type { Position } from "../../../../src/core/schemas/prediction.js";
import { QUEUES } from "../../../../src/keeper/names.js";
import { processAction } from "../../../../src/keeper/pipeline/action-worker.js";
import type { BuildApi } from "../../../../src/keeper/pipeline/build-transaction.js";
import type { SignJobData } from "../../../../src/keeper/queues/queues.js";
import type { RunningSandbox } from "../../../../src/sandbox/index.js";
import { serviceBuildApi } from "../../../helpers/build-api.js";
import { startCheckedSandbox } from "../../../helpers/checked-sandbox.js";
import { type LedgerAndQueues, ledgerAndQueues } from "../../../helpers/ledger-queues.js";

/**
 * A close's build must sell the position asked for. A service that answers
 * the close of one position with the sell of another of the same wallet pays the wallet all the same,
 * so the signer's inflow rule alone would let it through: the wrong position would be sold, and the
 * one the exit rule fired for recorded closed while it is still held. The builder compares the
 * build's `order.positionPubkey` with the intent and refuses a mismatch before anything reaches the
 * signer.
 */
describe("a close build that names another position is refused before signing", () => {
  let sandbox: RunningSandbox;
  let ctx: LedgerAndQueues;
  let sign: Queue<SignJobData>;
  let client: ApiClient;
  let wallet: string;
  let asked: Position;
  let other: Position;

  beforeAll(async () => {
    sandbox = await startCheckedSandbox({ port: 0, chain: { port: 0, slotMs: 25 }, rateLimit: false });
    ctx = await ledgerAndQueues("close-names-position");
    sign = ctx.queue(QUEUES.sign);
    client = createApiClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey });
    wallet = sandbox.wallets[1] ?? "";
    const open = (await collectAll(iteratePositions(client, { ownerPubkey: wallet }))).filter(
      (p) => p.marketMetadata.status === "open" && !p.claimable && !p.claimed,
    );
    const [first, second] = [open[0], open.find((p) => p.marketId !== open[0]?.marketId)];
    if (!first || !second) throw new Error("the sandbox seed no longer gives wallet 1 two open markets");
    [asked, other] = [first, second];
  });
  afterAll(async () => {
    await ctx?.cleanup();
    await sandbox?.close();
  });

  async function buildWith(api: BuildApi, key: string) {
    const close: Intent = {
      kind: "close",
      key,
      wallet,
      strategy: "exit-rules",
      positionPubkey: asked.pubkey,
      exitRule: "take-profit",
    };
    expect(await ctx.ledger.admit(close)).toMatchObject({ admitted: true });
    const run = processAction(
      { id: `act-${key}`, data: { intentKey: key, build: 1 } },
      { api, ledger: ctx.ledger, sign, logger: pino({ level: "silent" }) },
    );
    return { run, row: async () => ctx.ledger.get(key) };
  }

  async function stillHeld(): Promise<void> {
    const now = await collectAll(iteratePositions(client, { ownerPubkey: wallet }));
    for (const p of [asked, other])
      expect(now.find((q) => q.pubkey === p.pubkey)?.contractsMicro).toBe(p.contractsMicro);
  }

  it("another position's sell: the intent fails, nothing is signed, both positions stay held", async () => {
    const honest = serviceBuildApi(client);
    // The service's real build, of the wrong position: the wallet's other open position.
    const swapped: BuildApi = {
      ...honest,
      closePosition: (_position, body) => honest.closePosition(other.pubkey, body),
    };
    const { run, row } = await buildWith(swapped, `close-${asked.pubkey}`);
    await expect(run).rejects.toThrow(/order\.positionPubkey .* is not the position asked for/);
    expect(await row()).toMatchObject({ status: "failed", builds: 0 });
    expect((await row())?.error).toContain(other.pubkey);
    expect(await sign.getJobs(["waiting", "delayed", "active", "prioritized"])).toHaveLength(0);
    await stillHeld();
  });

  it("the honest build of the position asked for is handed to the signer", async () => {
    const honest = serviceBuildApi(client);
    const accepted = await buildWith(honest, `close-${asked.pubkey}-honest`);
    await accepted.run;
    expect(await accepted.row()).toMatchObject({ status: "built", builds: 1 });
    expect(await sign.getJobs(["waiting", "prioritized"])).toHaveLength(1);
  });
});
