import { Connection, Keypair, VersionedTransaction } from "@solana/web3.js";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type ApiClient, createApiClient } from "../../../src/api/client.js";
import type { Intent } from "../../../src/core/intent.js";
import type { ClosePreview } from "../../../src/core/schemas/prediction.js";
import type { RunningSandbox } from "../../../src/sandbox/index.js";
import { DrivenClock } from "../../../src/sandbox/world/clock.js";
import { RedisAttemptStore } from "../../../src/signer/attempt-store.js";
import { Wallets } from "../../../src/signer/keys.js";
import { type PredictionRoute, predictionExecuteSubmit } from "../../../src/signer/prediction-route.js";
import { signAndSend, signAndSubmit, watchAttempt } from "../../../src/signer/sign-transaction.js";
import { startCheckedSandbox } from "../../helpers/checked-sandbox.js";
import { testRedis } from "../../helpers/redis.js";
import { captureLogger } from "./helpers.js";

/**
 * The signer's side of a Forecast sell, against the sandbox over HTTP and its local chain: the build
 * names the service's key as a required signer; the signer accepts it only when it is one of its
 * configured service signers and the transaction goes through the service's execute endpoint, and
 * maps what that endpoint answers to an outcome.
 */
let sandbox: RunningSandbox;
let api: ApiClient;
let connection: Connection;
let redis: Awaited<ReturnType<typeof testRedis>>;
let vault: string;
const owner = () => sandbox.world.walletKeypair(0);

beforeAll(async () => {
  sandbox = await startCheckedSandbox({
    port: 0,
    clock: new DrivenClock(),
    rateLimit: false,
    // Execute waits half a second for a transaction to land, then answers Failed (Timeout) as the live
    // service may; slots of 100 ms give a blockhash 15 s, longer than any test here takes to land it.
    chain: { slotMs: 100, executeTimeoutMs: 500 },
    walletFunding: { sol: 10, usdcRaw: 1_000_000_000n },
  });
  api = createApiClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey });
  connection = new Connection(sandbox.chain?.url ?? "", "confirmed");
  vault = sandbox.chain?.assets.vault.publicKey.toBase58() ?? "";
});
afterAll(() => sandbox.close());
beforeEach(async () => {
  redis = await testRedis("prediction-execute");
  return async () => {
    sandbox.faults.clear();
    sandbox.chain?.chain.faults.reset();
    await redis.cleanup();
  };
});

const signedBy = (base64: string, signer: Keypair) => {
  const tx = VersionedTransaction.deserialize(Buffer.from(base64, "base64"));
  tx.sign([signer]);
  return Buffer.from(tx.serialize()).toString("base64");
};

/** A Forecast position of wallet 0 (YES unless `isYes` is false), bought through execute, and the build of its sell. */
async function forecastSell(
  eventIndex: number,
  marketIndex: number,
  isYes = true,
): Promise<{ intent: Intent; close: ClosePreview }> {
  const wallet = owner().publicKey.toBase58();
  const events = await api.prediction.listEvents({ provider: "bisonfi", includeMarkets: true });
  const market = events.data[eventIndex]?.markets?.[marketIndex];
  const buy = await api.prediction.createOrder({
    ownerPubkey: wallet,
    marketId: market?.marketId ?? "",
    isYes,
    isBuy: true,
    depositAmount: "20000000",
  });
  const bought = await api.prediction.execute({
    signedTransaction: signedBy(buy.transaction, owner()),
    ...(buy.execution ? { context: buy.execution.context } : {}),
  });
  expect(bought.status).toBe("Success");
  const positionPubkey = buy.order.positionPubkey;
  const close = await api.prediction.closePosition(positionPubkey, { ownerPubkey: wallet });
  const intent: Intent = {
    key: `close-${positionPubkey}`,
    kind: "close",
    wallet,
    strategy: "test",
    positionPubkey,
  };
  return { intent, close };
}

