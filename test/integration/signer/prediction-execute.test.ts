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
    chain: { slotMs: 25 },
    walletFunding: { sol: 10, usdcRaw: 1_000_000_000n },
  });
  api = createApiClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey });
  connection = new Connection(sandbox.chain?.url ?? "", "confirmed");
  vault = sandbox.chain?.assets.vault.publicKey.toBase58() ?? "";
});
afterAll(() => sandbox.close());
beforeEach(async () => {
  redis = await testRedis("prediction-execute");
  return () => redis.cleanup();
});

const signedBy = (base64: string, signer: Keypair) => {
  const tx = VersionedTransaction.deserialize(Buffer.from(base64, "base64"));
  tx.sign([signer]);
  return Buffer.from(tx.serialize()).toString("base64");
};

/** A Forecast position of wallet 0, bought through execute, and the build of its sell. */
async function forecastSell(
  eventIndex: number,
  marketIndex: number,
): Promise<{ intent: Intent; close: ClosePreview }> {
  const wallet = owner().publicKey.toBase58();
  const events = await api.prediction.listEvents({ provider: "bisonfi", includeMarkets: true });
  const market = events.data[eventIndex]?.markets?.[marketIndex];
  const buy = await api.prediction.createOrder({
    ownerPubkey: wallet,
    marketId: market?.marketId ?? "",
    isYes: true,
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
  close: ClosePreview,
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
