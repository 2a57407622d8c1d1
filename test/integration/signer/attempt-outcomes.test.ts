import { Connection, Keypair } from "@solana/web3.js";
import bs58 from "bs58";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Intent } from "../../../src/core/intent.js";
import { RedisAttemptStore } from "../../../src/signer/attempt-store.js";
import { Wallets } from "../../../src/signer/keys.js";
import {
  type SignAndSubmitInput,
  signAndSend,
  signAndSubmit,
  watchAttempt,
} from "../../../src/signer/sign-transaction.js";
import { testRedis } from "../../helpers/redis.js";
import { recordTestSecret } from "../../helpers/test-secrets.js";
import { captureLogger } from "./helpers.js";
import { buildTransaction, memo, toBase64 } from "./tx-builders.js";

/**
 * What the signer answers from the attempt record alone: an intent already in flight or finished, or
 * out of attempts. None of these may sign or reach the chain, so the connection points nowhere (any
 * call would fail the test) and the wallet is one the records never name.
 */
let redis: Awaited<ReturnType<typeof testRedis>>;
let attempts: RedisAttemptStore;
const key = Keypair.generate();
recordTestSecret(key.secretKey, `attempt-outcomes wallet ${key.publicKey.toBase58()}`);
const wallets = Wallets.fromSecretKeys([key.secretKey.slice()]);
const nowhere = new Connection("http://127.0.0.1:9");

beforeEach(async () => {
  redis = await testRedis("outcomes");
  attempts = new RedisAttemptStore(redis.redis, `${redis.prefix}:`);
});
afterEach(async () => {
  await redis.cleanup();
});

function intent(): Intent {
  const position = Keypair.generate().publicKey.toBase58();
  return {
    key: `claim-${position}`,
    kind: "claim",
    wallet: key.publicKey.toBase58(),
    strategy: "test",
    positionPubkey: position,
  };
}

/** An unsigned memo transaction from the wallet, and the same one signed (as a run would record it). */
function transaction(text: string) {
  const tx = buildTransaction({
    payer: key.publicKey,
    blockhash: Keypair.generate().publicKey.toBase58(),
    instructions: [memo(text)],
  });
  const unsigned = toBase64(tx);
  tx.addSignature(key.publicKey, wallets.sign(key.publicKey, tx.message.serialize()));
  return {
    unsigned,
    signed: toBase64(tx),
    signature: bs58.encode(tx.signatures[0] as Uint8Array),
    recentBlockhash: tx.message.recentBlockhash,
  };
}

async function record(intentKey: string, attempt: number, text: string) {
  const tx = transaction(text);
  expect(
    await attempts.recordSigned(intentKey, {
      attempt,
      signature: tx.signature,
      lastValidBlockHeight: 1_000,
      recentBlockhash: tx.recentBlockhash,
      signedTransaction: tx.signed,
    }),
  ).toBe(true);
  return tx;
}

function input(forIntent: Intent, transactionBase64: string): SignAndSubmitInput {
  return {
    intent: forIntent,
    transactionBase64,
    lastValidBlockHeight: 1_000,
    wallets,
    connection: nowhere,
    policyConfig: { maxComputeUnitPriceMicroLamports: 1n, maxPriorityFeeLamports: 1n },
    attempts,
    logger: captureLogger().logger,
  };
}