function sign(
  intent: Intent,
  close: Pick<ClosePreview, "transaction" | "txMeta">,
  extra: Partial<Parameters<typeof signAndSubmit>[0]>,
  how: typeof signAndSubmit | typeof signAndSend = signAndSubmit,
) {
  return how({
    intent,
    transactionBase64: close.transaction,
    lastValidBlockHeight: Number(close.txMeta.lastValidBlockHeight),
    wallets: Wallets.fromSecretKeys([owner().secretKey.slice()]),
    connection,
    policyConfig: {
      maxComputeUnitPriceMicroLamports: 100_000n,
      maxPriorityFeeLamports: 1_000_000n,
      payoutMints: [sandbox.usdcMint],
    },
    attempts: new RedisAttemptStore(redis.redis, `${redis.prefix}:`),
    logger: captureLogger().logger,
    send: { rebroadcastIntervalMs: 200, pollIntervalMs: 50 },
    ...extra,
  });
}

const route = (close: ClosePreview, context?: Record<string, unknown>): PredictionRoute => ({
  via: "execute",
  context: context ?? close.execution?.context ?? {},
  requiredSigners: close.requiredSigners ?? [],
});

describe("a Forecast sell through the service's execute endpoint", () => {
  it("is confirmed when the service's key is a configured service signer; the proceeds are on chain", async () => {
    const { intent, close } = await forecastSell(0, 0);
    const before = sandbox.chain?.chain.tokenBalance(owner().publicKey, sandbox.chain.assets.usdcMint) ?? 0n;
    const outcome = await sign(intent, close, {
      submit: predictionExecuteSubmit(api.prediction.execute, route(close)),
      submitAnswerDecides: true,
      requiredSigners: close.requiredSigners ?? [],
      serviceSigners: [vault],
    });
    expect(outcome).toMatchObject({ outcome: "confirmed" });
    const after = sandbox.chain?.chain.tokenBalance(owner().publicKey, sandbox.chain.assets.usdcMint) ?? 0n;
    expect(after - before).toBe(BigInt(close.order.orderCostUsd) - BigInt(close.order.estimatedTotalFeeUsd));
  });

  it("is refused, nothing signed, when a required signer is not a configured service signer", async () => {
    const { intent, close } = await forecastSell(0, 1);
    const stranger = Keypair.generate().publicKey.toBase58();
    const outcome = await sign(intent, close, {
      submit: predictionExecuteSubmit(api.prediction.execute, route(close)),
      submitAnswerDecides: true,
      requiredSigners: [intent.wallet, vault, stranger],
      serviceSigners: [vault],
    });
    expect(outcome).toMatchObject({ outcome: "refused", reason: "foreign_signer" });
    if (outcome.outcome === "refused") expect(outcome.detail).toContain(stranger);
  });

  it("fails at once, nothing on chain, when the service refuses the request (a context not of this build)", async () => {
    const { intent, close } = await forecastSell(1, 0);
    const wrong = { ...(close.execution?.context ?? {}), id: "swap-0-999999" };
    const outcome = await sign(intent, close, {
      submit: predictionExecuteSubmit(api.prediction.execute, route(close, wrong)),
      submitAnswerDecides: true,
      requiredSigners: close.requiredSigners ?? [],
      serviceSigners: [vault],
    });
    expect(outcome).toMatchObject({ outcome: "failed" });
    if (outcome.outcome !== "failed") return;
    expect(outcome.error).toMatch(/^execute refused: .*context/);
    const status = await connection.getSignatureStatus(outcome.signature ?? "", {
      searchTransactionHistory: true,
    });
    expect(status.value).toBeNull();
  });

  it("an execute call lost to the network is resent by the confirm loop through execute: paid once", async () => {
    const { intent, close } = await forecastSell(1, 1);
    const usdc = () =>
      sandbox.chain?.chain.tokenBalance(owner().publicKey, sandbox.chain.assets.usdcMint) ?? 0n;
    const before = usdc();
    const submit = predictionExecuteSubmit(api.prediction.execute, route(close));
    sandbox.faults.configure("executePrediction", { errorRate: 1 });
    const attempts = new RedisAttemptStore(redis.redis, `${redis.prefix}:`);
    const sent = await sign(
      intent,
      close,
      {
        attempts,
        submit,
        submitAnswerDecides: true,
        requiredSigners: close.requiredSigners ?? [],
        serviceSigners: [vault],
      },
      signAndSend,
    );
    // No answer is not a failure: the signature is recorded, nothing landed yet.
    expect(sent).toMatchObject({ outcome: "sent" });
    expect(usdc()).toBe(before);
    sandbox.faults.clear();
    const watched = await watchAttempt({
      intentKey: intent.key,
      connection,
      attempts,
      logger: captureLogger().logger,
      send: { rebroadcastIntervalMs: 100, pollIntervalMs: 50 },
      resubmit: submit,
    });
    expect(watched).toMatchObject({
      outcome: "confirmed",
      signature: sent.outcome === "sent" ? sent.signature : "",
    });
    const paid = BigInt(close.order.orderCostUsd) - BigInt(close.order.estimatedTotalFeeUsd);
    expect(usdc() - before).toBe(paid);
    // The same bytes through execute again: the same transaction, not a second payment.
    const record = await attempts.get(intent.key);
    await api.prediction.execute({
      signedTransaction: record?.signedTransaction ?? "",
      ...(close.execution ? { context: close.execution.context } : {}),
    });
    expect(usdc() - before).toBe(paid);
  });
});

