import { Connection } from "@solana/web3.js";
import type { Queue } from "bullmq";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { type ApiClient, createApiClient } from "../../../../src/api/index.js";
import { type Intent, intentKeys } from "../../../../src/core/intent.js";
import type { Position } from "../../../../src/core/schemas/prediction.js";
import { jobIds, QUEUES, type RecordTry, type RedisKeys } from "../../../../src/keeper/names.js";
import { PauseSwitch } from "../../../../src/keeper/operator/pause.js";
import { type ActionDeps, processAction } from "../../../../src/keeper/pipeline/action-worker.js";
import { processConfirm } from "../../../../src/keeper/pipeline/confirm-loop.js";
import { processSign, type SignDeps, WatchSlots } from "../../../../src/keeper/pipeline/sign-worker.js";
import { enqueueBuild, enqueueConfirm } from "../../../../src/keeper/queues/enqueue.js";
import type { ActionJobData, ConfirmJobData, SignJobData } from "../../../../src/keeper/queues/queues.js";
import type { Ledger, LedgerRow } from "../../../../src/keeper/state/ledger.js";
import type { LocalChain } from "../../../../src/sandbox/chain/local-chain.js";
import type { RunningSandbox } from "../../../../src/sandbox/index.js";
import type { RedisAttemptStore } from "../../../../src/signer/attempt-store.js";
import type { Wallets } from "../../../../src/signer/keys.js";
import { signAndSend } from "../../../../src/signer/sign-transaction.js";
import { serviceBuildApi } from "../../../helpers/build-api.js";
import { captureLogger } from "../../../helpers/capture-logger.js";
import {
  fastForward,
  positionsOf,
  sandboxWallets,
  startTestSandbox,
  usdcBalance,
} from "../../../helpers/keeper-harness.js";
import { countLandedClaims } from "../../../helpers/landed.js";
import { type LedgerAndQueues, ledgerAndQueues } from "../../../helpers/ledger-queues.js";
import { watchDepsFor } from "../../../helpers/watch-deps.js";

/** One fresh transaction after an expired one, then the intent gives up for this try. */
const MAX_REBUILDS = 1;
const REBROADCAST_MS = 150;
/** The chain drops every send while this is set: a transaction can only expire. */
const DROP_EVERY_SEND = 1_000_000;

/**
 * The signer worker's job as the keeper runs it, one step at a time: the builder (processAction) asks
 * the sandbox service over HTTP for the claim, the signer (processSign with the real signAndSubmit)
 * signs, sends and confirms it on the local chain, and the two hand work to each other through real
 * BullMQ queues on real Redis. Each step takes its job from the queue, by the id the keeper gives it.
 */
