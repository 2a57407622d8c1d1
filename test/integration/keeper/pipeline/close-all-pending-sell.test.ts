import { Connection } from "@solana/web3.js";
import type { Queue } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, createApiClient } from "../../../../src/api/index.js";
import { type Intent, intentKeys } from "../../../../src/core/intent.js";
import type { Position } from "../../../../src/core/schemas/prediction.js";
import { QUEUES } from "../../../../src/keeper/names.js";
import { PauseSwitch } from "../../../../src/keeper/operator/pause.js";
import { type ActionDeps, processAction } from "../../../../src/keeper/pipeline/action-worker.js";
import { RECLOSE_AFTER_SECONDS } from "../../../../src/keeper/pipeline/close-chain.js";
import { processSign, type SignDeps } from "../../../../src/keeper/pipeline/sign-worker.js";
import type { ActionJobData, SignJobData } from "../../../../src/keeper/queues/queues.js";
import type { Ledger, LedgerRow } from "../../../../src/keeper/state/ledger.js";
import type { RunningSandbox } from "../../../../src/sandbox/index.js";
import { signAndSend } from "../../../../src/signer/sign-transaction.js";
import { serviceBuildApi } from "../../../helpers/build-api.js";
import { captureLogger } from "../../../helpers/capture-logger.js";
import { positionsOf, sandboxWallets, startTestSandbox } from "../../../helpers/keeper-harness.js";
import { countLandedCloses } from "../../../helpers/landed.js";
import { type LedgerAndQueues, ledgerAndQueues } from "../../../helpers/ledger-queues.js";
import { watchDepsFor } from "../../../helpers/watch-deps.js";

const SEND = { commitment: "confirmed" as const, rebroadcastIntervalMs: 150, pollIntervalMs: 50 };

/**
 * On the live service a close's transaction creates a sell order that the service's keepers fill
 * later; until then the position is listed open (its sell an open order) and DELETE /positions still
 * answers a close for it. The sandbox holds its sells the same way (`world.holdSells`). The exit and
 * the close-all are built by the sandbox service over HTTP, signed with the real signer and landed on
 * its LiteSVM chain, through real queues on real Redis.
 */