describe("an execute answer that does not prove the sell was never sent", () => {
  const chain = () => {
    if (!sandbox.chain) throw new Error("the sandbox runs no chain");
    return sandbox.chain.chain;
  };
  const usdc = () =>
    sandbox.chain?.chain.tokenBalance(owner().publicKey, sandbox.chain.assets.usdcMint) ?? 0n;
  const proceeds = (close: ClosePreview) =>
    BigInt(close.order.orderCostUsd) - BigInt(close.order.estimatedTotalFeeUsd);

  /** The signer's options for a Forecast sell through execute, with this test's attempt records. */
  function viaExecute(close: ClosePreview, attempts: RedisAttemptStore) {
    return {
      attempts,
      submit: predictionExecuteSubmit(api.prediction.execute, route(close)),
      submitAnswerDecides: true,
      requiredSigners: close.requiredSigners ?? [],
      serviceSigners: [vault],
    };
  }

  /** The confirm loop's watch of the intent's recorded attempt, resending through execute. */
  function watch(intent: Intent, close: ClosePreview, attempts: RedisAttemptStore) {
    return watchAttempt({
      intentKey: intent.key,
      connection,
      attempts,
      logger: captureLogger().logger,
      send: { rebroadcastIntervalMs: 200, pollIntervalMs: 50 },
      resubmit: predictionExecuteSubmit(api.prediction.execute, route(close)),
    });
  }

  it.each([
    { answer: "Failed (the service's wait for it ran out)", faults: undefined },
    { answer: "a body the client cannot read", faults: { malformedRate: 1 } },
  ])(
    "$answer while the chain still holds the sell: watched until it lands, confirmed, sold once, nothing signed again",
    async ({ faults }) => {
      const { intent, close } = await forecastSell(0, faults === undefined ? 0 : 1, false);
      const before = usdc();
      const attempts = new RedisAttemptStore(redis.redis, `${redis.prefix}:`);
      // The service broadcasts the sell; the chain holds it past the service's wait.
      chain().faults.landDelayMs = 600_000;
      if (faults) sandbox.faults.configure("executePrediction", faults);
      const sent = await sign(intent, close, viaExecute(close, attempts), signAndSend);
      expect(sent).toMatchObject({ outcome: "sent", attempt: 1, resumed: false });
      const signature = sent.outcome === "sent" ? sent.signature : "";
      expect(chain().isHeld(signature)).toBe(true);
      expect(await attempts.get(intent.key)).toMatchObject({ status: "sent", attempt: 1, signature });

      // The intent tried again meanwhile, with a fresh build of the same sell: nothing new is signed,
      // the attempt in flight is followed.
      chain().advanceSlots(1);
      const fresh = await api.prediction.closePosition(close.order.positionPubkey, {
        ownerPubkey: intent.wallet,
      });
      expect(fresh.transaction).not.toBe(close.transaction);
      const again = await sign(intent, fresh, viaExecute(fresh, attempts), signAndSend);
      expect(again).toMatchObject({ outcome: "sent", attempt: 1, signature, resumed: true });

      // The held sell lands: the watch confirms it.
      sandbox.faults.clear();
      chain().faults.landDelayMs = 0;
      chain().landHeldSends();
      expect(await watch(intent, close, attempts)).toMatchObject({ outcome: "confirmed", signature });
      expect(await attempts.get(intent.key)).toMatchObject({ status: "confirmed", attempt: 1, signature });
      expect(usdc() - before).toBe(proceeds(close));
    },
  );

  it("Failed for a sell that never lands: watched until its blockhash expires, then expired, and only then built again", async () => {
    const { intent, close } = await forecastSell(1, 0, false);
    const before = usdc();
    const attempts = new RedisAttemptStore(redis.redis, `${redis.prefix}:`);
    // Every send of the sell is lost: the service's wait runs out and it answers Failed.
    chain().dropFirstSends(1_000_000);
    const sent = await sign(intent, close, viaExecute(close, attempts), signAndSend);
    expect(sent).toMatchObject({ outcome: "sent", attempt: 1 });
    const signature = sent.outcome === "sent" ? sent.signature : "";

    // Past its blockhash's lifetime, a last look with history finds nothing: expired, not failed.
    chain().advanceSlots(200);
    expect(await watch(intent, close, attempts)).toMatchObject({ outcome: "expired", signature });
    expect(await attempts.get(intent.key)).toMatchObject({ status: "expired", attempt: 1, signature });
    expect(
      (await connection.getSignatureStatus(signature, { searchTransactionHistory: true })).value,
    ).toBeNull();
    expect(usdc()).toBe(before);

    // Now a fresh build may be signed, and it lands once.
    chain().faults.reset();
    const fresh = await api.prediction.closePosition(close.order.positionPubkey, {
      ownerPubkey: intent.wallet,
    });
    const rebuilt = await sign(intent, fresh, viaExecute(fresh, attempts));
    expect(rebuilt).toMatchObject({ outcome: "confirmed", attempt: 2 });
    expect(usdc() - before).toBe(proceeds(fresh));
  });

  it("a claim sent through execute, answered Failed while the chain still holds it: claimed once, nothing signed again", async () => {
    const wallet = owner().publicKey.toBase58();
    const positions = await api.prediction.listPositions({ ownerPubkey: wallet });
    const winner = positions.data.find((p) => p.claimable && !p.claimed);
    if (!winner) throw new Error("wallet 0 holds no claimable position");
    const intent: Intent = {
      key: `claim-${winner.pubkey}`,
      kind: "claim",
      wallet,
      strategy: "test",
      positionPubkey: winner.pubkey,
    };
    const claimRoute: PredictionRoute = { via: "execute", requiredSigners: [] };
    const attempts = new RedisAttemptStore(redis.redis, `${redis.prefix}:`);
    const viaExecute = {
      attempts,
      submit: predictionExecuteSubmit(api.prediction.execute, claimRoute),
      submitAnswerDecides: true,
    };
    const before = usdc();
    const build = await api.prediction.claimPosition(winner.pubkey, { ownerPubkey: wallet });
    chain().faults.landDelayMs = 600_000;
    const sent = await sign(intent, build, viaExecute, signAndSend);
    expect(sent).toMatchObject({ outcome: "sent", attempt: 1 });
    const signature = sent.outcome === "sent" ? sent.signature : "";

    chain().advanceSlots(1);
    const fresh = await api.prediction.claimPosition(winner.pubkey, { ownerPubkey: wallet });
    expect(fresh.transaction).not.toBe(build.transaction);
    expect(await sign(intent, fresh, viaExecute, signAndSend)).toMatchObject({
      outcome: "sent",
      attempt: 1,
      signature,
    });

    chain().faults.landDelayMs = 0;
    chain().landHeldSends();
    expect(
      await watchAttempt({
        intentKey: intent.key,
        connection,
        attempts,
        logger: captureLogger().logger,
        send: { rebroadcastIntervalMs: 200, pollIntervalMs: 50 },
        resubmit: viaExecute.submit,
      }),
    ).toMatchObject({ outcome: "confirmed", signature });
    expect(await attempts.get(intent.key)).toMatchObject({ status: "confirmed", attempt: 1, signature });
    expect(usdc() - before).toBe(BigInt(build.position.payoutAmountUsd));
    const claimed = await api.prediction.getPosition(winner.pubkey);
    expect(claimed).toMatchObject({ claimed: true });
  });
});