describe("processSign: expiry, rebuild and late landing, through real queues, service and chain", () => {
  let sandbox: RunningSandbox;
  let chain: LocalChain;
  let redis: LedgerAndQueues;
  let keys: RedisKeys;
  let ledger: Ledger;
  let actions: Queue<ActionJobData>;
  let sign: Queue<SignJobData>;
  let client: ApiClient;
  let connection: Connection;
  let wallets: Wallets;
  let attempts: RedisAttemptStore;
  let winners: Position[];
  const logs = captureLogger("debug");
  /** Claim payouts that landed on chain, by position. */
  let landedClaims: Map<string, number>;

  beforeAll(async () => {
    // Six wallets: a winning position for each test.
    ({ sandbox } = await startTestSandbox({ walletCount: 6 }));
    if (!sandbox.chain) throw new Error("the sandbox runs no chain");
    chain = sandbox.chain.chain;
    landedClaims = countLandedClaims(sandbox);
    redis = await ledgerAndQueues("sign-worker");
    ({ keys, ledger, attempts } = redis);
    actions = redis.queue(QUEUES.actions);
    sign = redis.queue(QUEUES.sign);
    client = createApiClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey });
    connection = new Connection(sandbox.chain.url, "confirmed");
    wallets = sandboxWallets(sandbox);
    winners = (await Promise.all(sandbox.wallets.map((w) => positionsOf(sandbox, w))))
      .flat()
      .filter((p) => p.claimable && !p.claimed);
    expect(winners.length).toBeGreaterThanOrEqual(4);
  }, 60_000);

  afterEach(() => {
    chain.faults.reset();
  });

  afterAll(async () => {
    await sandbox?.close();
    await redis?.cleanup();
    expect(logs.lines().length).toBeGreaterThan(0);
  });

  const actionDeps = (): ActionDeps => ({
    api: serviceBuildApi(client),
    ledger,
    sign,
    logger: logs.logger,
  });

  /** The signer role's dependencies, wired as src/app/signer-role.ts wires them. */
  const signDeps = (options: { signal?: AbortSignal } = {}): SignDeps => ({
    ledger,
    actions,
    pause: new PauseSwitch(redis.redis, keys),
    maxRebuilds: MAX_REBUILDS,
    logger: logs.logger,
    ...watchDepsFor({
      connection,
      attempts,
      logger: logs.logger,
      send: { commitment: "confirmed", rebroadcastIntervalMs: REBROADCAST_MS, pollIntervalMs: 50 },
      ...(options.signal ? { signal: options.signal } : {}),
    }),
    signAndSubmit: async (row: LedgerRow) => {
      if (!row.transaction || row.lastValidBlockHeight === undefined)
        throw new Error(`${row.key} has no built transaction`);
      return signAndSend({
        intent: row.intent,
        transactionBase64: row.transaction,
        lastValidBlockHeight: row.lastValidBlockHeight,
        wallets,
        connection,
        policyConfig: {
          maxComputeUnitPriceMicroLamports: 2_000_000n,
          maxPriorityFeeLamports: 1_000_000n,
          commitment: "confirmed",
        },
        attempts,
        logger: logs.logger,
        maxAttempts: (MAX_REBUILDS + 1) * 3,
        send: { commitment: "confirmed", rebroadcastIntervalMs: REBROADCAST_MS, pollIntervalMs: 50 },
        ...(options.signal ? { signal: options.signal } : {}),
      });
    },
  });

  /** A winning position's claim, admitted to the ledger and its first build queued, as a poll does. */
  async function admitClaim(): Promise<{ position: Position; key: string; paidBefore: bigint }> {
    const position = winners.shift();
    if (!position) throw new Error("no winning position left for this test");
    const intent: Intent = {
      kind: "claim",
      key: intentKeys.claim(position.pubkey),
      wallet: position.ownerPubkey,
      strategy: "auto-claim",
      positionPubkey: position.pubkey,
    };
    expect(await ledger.admit(intent)).toEqual({ admitted: true, tries: 1, recordId: expect.any(String) });
    await enqueueBuild(actions, intent.key, await firstTry(intent.key), 1);
    const paidBefore = await usdcBalance(sandbox, position.ownerPubkey, sandbox.usdcMint);
    return { position, key: intent.key, paidBefore };
  }

  /** The first try of the intent's ledger record, as its job ids name it. */
  async function firstTry(key: string): Promise<RecordTry> {
    return { tries: 1, recordId: (await ledger.get(key))?.recordId };
  }

  async function queuedBuild(key: string, build: number) {
    return actions.getJob(jobIds.action(key, await firstTry(key), build));
  }

  async function queuedSign(key: string, build: number) {
    return sign.getJob(jobIds.sign(key, await firstTry(key), build));
  }

  /** Runs the queued build job `build` of the intent, as the actions worker would. */
  async function runBuild(key: string, build: number): Promise<LedgerRow> {
    const job = await queuedBuild(key, build);
    if (!job) throw new Error(`no build job ${build} of ${key} in the actions queue`);
    await processAction(job, actionDeps());
    const row = await ledger.get(key);
    if (!row) throw new Error(`no ledger row for ${key}`);
    return row;
  }

  /** Runs the queued sign job `build` of the intent, as the signer worker would. */
  async function runSign(key: string, build: number, options: { signal?: AbortSignal } = {}) {
    const job = await queuedSign(key, build);
    if (!job) throw new Error(`no sign job ${build} of ${key} in the sign queue`);
    return processSign(job, signDeps(options));
  }

  /**
   * Runs the sign job of build 1 until its send is on record, then gives up watching (a crash, a lost
   * lock) while the chain holds the transaction back (the test lands it with `landHeldSends`: no
   * timer races a busy machine). Returns the attempt record left in flight.
   */
  async function sendThenGiveUp(key: string) {
    chain.faults.landDelayMs = 600_000;
    const giveUp = new AbortController();
    const recordSigned = attempts.recordSigned.bind(attempts);
    vi.spyOn(attempts, "recordSigned").mockImplementation(async (k, signed) => {
      const ok = await recordSigned(k, signed);
      setTimeout(() => giveUp.abort(new Error("first sign run over")), 3 * REBROADCAST_MS).unref();
      return ok;
    });
    await expect(runSign(key, 1, { signal: giveUp.signal })).rejects.toThrow();
    vi.mocked(attempts.recordSigned).mockRestore();
    const sent = await attempts.get(key);
    expect(sent).toMatchObject({ status: "sent", attempt: 1 });
    return sent;
  }

  async function statusOnChain(signature: string) {
    return (await connection.getSignatureStatuses([signature], { searchTransactionHistory: true })).value[0];
  }

  it("rebuilds a claim whose blockhash expired: the expired signature is recorded, the rebuilt one lands, paid once", async () => {
    const { position, key, paidBefore } = await admitClaim();
    const built = await runBuild(key, 1);
    expect(built).toMatchObject({ status: "built", builds: 1 });
    const payout = BigInt(built.amountMicroUsd ?? "0");
    expect(payout).toBeGreaterThan(0n);

    // The chain loses every send of the first transaction: it can only expire.
    chain.dropFirstSends(DROP_EVERY_SEND);
    const stop = fastForward(sandbox);
    const first = await runSign(key, 1).finally(stop);
    expect(first?.outcome).toBe("expired");
    const firstSignature = first?.outcome === "expired" ? first.signature : undefined;
    expect(firstSignature).toBeDefined();
    if (!firstSignature) return;

    // Recorded as expired, in the ledger and in the signer's attempt record, only once past its height.
    expect(await ledger.get(key)).toMatchObject({ status: "expired", builds: 1, signature: firstSignature });
    expect(await attempts.get(key)).toMatchObject({
      status: "expired",
      attempt: 1,
      signature: firstSignature,
    });
    expect(chain.blockHeight).toBeGreaterThan(built.lastValidBlockHeight ?? Number.POSITIVE_INFINITY);
    expect(await statusOnChain(firstSignature)).toBeNull();
    // ...and the signer asked the builder for a fresh transaction: build 2 waits in the actions queue.
    expect((await queuedBuild(key, 2))?.data).toEqual({ intentKey: key, build: 2 });
    expect(await usdcBalance(sandbox, position.ownerPubkey, sandbox.usdcMint)).toBe(paidBefore);

    chain.faults.reset();
    const rebuilt = await runBuild(key, 2);
    expect(rebuilt).toMatchObject({ status: "built", builds: 2 });
    expect(rebuilt.transaction).not.toBe(built.transaction);
    const second = await runSign(key, 2);
    expect(second?.outcome).toBe("confirmed");
    const secondSignature = second?.outcome === "confirmed" ? second.signature : undefined;
    expect(secondSignature).toBeDefined();
    expect(secondSignature).not.toBe(firstSignature);

    expect(await ledger.get(key)).toMatchObject({
      status: "confirmed",
      builds: 2,
      tries: 1,
      signature: secondSignature,
    });
    expect(await attempts.get(key)).toMatchObject({
      status: "confirmed",
      attempt: 2,
      signature: secondSignature,
    });
    // On chain: the expired transaction never landed (and cannot now), the rebuilt one did, once.
    expect(await statusOnChain(firstSignature)).toBeNull();
    expect((await statusOnChain(secondSignature ?? ""))?.err).toBeNull();
    expect(landedClaims.get(position.pubkey)).toBe(1);
    expect(await usdcBalance(sandbox, position.ownerPubkey, sandbox.usdcMint)).toBe(paidBefore + payout);
    expect(
      (await positionsOf(sandbox, position.ownerPubkey)).find((p) => p.pubkey === position.pubkey),
    ).toMatchObject({ claimed: true });

    // Jobs delivered again (a retry, a stalled job) change nothing and ask for nothing more.
    expect(await runSign(key, 1)).toBeUndefined();
    expect(await runSign(key, 2)).toBeUndefined();
    await runBuild(key, 1);
    await runBuild(key, 2);
    expect(await queuedBuild(key, 3)).toBeUndefined();
    expect(await ledger.get(key)).toMatchObject({
      status: "confirmed",
      builds: 2,
      signature: secondSignature,
    });
    expect(landedClaims.get(position.pubkey)).toBe(1);
    expect(await usdcBalance(sandbox, position.ownerPubkey, sandbox.usdcMint)).toBe(paidBefore + payout);
  }, 60_000);

  it("a built row with a far-off lastValidBlockHeight expires soon after its blockhash does, then is rebuilt and paid once", async () => {
    const { position, key, paidBefore } = await admitClaim();
    const built = await runBuild(key, 1);
    const lastValid = built.lastValidBlockHeight ?? 0;
    // The service said the blockhash lives 100,000 blocks more than it can (issue 11).
    await ledger.update(key, { lastValidBlockHeight: lastValid + 100_000 });

    // Every send is dropped and moves the chain 40 blocks on; a run still sending after 30 is given up.
    chain.dropFirstSends(DROP_EVERY_SEND);
    const send = connection.sendRawTransaction.bind(connection);
    const giveUp = new AbortController();
    let sends = 0;
    connection.sendRawTransaction = (async (...args: Parameters<typeof send>) => {
      sends += 1;
      if (sends > 30) giveUp.abort(new Error("more than 30 sends"));
      chain.advanceSlots(40);
      return send(...args);
    }) as typeof connection.sendRawTransaction;
    const first = await runSign(key, 1, { signal: giveUp.signal })
      .catch((error: unknown) => ({ outcome: `still waiting after ${sends} sends: ${error}` }))
      .finally(() => {
        connection.sendRawTransaction = send;
      });
    expect(first).toMatchObject({ outcome: "expired" });
    expect(sends).toBeLessThanOrEqual(8);
    expect(chain.blockHeight).toBeGreaterThan(lastValid);
    expect(await ledger.get(key)).toMatchObject({ status: "expired", builds: 1 });

    chain.faults.reset();
    await runBuild(key, 2);
    expect((await runSign(key, 2))?.outcome).toBe("confirmed");
    expect(await ledger.get(key)).toMatchObject({ status: "confirmed", builds: 2 });
    expect(landedClaims.get(position.pubkey)).toBe(1);
    expect(await usdcBalance(sandbox, position.ownerPubkey, sandbox.usdcMint)).toBe(
      paidBefore + BigInt(built.amountMicroUsd ?? "0"),
    );
  }, 60_000);

  it("rebuilds a claim whose sign job waited past its blockhash's lifetime (a backlog), unsigned, paid once", async () => {
    const { position, key, paidBefore } = await admitClaim();
    const built = await runBuild(key, 1);
    const lastValid = built.lastValidBlockHeight ?? 0;
    // The sign job sits in the queue until the chain is past the transaction's last valid height.
    chain.advanceSlots(lastValid - chain.blockHeight + 1);

    const first = await runSign(key, 1);
    expect(first).toMatchObject({ outcome: "expired" });
    expect(first).not.toHaveProperty("signature");
    // Nothing was signed, so nothing is on record: not a refusal, no attempt used.
    expect(await attempts.get(key)).toBeUndefined();
    expect(await ledger.get(key)).toMatchObject({ status: "expired", builds: 1 });
    expect((await queuedBuild(key, 2))?.data).toEqual({ intentKey: key, build: 2 });

    await runBuild(key, 2);
    expect((await runSign(key, 2))?.outcome).toBe("confirmed");
    expect(await ledger.get(key)).toMatchObject({ status: "confirmed", builds: 2 });
    expect(landedClaims.get(position.pubkey)).toBe(1);
    expect(await usdcBalance(sandbox, position.ownerPubkey, sandbox.usdcMint)).toBe(
      paidBefore + BigInt(built.amountMicroUsd ?? "0"),
    );
  }, 60_000);

  it("rebuilds a claim whose blockhash the node dropped between the check and the simulation (a slow machine), never refused", async () => {
    const { position, key, paidBefore } = await admitClaim();
    const built = await runBuild(key, 1);
    const lastValid = built.lastValidBlockHeight ?? 0;
    // The blockhash passes its check, then the machine is slow: by the time the node simulates, the
    // chain is past the blockhash's lifetime and the simulation answers BlockhashNotFound.
    const simulate = connection.simulateTransaction.bind(connection);
    let stalled = 0;
    connection.simulateTransaction = (async (...args: Parameters<typeof simulate>) => {
      if (stalled === 0) {
        stalled += 1;
        chain.advanceSlots(lastValid - chain.blockHeight + 2);
      }
      return simulate(...args);
    }) as typeof connection.simulateTransaction;
    try {
      const first = await runSign(key, 1);
      expect(first).toMatchObject({ outcome: "expired" });
      expect(stalled).toBe(1);
    } finally {
      connection.simulateTransaction = simulate;
    }
    expect(await attempts.get(key)).toBeUndefined();
    expect(await ledger.get(key)).toMatchObject({ status: "expired", builds: 1 });
    expect((await ledger.get(key))?.reason).toBeUndefined();

    const rebuilt = await runBuild(key, 2);
    expect((await runSign(key, 2))?.outcome).toBe("confirmed");
    expect(await ledger.get(key)).toMatchObject({ status: "confirmed", builds: 2 });
    expect(landedClaims.get(position.pubkey)).toBe(1);
    expect(await usdcBalance(sandbox, position.ownerPubkey, sandbox.usdcMint)).toBe(
      paidBefore + BigInt(rebuilt.amountMicroUsd ?? "0"),
    );
  }, 60_000);

  it("confirms a claim that lands late, after several rebroadcast windows, without building a second one", async () => {
    const { position, key, paidBefore } = await admitClaim();
    const built = await runBuild(key, 1);
    // Held by the chain for eight rebroadcast intervals, well inside the blockhash's lifetime.
    chain.faults.landDelayMs = 8 * REBROADCAST_MS;
    const outcome = await runSign(key, 1);
    expect(outcome?.outcome).toBe("confirmed");
    const signature = outcome?.outcome === "confirmed" ? outcome.signature : "";

    expect(await ledger.get(key)).toMatchObject({ status: "confirmed", builds: 1, signature });
    expect(await attempts.get(key)).toMatchObject({ status: "confirmed", attempt: 1, signature });
    expect(await queuedBuild(key, 2)).toBeUndefined();
    expect(landedClaims.get(position.pubkey)).toBe(1);
    expect(await usdcBalance(sandbox, position.ownerPubkey, sandbox.usdcMint)).toBe(
      paidBefore + BigInt(built.amountMicroUsd ?? "0"),
    );
  }, 60_000);

  it("resumes a claim whose first sign run gave up before it landed: same transaction, no rebuild, paid once", async () => {
    const { position, key, paidBefore } = await admitClaim();
    const built = await runBuild(key, 1);
    const sent = await sendThenGiveUp(key);
    expect(await ledger.get(key)).toMatchObject({ status: "sending", builds: 1 });
    expect(await usdcBalance(sandbox, position.ownerPubkey, sandbox.usdcMint)).toBe(paidBefore);
    chain.landHeldSends(); // it lands while no run watches it

    // BullMQ runs the job again: it follows the recorded signature instead of signing a new one.
    const outcome = await runSign(key, 1);
    expect(outcome).toMatchObject({ outcome: "confirmed", signature: sent?.signature });
    expect(await ledger.get(key)).toMatchObject({
      status: "confirmed",
      builds: 1,
      signature: sent?.signature,
    });
    expect(await attempts.get(key)).toMatchObject({
      status: "confirmed",
      attempt: 1,
      signature: sent?.signature,
    });
    expect(await queuedBuild(key, 2)).toBeUndefined();
    expect(landedClaims.get(position.pubkey)).toBe(1);
    expect(await usdcBalance(sandbox, position.ownerPubkey, sandbox.usdcMint)).toBe(
      paidBefore + BigInt(built.amountMicroUsd ?? "0"),
    );
  }, 60_000);

  it("while paused signs nothing new, yet watches a transaction an earlier run sent to its outcome", async () => {
    const { position, key, paidBefore } = await admitClaim();
    const built = await runBuild(key, 1);
    const pause = new PauseSwitch(redis.redis, keys);
    await pause.pause("test", Math.floor(Date.now() / 1000));
    try {
      // Nothing sent yet: the job waits for resume, nothing is signed or recorded.
      await expect(runSign(key, 1)).rejects.toThrow("paused");
      expect(await attempts.get(key)).toBeUndefined();
      expect(await ledger.get(key)).toMatchObject({ status: "built", builds: 1 });

      // Resumed for one run, which sends and then gives up watching (a crash) before the chain lands it.
      await pause.resume();
      const sent = await sendThenGiveUp(key);

      // Paused again: the re-run of the job still watches the sent transaction to its outcome, and
      // never reaches the signer.
      await pause.pause("test", Math.floor(Date.now() / 1000));
      chain.landHeldSends();
      const job = await queuedSign(key, 1);
      if (!job) throw new Error("no sign job");
      const deps = signDeps();
      const signer = vi.fn(deps.signAndSubmit);
      expect(await processSign(job, { ...deps, signAndSubmit: signer })).toMatchObject({
        outcome: "confirmed",
        signature: sent?.signature,
      });
      expect(signer).not.toHaveBeenCalled();
      expect(await ledger.get(key)).toMatchObject({ status: "confirmed", signature: sent?.signature });
      expect(landedClaims.get(position.pubkey)).toBe(1);
      expect(await usdcBalance(sandbox, position.ownerPubkey, sandbox.usdcMint)).toBe(
        paidBefore + BigInt(built.amountMicroUsd ?? "0"),
      );
    } finally {
      await pause.resume();
    }
  }, 60_000);

  it("with every watch slot taken, hands the sent claim to the confirm queue, whose job confirms it once", async () => {
    const { position, key, paidBefore } = await admitClaim();
    const built = await runBuild(key, 1);
    const confirm = redis.queue<ConfirmJobData>(QUEUES.confirm);
    const slots = new WatchSlots(1);
    expect(slots.take()).toBe(true); // a watch of another claim holds the only slot
    const job = await queuedSign(key, 1);
    if (!job) throw new Error("no sign job");
    const sent = await processSign(job, {
      ...signDeps(),
      watchSlots: slots,
      handOff: (intentKey, build, attempt, signJobId) =>
        enqueueConfirm(confirm, intentKey, build, attempt, signJobId),
    });
    expect(sent).toMatchObject({ outcome: "sent", attempt: 1 });
    expect(await ledger.get(key)).toMatchObject({ status: "sending", builds: 1 });
    const [watch] = await confirm.getJobs(["waiting"]);
    expect(watch?.data).toEqual({ intentKey: key, build: 1 });
    if (!watch) return;
    const watched = await processConfirm(watch, { ...signDeps(), onWatching: () => {} });
    const signature = sent?.outcome === "sent" ? sent.signature : "";
    expect(watched).toMatchObject({ outcome: "confirmed", signature });
    expect(await ledger.get(key)).toMatchObject({ status: "confirmed", signature });
    expect(landedClaims.get(position.pubkey)).toBe(1);
    expect(await usdcBalance(sandbox, position.ownerPubkey, sandbox.usdcMint)).toBe(
      paidBefore + BigInt(built.amountMicroUsd ?? "0"),
    );
    // The slot held by the other watch was never taken twice, nor released by this job.
    expect(slots.take()).toBe(false);
  }, 60_000);

  it("fails the intent for this try once the rebuilt transaction expires too (maxRebuilds 1); nothing is paid", async () => {
    const { position, key, paidBefore } = await admitClaim();
    chain.dropFirstSends(DROP_EVERY_SEND);
    await runBuild(key, 1);
    let stop = fastForward(sandbox);
    expect((await runSign(key, 1).finally(stop))?.outcome).toBe("expired");
    expect(await runBuild(key, 2)).toMatchObject({ status: "built", builds: 2 });
    stop = fastForward(sandbox);
    const last = await runSign(key, 2).finally(stop);
    expect(last?.outcome).toBe("expired");

    expect(await ledger.get(key)).toMatchObject({
      status: "failed",
      builds: 2,
      signature: last?.outcome === "expired" ? last.signature : "",
      error: "expired 2 times; giving up on this try",
    });
    expect(await attempts.get(key)).toMatchObject({ status: "expired", attempt: 2 });
    expect(await queuedBuild(key, 3)).toBeUndefined();
    expect(landedClaims.get(position.pubkey)).toBeUndefined();
    expect(await usdcBalance(sandbox, position.ownerPubkey, sandbox.usdcMint)).toBe(paidBefore);
  }, 60_000);
});
