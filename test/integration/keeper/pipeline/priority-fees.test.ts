import { NATIVE_MINT } from "@solana/spl-token";
import { Connection, VersionedTransaction } from "@solana/web3.js";
import type { Queue } from "bullmq";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, createApiClient } from "../../../../src/api/index.js";
import { readComputeBudget } from "../../../../src/chain/compute-budget.js";
import { decodeTransaction, rpcLookupTableLoader } from "../../../../src/chain/decode.js";
import { type PriorityFeeSettings, recentPriorityFeesOn } from "../../../../src/chain/priority-fee.js";
import type { Intent } from "../../../../src/core/intent.js";
import type { TriggerCancelBody, TriggerCreateBody } from "../../../../src/core/schemas/trigger.js";
import { jobIds, QUEUES, type RecordTry, type RedisKeys } from "../../../../src/keeper/names.js";
import { PauseSwitch } from "../../../../src/keeper/operator/pause.js";
import { type ActionDeps, processAction } from "../../../../src/keeper/pipeline/action-worker.js";
import { simulateUnitsOn } from "../../../../src/keeper/pipeline/assemble-swap.js";
import { processSign, type SignDeps } from "../../../../src/keeper/pipeline/sign-worker.js";
import { enqueueBuild } from "../../../../src/keeper/queues/enqueue.js";
import type { ActionJobData, SignJobData } from "../../../../src/keeper/queues/queues.js";
import type { Ledger, LedgerRow } from "../../../../src/keeper/state/ledger.js";
import type { LocalChain } from "../../../../src/sandbox/chain/local-chain.js";
import { SANDBOX_POOL_PROGRAM_ID } from "../../../../src/sandbox/chain/pool-program.js";
import type { RunningSandbox } from "../../../../src/sandbox/index.js";
import type { RedisAttemptStore } from "../../../../src/signer/attempt-store.js";
import type { Wallets } from "../../../../src/signer/keys.js";
import { signAndSend } from "../../../../src/signer/sign-transaction.js";
import { serviceBuildApi } from "../../../helpers/build-api.js";
import { captureLogger } from "../../../helpers/capture-logger.js";
import { sandboxWallets, startTestSandbox } from "../../../helpers/keeper-harness.js";
import { type LedgerAndQueues, ledgerAndQueues } from "../../../helpers/ledger-queues.js";
import { watchDepsFor } from "../../../helpers/watch-deps.js";

const MAX_REBUILDS = 2;
/** The policy's ceilings, the same the estimator holds its bids to. */
const MAX_UNIT_PRICE = 2_000_000;
const MAX_PRIORITY_FEE_LAMPORTS = 1_000_000;
const settings: PriorityFeeSettings = {
  percentile: 75,
  minMicroLamports: 1_000,
  escalation: 1.5,
  maxUnitPriceMicroLamports: MAX_UNIT_PRICE,
  maxPriorityFeeLamports: MAX_PRIORITY_FEE_LAMPORTS,
};

/**
 * Priority fees as the keeper runs them: the builder (processAction) samples the local chain's recent
 * fees over RPC, asks the sandbox service over HTTP for a trigger order at the estimated price, the
 * signer (processSign with the real signAndSubmit and policy) signs and executes it; an expiry makes
 * the real signer ask for a rebuild, which bids higher.
 */
