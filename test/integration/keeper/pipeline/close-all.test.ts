import type { Queue } from "bullmq";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, collectAll, createApiClient, iteratePositions } from "../../../../src/api/index.js";
import type { Intent } from "../../../../src/core/intent.js";
import type { Position } from "../../../../src/core/schemas/prediction.js";
import { QUEUES, type RedisKeys } from "../../../../src/keeper/names.js";
import { processAction } from "../../../../src/keeper/pipeline/action-worker.js";
import { RECLOSE_AFTER_SECONDS } from "../../../../src/keeper/pipeline/close-chain.js";
import type { SignJobData } from "../../../../src/keeper/queues/queues.js";
import { Ledger } from "../../../../src/keeper/state/ledger.js";
import type { RunningSandbox } from "../../../../src/sandbox/index.js";
import { serviceBuildApi } from "../../../helpers/build-api.js";
import { startCheckedSandbox } from "../../../helpers/checked-sandbox.js";
import { type LedgerAndQueues, ledgerAndQueues } from "../../../helpers/ledger-queues.js";

describe("close-all against the sandbox and real Redis: one close per position, deduplicated", () => {
  let sandbox: RunningSandbox;
  let ctx: LedgerAndQueues;
  let keys: RedisKeys;
  let sign: Queue<SignJobData>;
  let client: ApiClient;
  let ledger: Ledger;
  let wallet: string;
  let open: Position[];
  let winners: Position[];
  let now = 1_767_355_200;

  beforeAll(async () => {
    sandbox = await startCheckedSandbox({ port: 0, chain: { port: 0, slotMs: 25 }, rateLimit: false });
    ctx = await ledgerAndQueues("close-all", { nowSeconds: () => now });
    ({ keys, ledger } = ctx);
    sign = ctx.queue(QUEUES.sign);
    client = createApiClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey });
    wallet = sandbox.wallets[0] ?? "";
    open = (await collectAll(iteratePositions(client, { ownerPubkey: wallet }))).filter(
      (p) => p.marketMetadata.status === "open" && !p.claimable && !p.claimed,
    );
    winners = (await collectAll(iteratePositions(client, { ownerPubkey: wallet }))).filter(
      (p) => p.claimable && !p.claimed,
    );
  });
  afterAll(async () => {
    await ctx.cleanup();
    await sandbox.close();
  });

  const deps = () => ({
    api: { ...serviceBuildApi(client), closeAllPositions: client.prediction.closeAllPositions },
    ledger,
    sign,
    logger: pino({ level: "silent" }),
    positions: (owner: string) => collectAll(iteratePositions(client, { ownerPubkey: owner })),
    closeAllSlippageBps: 250,
    attempts: ctx.attempts,
    nowSeconds: () => now,
  });

  async function runCloseAll(tag: string, owner = wallet) {
    const intent: Intent = {
      kind: "closeAll",
      key: `close-all-${owner}-${tag}`,
      wallet: owner,
      strategy: "operator",
    };
    expect((await ledger.admit(intent)).admitted).toBe(true);
    await processAction({ id: `act-${tag}`, data: { intentKey: intent.key, build: 1 } }, deps());
    return ledger.get(intent.key);
  }

  it("fans out into built close-<position> rows, leaving a close already in flight to its owner", async () => {
    expect(open.length).toBeGreaterThanOrEqual(2);
    const [first, ...others] = open as [Position, ...Position[]];
    // An exit rule got to the first position before the kill switch.
    const exit: Intent = {
      kind: "close",
      key: `close-${first.pubkey}`,
      wallet,
      strategy: "exit-rules",
      positionPubkey: first.pubkey,
      exitRule: "take-profit",
    };
    await ledger.admit(exit);

    const parent = await runCloseAll("a");
    expect(parent?.status).toBe("confirmed");
    const firstRow = await ledger.get(`close-${first.pubkey}`);
    expect(firstRow).toMatchObject({ strategy: "exit-rules", status: "pending", builds: 0 });
    for (const p of others) {
      const row = await ledger.get(`close-${p.pubkey}`);
      expect(row).toMatchObject({ kind: "close", strategy: "operator", status: "built", builds: 1 });
      expect(row?.transaction).toBeTruthy();
      // The slippage DELETE /positions requires: protections.closeAllSlippageBps when the intent has none.
      expect(row?.intent).toMatchObject({
        exitRule: "close-all",
        costBasisMicroUsd: p.totalCostUsd,
        minSellPriceSlippageBps: 250,
      });
      expect(BigInt(row?.amountMicroUsd ?? "0")).toBeGreaterThan(0n);
      // What the sell pays in fees, kept for the status page's totals.
      expect(BigInt(row?.feeMicroUsd ?? "0")).toBeGreaterThan(0n);
      // Each close's way back to the service, as its build named it, for the signer.
      expect(row?.execution).toMatchObject({
        endpoint: "/prediction/v1/execute",
        context: { type: "create_order" },
        requiredSigners: [wallet],
      });
    }
    // The winners come back as claims (a winner is claimed, not sold), checked as claims.
    expect(winners.length).toBeGreaterThan(0);
    for (const p of winners) {
      const row = await ledger.get(`claim-${p.pubkey}`);
      expect(row).toMatchObject({ kind: "claim", strategy: "operator", status: "built", builds: 1 });
      expect(row?.intent).toMatchObject({ positionPubkey: p.pubkey, expectedPayoutMicroUsd: p.payoutUsd });
      expect(row?.amountMicroUsd).toBe(p.payoutUsd);
    }
    const jobs = await sign.getJobs(["waiting", "delayed", "active"]);
    expect(jobs.map((j) => j.data.intentKey).sort()).toEqual(
      [...others.map((p) => `close-${p.pubkey}`), ...winners.map((p) => `claim-${p.pubkey}`)].sort(),
    );

    // A second close-all while those are in flight adds nothing.
    await runCloseAll("b");
    expect(await sign.getJobs(["waiting", "delayed", "active"])).toHaveLength(others.length + winners.length);
    const closes = (await ledger.list()).filter((r) => r.kind === "close");
    expect(closes).toHaveLength(open.length);
    expect((await ledger.list()).filter((r) => r.kind === "claim")).toHaveLength(winners.length);
  });

  it("leaves a close confirmed moments ago to its sell; closes again, once, a position whose close did not take", async () => {
    const [first, second] = open as [Position, Position, ...Position[]];
    const queued = async () =>
      (await sign.getJobs(["waiting", "delayed", "active"])).map((j) => j.data.intentKey);
    // Both closes went through (confirmed), and the service still lists both positions as open. It
    // does so until a close's sell order fills: a close-all now would sell them a second time. (This
    // test once asked for that second close at once, taking the listing as proof the sell had failed.)
    for (const p of [first, second]) await ledger.update(`close-${p.pubkey}`, { status: "confirmed" });
    const confirmedAt = now;
    await sign.obliterate({ force: true });
    now += RECLOSE_AFTER_SECONDS - 1;
    expect(await runCloseAll("c")).toMatchObject({ status: "confirmed" });
    expect(await queued()).toEqual([]);

    // Listed open more than RECLOSE_AFTER_SECONDS after the close confirmed: its sell failed. Closed
    // again under the key the polls use too (close-chain.ts), so neither sells beside the other.
    now += 1;
    expect(await runCloseAll("d")).toMatchObject({ status: "confirmed" });
    const again = [first, second].map((p) => `close-${p.pubkey}-after-${confirmedAt}`);
    for (const [i, p] of [first, second].entries()) {
      expect(await ledger.get(`close-${p.pubkey}`)).toMatchObject({ status: "confirmed" });
      expect(await ledger.get(again[i] ?? "")).toMatchObject({
        kind: "close",
        strategy: "operator",
        status: "built",
        builds: 1,
        intent: { positionPubkey: p.pubkey, exitRule: "close-all" },
      });
    }
    expect((await queued()).sort()).toEqual([...again].sort());

    // The same close-all run again (a crash, a retry), or another close-all, closes nothing twice.
    await processAction(
      { id: "act-d-again", data: { intentKey: `close-all-${wallet}-d`, build: 1 } },
      deps(),
    );
    await runCloseAll("e");
    expect(await queued()).toHaveLength(2);
  });

  it("runs a failed or deferred close again under its own key, never beside a transaction of it that may still land", async () => {
    const owner = sandbox.wallets[1] ?? "";
    const [sent, deferred, landed] = (
      await collectAll(iteratePositions(client, { ownerPubkey: owner }))
    ).filter((p) => p.marketMetadata.status === "open" && !p.claimable && !p.claimed) as [
      Position,
      Position,
      Position,
    ];
    const signed = (signature: string) => ({
      attempt: 1,
      signature,
      lastValidBlockHeight: 1_000,
      recentBlockhash: "11111111111111111111111111111111",
      signedTransaction: "AA==",
    });
    for (const p of [sent, deferred, landed])
      await ledger.admit({
        kind: "close",
        key: `close-${p.pubkey}`,
        wallet: owner,
        strategy: "exit-rules",
        positionPubkey: p.pubkey,
      });
    // Its sign job ran out of attempts while the RPC was down: failed, its transaction still out there.
    await ctx.attempts.recordSigned(`close-${sent.pubkey}`, signed("sig-sent"));
    await ledger.update(`close-${sent.pubkey}`, { status: "failed", error: "rpc down" });
    // Dropped by the read before selling: nothing built.
    await ledger.defer(`close-${deferred.pubkey}`, "read before selling: dropped, rule_not_met");
    // Failed on the ledger, yet its transaction confirmed on the signer's record: it sold.
    await ctx.attempts.recordSigned(`close-${landed.pubkey}`, signed("sig-landed"));
    await ctx.attempts.finish(`close-${landed.pubkey}`, "sig-landed", { status: "confirmed", slot: 7 });
    await ledger.update(`close-${landed.pubkey}`, { status: "failed", error: "job ran out of attempts" });
    await sign.obliterate({ force: true });

    expect(await runCloseAll("f", owner)).toMatchObject({ status: "confirmed" });
    for (const p of [sent, deferred])
      expect(await ledger.get(`close-${p.pubkey}`)).toMatchObject({ status: "built", builds: 1, tries: 2 });
    // The signer resumes the transaction on record rather than signing the close-all's.
    expect(await ctx.attempts.get(`close-${sent.pubkey}`)).toMatchObject({
      status: "sent",
      signature: "sig-sent",
    });
    expect(await ledger.get(`close-${landed.pubkey}`)).toMatchObject({ status: "failed", tries: 1 });
    const closes = (await ledger.list()).filter((r) => r.kind === "close" && r.wallet === owner);
    expect(closes.map((r) => r.key).sort()).toEqual(
      [sent, deferred, landed].map((p) => `close-${p.pubkey}`).sort(),
    );
    const queued = (await sign.getJobs(["waiting", "delayed", "active"])).map((j) => j.data.intentKey);
    expect(queued.filter((k) => k.startsWith("close-")).sort()).toEqual(
      [sent, deferred].map((p) => `close-${p.pubkey}`).sort(),
    );
  });

  it("a claim asked before its market is settled is deferred, not failed, and asked again later", async () => {
    const early = open.at(-1) as Position;
    const retrying = new Ledger(ctx.redis, keys, { maxTries: 1, retryAfterSeconds: 0 });
    const claim: Intent = {
      kind: "claim",
      key: `claim-${early.pubkey}`,
      wallet,
      strategy: "auto-claim",
      positionPubkey: early.pubkey,
    };
    for (const round of [1, 2]) {
      const admitted = await retrying.admit(claim);
      expect(admitted, `round ${round}: admitted again despite maxTries 1`).toMatchObject({ admitted: true });
      await processAction(
        { id: `act-early-${round}`, data: { intentKey: claim.key, build: 1 } },
        { ...deps(), ledger: retrying },
      );
      const row = await retrying.get(claim.key);
      expect(row).toMatchObject({ status: "deferred", tries: round });
      expect(row?.error).toMatch(/market_not_settled/);
    }
  });
});