describe("outcomes read from the attempt record", () => {
  it("a confirmed intent answers its signature and slot", async () => {
    const i = intent();
    const tx = await record(i.key, 1, "a");
    await attempts.finish(i.key, tx.signature, { status: "confirmed", slot: 4_242 });
    const expected = {
      outcome: "confirmed",
      signature: tx.signature,
      slot: 4_242,
      attempt: 1,
      resumed: true,
    };
    expect(await signAndSend(input(i, transaction("other").unsigned))).toStrictEqual(expected);
    expect(await watchAttempt({ ...input(i, ""), intentKey: i.key })).toStrictEqual(expected);
  });

  it("a confirmed record without a slot answers slot 0", async () => {
    const i = intent();
    const tx = await record(i.key, 1, "a");
    await attempts.finish(i.key, tx.signature, { status: "confirmed" });
    expect(await watchAttempt({ ...input(i, ""), intentKey: i.key })).toStrictEqual({
      outcome: "confirmed",
      signature: tx.signature,
      slot: 0,
      attempt: 1,
      resumed: true,
    });
  });

  it("the very transaction that failed, brought again: its failure stands, with the chain's error", async () => {
    const i = intent();
    await attempts.recordRefused(i.key, 1, "outflow_sol", "x");
    const tx = await record(i.key, 2, "b");
    await attempts.finish(i.key, tx.signature, {
      status: "failed",
      error: "instruction 0: custom program error 0x1",
    });
    const expected = {
      outcome: "failed",
      signature: tx.signature,
      error: "instruction 0: custom program error 0x1",
      attempt: 2,
      resumed: true,
    };
    expect(await signAndSubmit(input(i, tx.unsigned))).toStrictEqual(expected);
    expect(await watchAttempt({ ...input(i, ""), intentKey: i.key })).toStrictEqual(expected);
  });

  it("a failure recorded without an error says failed", async () => {
    const i = intent();
    const tx = await record(i.key, 1, "c");
    await attempts.finish(i.key, tx.signature, { status: "failed" });
    expect(await signAndSend(input(i, tx.unsigned))).toStrictEqual({
      outcome: "failed",
      signature: tx.signature,
      error: "failed",
      attempt: 1,
      resumed: true,
    });
  });

  it("the very transaction that expired, brought again: expired, with its signature", async () => {
    const i = intent();
    const tx = await record(i.key, 1, "d");
    await attempts.finish(i.key, tx.signature, { status: "expired" });
    const logs = captureLogger();
    expect(await signAndSend({ ...input(i, tx.unsigned), logger: logs.logger })).toStrictEqual({
      outcome: "expired",
      signature: tx.signature,
      attempt: 1,
      resumed: true,
    });
    expect(logs.lines()).toContainEqual(
      expect.objectContaining({
        level: "info",
        msg: "this transaction already finished",
        intentKey: i.key,
        attempt: 1,
        status: "expired",
      }),
    );
  });

  it("a refusal answers its reason and detail; an empty detail stays empty", async () => {
    const i = intent();
    await attempts.recordRefused(i.key, 1, "outflow_sol", "drains 5 SOL");
    expect(await watchAttempt({ ...input(i, ""), intentKey: i.key })).toStrictEqual({
      outcome: "refused",
      reason: "outflow_sol",
      detail: "drains 5 SOL",
      attempt: 1,
      resumed: true,
    });
    const j = intent();
    await attempts.recordRefused(j.key, 1, "", "");
    expect(await watchAttempt({ ...input(j, ""), intentKey: j.key })).toStrictEqual({
      outcome: "refused",
      reason: "refused",
      detail: "",
      attempt: 1,
      resumed: true,
    });
  });

  it("an attempt in flight answers sent with its recorded signature, and signs nothing", async () => {
    const i = intent();
    const tx = await record(i.key, 1, "e");
    const logs = captureLogger();
    expect(
      await signAndSend({ ...input(i, transaction("fresh").unsigned), logger: logs.logger }),
    ).toStrictEqual({
      outcome: "sent",
      signature: tx.signature,
      attempt: 1,
      resumed: true,
    });
    expect(logs.lines()).toContainEqual(
      expect.objectContaining({
        level: "info",
        msg: "an attempt of this intent is in flight",
        signature: tx.signature,
        attempt: 1,
      }),
    );
  });

  it("refuses to follow an attempt in flight whose record lost its signature", async () => {
    const i = intent();
    await record(i.key, 1, "f");
    await redis.redis.hdel(`${redis.prefix}:attempt:${i.key}`, "signature");
    await expect(signAndSend(input(i, transaction("fresh").unsigned))).rejects.toThrow(
      `attempt record of ${i.key} is in flight but incomplete`,
    );
  });

  it.each(["signature", "signedTransaction", "lastValidBlockHeight", "recentBlockhash"])(
    "refuses to watch an attempt in flight whose record lost its %s",
    async (field) => {
      const i = intent();
      await record(i.key, 1, "g");
      await redis.redis.hdel(`${redis.prefix}:attempt:${i.key}`, field);
      await expect(watchAttempt({ ...input(i, ""), intentKey: i.key })).rejects.toThrow(
        `attempt record of ${i.key} is in flight but incomplete`,
      );
    },
  );

  it("has nothing to watch without a record", async () => {
    const i = intent();
    await expect(watchAttempt({ ...input(i, ""), intentKey: i.key })).rejects.toThrow(
      `no attempt record of ${i.key} to watch`,
    );
  });
});

describe("the bound on attempts", () => {
  it("signs nothing past maxAttempts: failed, naming the count and the bound", async () => {
    const i = intent();
    const tx = await record(i.key, 1, "h");
    await attempts.finish(i.key, tx.signature, { status: "expired" });
    const logs = captureLogger();
    const outcome = await signAndSend({
      ...input(i, transaction("rebuilt").unsigned),
      maxAttempts: 1,
      logger: logs.logger,
    });
    expect(outcome).toStrictEqual({
      outcome: "failed",
      error: "1 transactions tried, at most 1",
      attempt: 1,
      resumed: false,
    });
    expect(logs.lines()).toContainEqual(
      expect.objectContaining({
        level: "warn",
        attempt: 2,
        maxAttempts: 1,
        msg: "no attempts left for this intent",
      }),
    );
    expect(await attempts.get(i.key)).toMatchObject({
      status: "expired",
      attempt: 1,
      signature: tx.signature,
    });
  });

  it("an expired record that lost its signed bytes is not taken for the transaction brought again", async () => {
    const i = intent();
    const tx = await record(i.key, 1, "k");
    await attempts.finish(i.key, tx.signature, { status: "expired" });
    await redis.redis.hdel(`${redis.prefix}:attempt:${i.key}`, "signedTransaction");
    // Not "already finished": the next attempt is opened, here past the bound.
    expect(await signAndSend({ ...input(i, tx.unsigned), maxAttempts: 1 })).toStrictEqual({
      outcome: "failed",
      error: "1 transactions tried, at most 1",
      attempt: 1,
      resumed: false,
    });
  });

  it("a node that cannot be reached: the error names the call that failed, nothing is recorded", async () => {
    const i = intent();
    await expect(signAndSend(input(i, transaction("first").unsigned))).rejects.toThrow(/^getBlockHeight: /);
    expect(await attempts.get(i.key)).toBeUndefined();
  });

  it("a refusal uses up an attempt too", async () => {
    const i = intent();
    await attempts.recordRefused(i.key, 3, "outflow_sol", "x");
    expect(await signAndSend(input(i, transaction("rebuilt").unsigned))).toStrictEqual({
      outcome: "failed",
      error: "3 transactions tried, at most 3",
      attempt: 3,
      resumed: false,
    });
  });

  it("with maxAttempts 0 not even the first transaction is signed", async () => {
    const i = intent();
    expect(await signAndSend({ ...input(i, transaction("first").unsigned), maxAttempts: 0 })).toStrictEqual({
      outcome: "failed",
      error: "0 transactions tried, at most 0",
      attempt: 0,
      resumed: false,
    });
    expect(await attempts.get(i.key)).toBeUndefined();
  });
});