describe("priority fees: estimated per build, raised on a rebuild, signed within the policy", () => {
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
  const logs = captureLogger("debug");
  /** The bodies of every createOrder the builder sent the service. */
  const createBodies: TriggerCreateBody[] = [];
  const cancelBodies: TriggerCancelBody[] = [];
  const observed: Array<{ kind: string; price: number }> = [];
  let nextWallet = 0;

  beforeAll(async () => {
    ({ sandbox } = await startTestSandbox());
    if (!sandbox.chain) throw new Error("the sandbox runs no chain");
    chain = sandbox.chain.chain;
    // Each recent fee the tests set is one slot's: a chain younger than the list would answer fewer.
    chain.advanceSlots(10);
    redis = await ledgerAndQueues("priority-fees");
    ({ keys, ledger, attempts } = redis);
    actions = redis.queue(QUEUES.actions);
    sign = redis.queue(QUEUES.sign);
    client = createApiClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey });
    connection = new Connection(sandbox.chain.url, "confirmed");
    wallets = sandboxWallets(sandbox);
  }, 60_000);

  afterEach(() => {
    chain.faults.reset();
  });

  afterAll(async () => {
    await sandbox?.close();
    await redis?.cleanup();
  });

  const actionDeps = (): ActionDeps => ({
    api: {
      ...serviceBuildApi(client),
      createTriggerOrder: async (body) => {
        createBodies.push(body);
        return client.trigger.createOrder(body);
      },
      cancelTriggerOrder: async (body) => {
        cancelBodies.push(body);
        return client.trigger.cancelOrder(body);
      },
      buildSwap: client.swap.build,
      simulateUnits: simulateUnitsOn(connection),
    },
    ledger,
    sign,
    logger: logs.logger,
    priorityFees: { recent: recentPriorityFeesOn(connection, logs.logger), settings },
    onPriorityFee: (kind, price) => observed.push({ kind, price }),
  });

  /** The signer role's dependencies, wired as src/app/signer-role.ts wires them (trigger rows go to execute). */
  const signDeps = (): SignDeps => ({
    ledger,
    actions,
    pause: new PauseSwitch(redis.redis, keys),
    maxRebuilds: MAX_REBUILDS,
    logger: logs.logger,
    ...watchDepsFor({
      connection,
      attempts,
      logger: logs.logger,
      send: { commitment: "confirmed", rebroadcastIntervalMs: 150, pollIntervalMs: 50 },
    }),
    signAndSubmit: async (row: LedgerRow) => {
      const requestId = row.requestId;
      if (!row.transaction) throw new Error(`${row.key} has no built transaction`);
      return signAndSend({
        intent: row.intent,
        transactionBase64: row.transaction,
        lastValidBlockHeight:
          row.lastValidBlockHeight ?? (await connection.getLatestBlockhash()).lastValidBlockHeight,
        wallets,
        connection,
        policyConfig: {
          maxComputeUnitPriceMicroLamports: BigInt(MAX_UNIT_PRICE),
          maxPriorityFeeLamports: BigInt(MAX_PRIORITY_FEE_LAMPORTS),
          commitment: "confirmed",
          // The sandbox pool's program pays swap outputs, as keeper configs for the sandbox allow it.
          extraPrograms: [SANDBOX_POOL_PROGRAM_ID.toBase58()],
        },
        attempts,
        logger: logs.logger,
        maxAttempts: (MAX_REBUILDS + 1) * 3,
        send: { commitment: "confirmed", rebroadcastIntervalMs: 150, pollIntervalMs: 50 },
        ...(requestId
          ? {
              submit: async (signedTransaction: string) =>
                client.trigger.execute({ requestId, signedTransaction }),
            }
          : {}),
      });
    },
  });

  /** A $10 USDC -> SOL trigger order of a fresh sandbox wallet, admitted and its first build queued. */
  async function admitTrigger(): Promise<string> {
    const wallet = sandbox.wallets[nextWallet++];
    if (!wallet) throw new Error("no sandbox wallet left");
    const intent: Intent = {
      kind: "createTrigger",
      key: `priority-fee-${wallet}`,
      wallet,
      strategy: "limit-orders",
      inputMint: sandbox.usdcMint,
      outputMint: NATIVE_MINT.toBase58(),
      makingAmount: "10000000",
      takingAmount: "1",
    };
    expect(await ledger.admit(intent)).toEqual({ admitted: true, tries: 1, recordId: expect.any(String) });
    await enqueueBuild(actions, intent.key, await firstTry(intent.key), 1);
    return intent.key;
  }

  /** The first try of the intent's ledger record, as its job ids name it. */
  async function firstTry(key: string): Promise<RecordTry> {
    return { tries: 1, recordId: (await ledger.get(key))?.recordId };
  }

  async function runBuild(key: string, build: number): Promise<LedgerRow> {
    const job = await actions.getJob(jobIds.action(key, await firstTry(key), build));
    if (!job) throw new Error(`no build job ${build} of ${key} in the actions queue`);
    await processAction(job, actionDeps());
    const row = await ledger.get(key);
    if (!row) throw new Error(`no ledger row for ${key}`);
    return row;
  }

  async function runSign(key: string, build: number) {
    const job = await sign.getJob(jobIds.sign(key, await firstTry(key), build));
    if (!job) throw new Error(`no sign job ${build} of ${key} in the sign queue`);
    return processSign(job, signDeps());
  }

  /** The compute budget a base64 transaction asks for (lookup tables read from the chain). */
  async function budgetOf(transactionBase64: string) {
    const view = await decodeTransaction(transactionBase64, rpcLookupTableLoader(connection));
    return readComputeBudget(view.instructions);
  }

  async function unitPriceOf(transactionBase64: string): Promise<bigint> {
    return (await budgetOf(transactionBase64)).unitPriceMicroLamports;
  }

  /** The compute budget of a landed transaction, read back from the chain. */
  async function landedBudget(signature: string) {
    const landed = await connection.getTransaction(signature, {
      commitment: "confirmed",
      maxSupportedTransactionVersion: 0,
    });
    if (!landed) throw new Error(`transaction ${signature} not found on chain`);
    return budgetOf(
      Buffer.from(new VersionedTransaction(landed.transaction.message).serialize()).toString("base64"),
    );
  }

  it("bids the 75th percentile of the recent fees, 1.5 times that on the rebuild after an expiry, and the signed transaction carries it; a cancel bids too", async () => {
    chain.faults.recentPriorityFees = [0, 10_000, 40_000, 20_000, 0, 30_000];
    const key = await admitTrigger();
    const first = await runBuild(key, 1);
    expect(first).toMatchObject({ status: "built", builds: 1 });
    expect(createBodies.at(-1)?.computeUnitPrice).toBe("30000");
    expect(await unitPriceOf(first.transaction ?? "")).toBe(30_000n);

    // The trigger build names no lastValidBlockHeight (nor does the live service): record the chain's as
    // the build saw it. The sign job then waits until that blockhash is gone: the real signer calls it
    // expired, unsigned, and asks for build 2.
    const { lastValidBlockHeight } = await connection.getLatestBlockhash();
    await ledger.update(key, { lastValidBlockHeight });
    chain.advanceSlots(lastValidBlockHeight - chain.blockHeight + 1);
    expect(await runSign(key, 1)).toMatchObject({ outcome: "expired" });
    expect((await actions.getJob(jobIds.action(key, await firstTry(key), 2)))?.data).toEqual({
      intentKey: key,
      build: 2,
    });

    const second = await runBuild(key, 2);
    expect(second).toMatchObject({ status: "built", builds: 2 });
    expect(createBodies.at(-1)?.computeUnitPrice).toBe("45000");
    expect(await unitPriceOf(second.transaction ?? "")).toBe(45_000n);
    await ledger.update(key, {
      lastValidBlockHeight: (await connection.getLatestBlockhash()).lastValidBlockHeight,
    });

    // The policy passes it: signed, executed, confirmed, and the landed transaction pays that price.
    const outcome = await runSign(key, 2);
    expect(outcome).toMatchObject({ outcome: "confirmed" });
    const signature = outcome?.outcome === "confirmed" ? outcome.signature : "";
    expect((await landedBudget(signature)).unitPriceMicroLamports).toBe(45_000n);
    expect(observed.filter((o) => o.kind === "createTrigger").map((o) => o.price)).toEqual([30_000, 45_000]);

    // Cancelling the order bids too: cancelOrder takes the price, and the refund lands at it.
    const order = (await ledger.get(key))?.order;
    expect(order).toBeDefined();
    chain.faults.recentPriorityFees = [70_000];
    const cancelKey = `${key}-cancel`;
    const cancel: Intent = {
      kind: "cancelTrigger",
      key: cancelKey,
      wallet: second.wallet,
      strategy: "limit-orders",
      order: order ?? "",
    };
    expect(await ledger.admit(cancel)).toEqual({ admitted: true, tries: 1, recordId: expect.any(String) });
    await enqueueBuild(actions, cancelKey, await firstTry(cancelKey), 1);
    const cancelRow = await runBuild(cancelKey, 1);
    expect(cancelBodies.at(-1)).toMatchObject({ order, computeUnitPrice: "70000" });
    expect(await unitPriceOf(cancelRow.transaction ?? "")).toBe(70_000n);
    const cancelled = await runSign(cancelKey, 1);
    expect(cancelled).toMatchObject({ outcome: "confirmed" });
    const cancelSignature = cancelled?.outcome === "confirmed" ? cancelled.signature : "";
    expect((await landedBudget(cancelSignature)).unitPriceMicroLamports).toBe(70_000n);
  }, 60_000);

  it("falls back to the floor when the fee RPC fails, and holds a runaway fee market to the policy's ceiling", async () => {
    chain.faults.methodErrors = { getRecentPrioritizationFees: { rate: 1, code: -32005, message: "busy" } };
    const floored = await admitTrigger();
    expect(await runBuild(floored, 1)).toMatchObject({ status: "built" });
    expect(createBodies.at(-1)?.computeUnitPrice).toBe("1000");
    expect(logs.lines().some((l) => l.msg === "recent priority fees unavailable: bidding the floor")).toBe(
      true,
    );
    expect((await runSign(floored, 1))?.outcome).toBe("confirmed");

    chain.faults.reset();
    chain.faults.recentPriorityFees = [50_000_000];
    const capped = await admitTrigger();
    const row = await runBuild(capped, 1);
    // 1,000,000 lamports less 20,000 kept for base fees, over 1,400,000 units (the most the service
    // could set): 700,000 per unit.
    expect(createBodies.at(-1)?.computeUnitPrice).toBe("700000");
    const budget = await budgetOf(row.transaction ?? "");
    expect(budget.priorityFeeLamports).toBeLessThanOrEqual(BigInt(MAX_PRIORITY_FEE_LAMPORTS));
    expect((await runSign(capped, 1))?.outcome).toBe("confirmed");
  }, 60_000);

  it("a swap Keeper assembles carries its bid, priced for the simulated limit, in place of the build's", async () => {
    chain.faults.recentPriorityFees = [12_000, 8_000];
    const wallet = sandbox.wallets[nextWallet++];
    if (!wallet) throw new Error("no sandbox wallet left");
    const intent: Intent = {
      kind: "swap",
      key: `priority-fee-swap-${wallet}`,
      wallet,
      strategy: "sweep",
      inputMint: sandbox.usdcMint,
      outputMint: NATIVE_MINT.toBase58(),
      amount: "1000000",
    };
    expect(await ledger.admit(intent)).toEqual({ admitted: true, tries: 1, recordId: expect.any(String) });
    await enqueueBuild(actions, intent.key, await firstTry(intent.key), 1);
    const row = await runBuild(intent.key, 1);
    expect(row).toMatchObject({ status: "built", builds: 1 });
    const budget = await budgetOf(row.transaction ?? "");
    // One price instruction (the sandbox build's own 1,000 replaced), Keeper's 12,000.
    expect(budget).toMatchObject({
      unitPriceMicroLamports: 12_000n,
      priceInstructions: 1,
      limitInstructions: 1,
    });
    const outcome = await runSign(intent.key, 1);
    expect(outcome).toMatchObject({ outcome: "confirmed" });
    const signature = outcome?.outcome === "confirmed" ? outcome.signature : "";
    expect((await landedBudget(signature)).unitPriceMicroLamports).toBe(12_000n);
  }, 60_000);
});