describe("close-all beside a close whose sell is still pending, through the sandbox and its chain", () => {
  let sandbox: RunningSandbox;
  let ctx: LedgerAndQueues;
  let ledger: Ledger;
  let sign: Queue<SignJobData>;
  let actions: Queue<ActionJobData>;
  let client: ApiClient;
  let connection: Connection;
  let wallet: string;
  let position: Position;
  /** Sells that landed on the chain, by position. */
  let landedCloses: Map<string, number>;
  let now = 1_767_355_200;
  const logs = captureLogger("info");

  beforeAll(async () => {
    ({ sandbox } = await startTestSandbox());
    if (!sandbox.chain) throw new Error("the sandbox runs no chain");
    landedCloses = countLandedCloses(sandbox);
    ctx = await ledgerAndQueues("close-all-pending-sell", { nowSeconds: () => now });
    ({ ledger } = ctx);
    sign = ctx.queue(QUEUES.sign);
    actions = ctx.queue(QUEUES.actions);
    client = createApiClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey });
    connection = new Connection(sandbox.chain.url, "confirmed");
    wallet = sandbox.wallets[0] ?? "";
    const open = (await positionsOf(sandbox, wallet)).filter(
      (p) => p.marketMetadata.status === "open" && !p.claimable && !p.claimed && p.openOrders === 0,
    );
    if (!open[0])
      throw new Error("the sandbox seed no longer gives wallet 0 an open position without orders");
    position = open[0];
  }, 60_000);

  afterAll(async () => {
    await ctx?.cleanup();
    await sandbox?.close();
  });

  const actionDeps = (): ActionDeps => ({
    api: { ...serviceBuildApi(client), closeAllPositions: client.prediction.closeAllPositions },
    ledger,
    sign,
    logger: logs.logger,
    attempts: ctx.attempts,
    nowSeconds: () => now,
  });

  /** The signer role's dependencies, wired as src/app/signer-role.ts wires them. */
  const signDeps = (): SignDeps => ({
    ledger,
    actions,
    pause: new PauseSwitch(ctx.redis, ctx.keys),
    maxRebuilds: 1,
    logger: logs.logger,
    ...watchDepsFor({ connection, attempts: ctx.attempts, logger: logs.logger, send: SEND }),
    signAndSubmit: async (row: LedgerRow) => {
      if (!row.transaction || row.lastValidBlockHeight === undefined)
        throw new Error(`${row.key} has no built transaction`);
      return signAndSend({
        intent: row.intent,
        transactionBase64: row.transaction,
        lastValidBlockHeight: row.lastValidBlockHeight,
        wallets: sandboxWallets(sandbox),
        connection,
        policyConfig: {
          maxComputeUnitPriceMicroLamports: 2_000_000n,
          maxPriorityFeeLamports: 1_000_000n,
          commitment: "confirmed",
        },
        attempts: ctx.attempts,
        logger: logs.logger,
        send: SEND,
      });
    },
  });

  /** Runs every queued sign job of the position's closes, whatever their key, as the signer would. */
  async function signClosesOf(positionPubkey: string): Promise<string[]> {
    const signed: string[] = [];
    for (const job of await sign.getJobs(["waiting", "prioritized", "delayed"])) {
      const row = await ledger.get(job.data.intentKey);
      if (row?.intent.kind !== "close" || row.intent.positionPubkey !== positionPubkey) continue;
      await processSign(job, signDeps());
      await job.remove();
      signed.push(job.data.intentKey);
    }
    return signed;
  }

  async function runCloseAll(tag: string) {
    const intent: Intent = {
      kind: "closeAll",
      key: `close-all-${wallet}-${tag}`,
      wallet,
      strategy: "operator",
    };
    expect((await ledger.admit(intent)).admitted).toBe(true);
    await processAction({ id: `act-${tag}`, data: { intentKey: intent.key, build: 1 } }, actionDeps());
    expect(await ledger.get(intent.key)).toMatchObject({ status: "confirmed" });
  }

  const listed = async () => (await positionsOf(sandbox, wallet)).find((p) => p.pubkey === position.pubkey);
  const closeKeys = async () =>
    (await ledger.list())
      .filter((r) => r.intent.kind === "close" && r.intent.positionPubkey === position.pubkey)
      .map((r) => r.key)
      .sort();

  it("sells the position once: a close that confirmed moments ago is left to its sell, one whose sell failed is closed again", async () => {
    sandbox.world.holdSells = true;
    // An exit rule closes the position: the service builds the sell, the signer lands it on the chain.
    const exit = intentKeys.close(position.pubkey);
    await ledger.admit({
      kind: "close",
      key: exit,
      wallet,
      strategy: "exit-rules",
      positionPubkey: position.pubkey,
      exitRule: "stop-loss",
    });
    await processAction({ id: "act-exit", data: { intentKey: exit, build: 1 } }, actionDeps());
    expect(await signClosesOf(position.pubkey)).toEqual([exit]);
    expect(await ledger.get(exit)).toMatchObject({ status: "confirmed" });
    expect(landedCloses.get(position.pubkey)).toBe(1);
    // The service has not filled the sell yet: the position is listed open, its sell an open order.
    expect(await listed()).toMatchObject({ openOrders: 1, marketMetadata: { status: "open" } });

    // The kill switch, seconds later. DELETE /positions still answers a close for the position, but
    // a second sell beside the pending one would sell it twice.
    now += 5;
    await runCloseAll("a");
    expect(await signClosesOf(position.pubkey)).toEqual([]);
    expect(landedCloses.get(position.pubkey)).toBe(1);
    expect(sandbox.world.heldSellsOf(position.pubkey)).toBe(1);
    expect(await closeKeys()).toEqual([exit]);

    // The sell failed: the position is still listed, with no order on it. Once the close confirmed
    // more than RECLOSE_AFTER_SECONDS ago, a close-all sells it again, once.
    sandbox.world.releaseHeldSells("failed");
    expect(await listed()).toMatchObject({ openOrders: 0 });
    now += RECLOSE_AFTER_SECONDS;
    await runCloseAll("b");
    const confirmedAt = (await ledger.get(exit))?.confirmedAt;
    const again = `${exit}-after-${confirmedAt}`;
    expect(await signClosesOf(position.pubkey)).toEqual([again]);
    expect(await ledger.get(again)).toMatchObject({ status: "confirmed", strategy: "operator" });
    expect(landedCloses.get(position.pubkey)).toBe(2);
    expect(sandbox.world.heldSellsOf(position.pubkey)).toBe(1);
    // Another close-all moments after that one adds no third sell.
    now += 5;
    await runCloseAll("c");
    expect(await signClosesOf(position.pubkey)).toEqual([]);
    expect(await closeKeys()).toEqual([exit, again].sort());

    sandbox.world.releaseHeldSells("filled");
    expect(await listed()).toBeUndefined();
  }, 60_000);
});
