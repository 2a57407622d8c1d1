import { randomBytes } from "node:crypto";
import { createTransferCheckedInstruction } from "@solana/spl-token";
import { Keypair, type VersionedTransaction } from "@solana/web3.js";
import bs58 from "bs58";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { TransientError } from "../../../src/core/errors.js";
import type { Intent } from "../../../src/core/intent.js";
import type { AttemptStore } from "../../../src/signer/attempt-store.js";
import { type SignAndSubmitInput, signAndSend, watchAttempt } from "../../../src/signer/sign-transaction.js";
import type { Signer } from "../../../src/signer/signer.js";
import { type SignerEnv, startSignerEnv, USDC_DECIMALS } from "./env.js";
import { captureLogger } from "./helpers.js";
import { buildTransaction, memo, toBase64 } from "./tx-builders.js";

/**
 * The signer's paths around the policy and the attempt record: what is refused and recorded, what a
 * run that lost a race to another run of the same intent answers, and what the operator reads in the
 * log on the way.
 */
const PAYOUT = 1_500_000n;
let env: SignerEnv;

beforeAll(async () => {
  env = await startSignerEnv("sign-paths", { slotMs: 100 });
});
afterEach(() => {
  env.chain.faults.reset();
  vi.restoreAllMocks();
});
afterAll(async () => {
  await env?.close();
});

async function claim(): Promise<{ tx: VersionedTransaction; lastValidBlockHeight: number }> {
  const bh = await env.connection.getLatestBlockhash("confirmed");
  return { tx: env.claimTransaction(PAYOUT, bh.blockhash), lastValidBlockHeight: bh.lastValidBlockHeight };
}

function input(
  intent: Intent,
  built: { tx: VersionedTransaction; lastValidBlockHeight: number },
  logger = captureLogger().logger,
): SignAndSubmitInput {
  return {
    intent,
    transactionBase64: toBase64(built.tx),
    lastValidBlockHeight: built.lastValidBlockHeight,
    wallets: env.wallets,
    connection: env.connection,
    policyConfig: env.policy,
    attempts: env.attempts,
    logger,
    send: { rebroadcastIntervalMs: 150, pollIntervalMs: 50 },
  };
}

/** A claim that empties a vault of its own: once landed, the same bytes can no longer simulate. */
async function drainingClaim(
  funded = PAYOUT,
): Promise<{ tx: VersionedTransaction; lastValidBlockHeight: number }> {
  const vault = Keypair.generate();
  const vaultUsdc = env.chain.mintTo(env.usdc, vault.publicKey, funded);
  const bh = await env.connection.getLatestBlockhash("confirmed");
  const tx = buildTransaction({
    payer: env.wallet,
    blockhash: bh.blockhash,
    coSigners: [vault],
    instructions: [
      createTransferCheckedInstruction(
        vaultUsdc,
        env.usdc,
        env.walletUsdc,
        vault.publicKey,
        PAYOUT,
        USDC_DECIMALS,
      ),
    ],
  });
  return { tx, lastValidBlockHeight: bh.lastValidBlockHeight };
}

/** A claim of `built` signed, sent and confirmed, then its attempt record lost as Redis loses one. */
async function landedThenLost(built: { tx: VersionedTransaction; lastValidBlockHeight: number }) {
  const intent = env.claimIntent();
  expect((await signAndSend(input(intent, built))).outcome).toBe("sent");
  const landed = await watchAttempt({ ...input(intent, built), intentKey: intent.key, resumed: false });
  if (landed.outcome !== "confirmed") throw new Error(`the first run did not land: ${landed.outcome}`);
  await env.loseAttemptRecord(intent.key);
  return { intent, landed };
}

/** A re-run's answer and the record it left: the landed transaction, from the chain, as attempt 1. */
async function expectConfirmedFromChain(
  rerun: Awaited<ReturnType<typeof signAndSend>>,
  intent: Intent,
  landed: { signature: string; slot: number },
): Promise<void> {
  expect(rerun).toStrictEqual({
    outcome: "confirmed",
    signature: landed.signature,
    slot: landed.slot,
    attempt: 1,
    resumed: true,
  });
  expect(await env.attempts.get(intent.key)).toMatchObject({
    status: "confirmed",
    attempt: 1,
    signature: landed.signature,
    slot: landed.slot,
  });
}

/** A transaction the policy refuses before any RPC read: its fee payer is not the intent's wallet. */
async function foreignPayer(): Promise<{ tx: VersionedTransaction; lastValidBlockHeight: number }> {
  const bh = await env.connection.getLatestBlockhash("confirmed");
  const tx = buildTransaction({
    payer: env.stranger.publicKey,
    blockhash: bh.blockhash,
    instructions: [memo("not yours")],
  });
  return { tx, lastValidBlockHeight: bh.lastValidBlockHeight };
}

/** A transaction whose blockhash has passed: stale before anything is signed. */
async function staleMemo(): Promise<{ tx: VersionedTransaction; lastValidBlockHeight: number }> {
  const bh = await env.connection.getLatestBlockhash("confirmed");
  const tx = buildTransaction({ payer: env.wallet, blockhash: bh.blockhash, instructions: [memo("late")] });
  env.chain.advanceSlots(bh.lastValidBlockHeight - env.chain.blockHeight + 2);
  return { tx, lastValidBlockHeight: bh.lastValidBlockHeight };
}

/**
 * The store as a run that stalled sees it: its first read of the record comes from before another run
 * wrote (nothing there); every later read and every write is the real store's.
 */
function stalledStore(overrides: Partial<AttemptStore> = {}): AttemptStore {
  let first = true;
  return {
    get: async (key) => {
      if (first) {
        first = false;
        return undefined;
      }
      return env.attempts.get(key);
    },
    recordSigned: (key, signed) => env.attempts.recordSigned(key, signed),
    recordRefused: (key, attempt, reason, detail) => env.attempts.recordRefused(key, attempt, reason, detail),
    finish: (key, signature, finish) => env.attempts.finish(key, signature, finish),
    ...overrides,
  };
}

/** Another run's attempt 1 of `intent`, on record with `status`. */
async function otherRunsAttempt(intent: Intent, status: "sent" | "confirmed" | "expired") {
  const signature = bs58.encode(randomBytes(64)); // shaped like a signature
  await env.attempts.recordSigned(intent.key, {
    attempt: 1,
    signature,
    lastValidBlockHeight: 1,
    recentBlockhash: "other",
    signedTransaction: "b3RoZXI=",
  });
  if (status === "confirmed") await env.attempts.finish(intent.key, signature, { status, slot: 31 });
  if (status === "expired") await env.attempts.finish(intent.key, signature, { status });
  return signature;
}

function messages(lines: Record<string, unknown>[]): unknown[] {
  return lines.map((l) => l.msg);
}

describe("the path of a signed transaction, as the log tells it", () => {
  it("checked, signed, recorded, sent, watched and confirmed, each step logged with its figures", async () => {
    const intent = env.claimIntent();
    const logs = captureLogger("debug");
    const built = await claim();
    const sent = await signAndSend(input(intent, built, logs.logger));
    expect(sent).toMatchObject({ outcome: "sent", attempt: 1, resumed: false });
    if (sent.outcome !== "sent") return;

    const passed = logs.lines().find((l) => l.msg === "transaction passed the policy");
    expect(passed).toMatchObject({ level: "debug", intentKey: intent.key, wallet: intent.wallet });
    expect(passed?.feeLamports).toMatch(/^[0-9]+$/);
    expect(passed?.lamportsOut).toMatch(/^[0-9]+$/);
    // A claim brings its payout in: a negative outflow of the payout's mint.
    expect(passed?.tokensOut).toEqual({ [env.usdc.toBase58()]: (-PAYOUT).toString() });
    expect(Array.isArray(passed?.innerPrograms)).toBe(true);
    expect(logs.lines()).toContainEqual(
      expect.objectContaining({
        level: "info",
        msg: "transaction signed and recorded",
        signature: sent.signature,
        attempt: 1,
      }),
    );
    // The service's height is within a blockhash's lifetime: nothing to cap, nothing to say.
    expect(messages(logs.lines()).filter((m) => String(m).startsWith("lastValidBlockHeight"))).toEqual([]);

    // The keeper's watcher, in another process after a restart, is told nothing of who sent it. The
    // send already landed: the watcher finds it without sending it again.
    const watchLogs = captureLogger("debug");
    const sends = vi.spyOn(env.connection, "sendRawTransaction");
    const outcome = await watchAttempt({
      connection: env.connection,
      attempts: env.attempts,
      logger: watchLogs.logger,
      send: { rebroadcastIntervalMs: 600_000, pollIntervalMs: 50 },
      intentKey: intent.key,
    });
    expect(sends).not.toHaveBeenCalled();
    expect(outcome).toMatchObject({
      outcome: "confirmed",
      signature: sent.signature,
      attempt: 1,
      resumed: true,
    });
    if (outcome.outcome !== "confirmed") return;
    expect(watchLogs.lines()).toContainEqual(
      expect.objectContaining({
        msg: "resuming a recorded transaction",
        intentKey: intent.key,
        signature: sent.signature,
        attempt: 1,
      }),
    );
    // At debug: the keeper's sign or confirm job says it at info, with the intent, once a claim.
    expect(watchLogs.lines()).toContainEqual(
      expect.objectContaining({
        level: "debug",
        msg: "transaction confirmed",
        signature: sent.signature,
        slot: outcome.slot,
      }),
    );
    expect(await env.attempts.get(intent.key)).toMatchObject({ status: "confirmed", slot: outcome.slot });
  });

  it("a far-off lastValidBlockHeight is recorded capped at the height read + 151, and the cap is logged", async () => {
    const intent = env.claimIntent();
    const logs = captureLogger();
    const built = await claim();
    const farOff = built.lastValidBlockHeight + 50_000;
    const sent = await signAndSend(input(intent, { ...built, lastValidBlockHeight: farOff }, logs.logger));
    expect(sent.outcome).toBe("sent");
    const cap = logs
      .lines()
      .find(
        (l) =>
          l.msg ===
          "lastValidBlockHeight is beyond any blockhash's lifetime; waiting only up to the capped height",
      );
    expect(cap).toMatchObject({ level: "warn", lastValidBlockHeight: farOff });
    expect(cap?.capped).toBe((cap?.blockHeight as number) + 151);
    expect((await env.attempts.get(intent.key))?.lastValidBlockHeight).toBe(cap?.capped);
    // Let it land, so that later tests find the wallet's balances as they were plus the payout.
    const watchLogs = captureLogger();
    const watched = await watchAttempt({
      ...input(intent, built, watchLogs.logger),
      intentKey: intent.key,
      resumed: false,
    });
    expect(watched).toMatchObject({ outcome: "confirmed", resumed: false });
    // What this run itself sent: its caller said so already; at debug here.
    expect(watchLogs.lines()).toContainEqual(
      expect.objectContaining({ level: "debug", msg: "watching a recorded transaction", attempt: 1 }),
    );
    // The record holds the capped height already: capping it again changes nothing and says nothing.
    expect(messages(watchLogs.lines()).filter((m) => String(m).startsWith("lastValidBlockHeight"))).toEqual(
      [],
    );
  });

  it("an expired attempt is recorded and logged as such", async () => {
    env.chain.dropFirstSends(1_000_000);
    const intent = env.claimIntent();
    const built = await claim();
    const sent = await signAndSend(input(intent, built));
    expect(sent.outcome).toBe("sent");
    env.chain.advanceSlots(built.lastValidBlockHeight - env.chain.blockHeight + 2);
    const logs = captureLogger();
    const outcome = await watchAttempt({ ...input(intent, built, logs.logger), intentKey: intent.key });
    expect(outcome).toMatchObject({ outcome: "expired", attempt: 1, resumed: true });
    expect(logs.lines()).toContainEqual(
      expect.objectContaining({ level: "info", msg: "transaction expired unseen", attempt: 1 }),
    );
    expect(await env.attempts.get(intent.key)).toMatchObject({ status: "expired", attempt: 1 });
  });
});

describe("a transaction that fails on chain", () => {
  it("is recorded failed with the chain's error, and logged as a warning", async () => {
    // The chain holds the send until the vault is emptied, then lands it: the transfer fails.
    env.chain.faults.landDelayMs = 600_000;
    const intent = env.claimIntent();
    const vault = env.chain.getAccount(env.vaultUsdc);
    if (!vault) throw new Error("the sandbox's vault has no USDC account");
    const sent = await signAndSend(input(intent, await claim()));
    expect(sent.outcome).toBe("sent");
    expect(env.chain.heldSends).toBe(1);
    const emptied = Buffer.from(vault.data);
    emptied.writeBigUInt64LE(0n, 64); // amount
    env.chain.setAccount({
      address: env.vaultUsdc,
      lamports: vault.lamports,
      owner: vault.owner,
      data: emptied,
    });
    env.chain.landHeldSends();
    const logs = captureLogger();
    try {
      const outcome = await watchAttempt({
        ...input(intent, await claim(), logs.logger),
        intentKey: intent.key,
      });
      const error = "instruction 0: custom program error 0x1";
      expect(outcome).toMatchObject({ outcome: "failed", error, attempt: 1 });
      expect(await env.attempts.get(intent.key)).toMatchObject({ status: "failed", error });
      expect(logs.lines()).toContainEqual(
        expect.objectContaining({
          level: "warn",
          msg: "transaction failed on chain",
          signature: outcome.outcome === "failed" ? outcome.signature : "",
          error: expect.objectContaining({ message: error }),
        }),
      );
    } finally {
      env.chain.setAccount({
        address: env.vaultUsdc,
        lamports: vault.lamports,
        owner: vault.owner,
        data: vault.data,
      });
      // A claim built in this same slot would be these very bytes, whose signature already failed.
      env.chain.advanceSlots(1);
    }
  });
});

describe("refusals", () => {
  it("bytes that are not a transaction, after an expired attempt: refused at the next attempt", async () => {
    const intent = env.claimIntent();
    await otherRunsAttempt(intent, "expired");
    const outcome = await signAndSend({
      ...input(intent, await claim()),
      transactionBase64: Buffer.from("not a transaction").toString("base64"),
    });
    expect(outcome).toMatchObject({
      outcome: "refused",
      reason: "decode_failed",
      attempt: 2,
      resumed: false,
    });
  });

  it("a refusal is recorded, answered with its reason and detail, and logged for the operator", async () => {
    const intent = env.claimIntent();
    const logs = captureLogger();
    const sends = vi.spyOn(env.connection, "sendRawTransaction");
    const outcome = await signAndSend(input(intent, await foreignPayer(), logs.logger));
    const detail = `fee payer ${env.stranger.publicKey.toBase58()} is not the intent's wallet ${intent.wallet}`;
    expect(outcome).toStrictEqual({
      outcome: "refused",
      reason: "fee_payer",
      detail,
      attempt: 1,
      resumed: false,
    });
    expect(await env.attempts.get(intent.key)).toMatchObject({
      status: "refused",
      attempt: 1,
      reason: "fee_payer",
      error: detail,
    });
    expect(logs.lines()).toContainEqual(
      expect.objectContaining({
        level: "warn",
        msg: "transaction refused by policy",
        reason: "fee_payer",
        detail,
        attempt: 1,
      }),
    );
    expect(sends).not.toHaveBeenCalled();
  });

  it("a signer that answers an empty signature: refused (a signature still missing), nothing sent", async () => {
    const intent = env.claimIntent();
    const broken: Signer = { has: (w) => env.wallets.has(w), sign: async () => new Uint8Array(64) };
    const sends = vi.spyOn(env.connection, "sendRawTransaction");
    const outcome = await signAndSend({ ...input(intent, await claim()), wallets: broken });
    expect(outcome).toStrictEqual({
      outcome: "refused",
      reason: "foreign_signer",
      detail: "a signature is still missing after signing",
      attempt: 1,
      resumed: false,
    });
    expect(await env.attempts.get(intent.key)).toMatchObject({ status: "refused", reason: "foreign_signer" });
    expect(sends).not.toHaveBeenCalled();
  });

  it("a stalled run refused after another run's attempt finished answers that attempt's outcome", async () => {
    const intent = env.claimIntent();
    const signature = await otherRunsAttempt(intent, "confirmed");
    const logs = captureLogger();
    const outcome = await signAndSend({
      ...input(intent, await foreignPayer(), logs.logger),
      attempts: stalledStore(),
    });
    expect(outcome).toStrictEqual({ outcome: "confirmed", signature, slot: 31, attempt: 1, resumed: true });
    expect(logs.lines()).toContainEqual(
      expect.objectContaining({ msg: "another run recorded this intent first", attempt: 1, recorded: 1 }),
    );
    expect(await env.attempts.get(intent.key)).toMatchObject({ status: "confirmed", signature });
  });

  it("a refusal whose competing record is cleared (`keeper retry`) before it is read: refused", async () => {
    const intent = env.claimIntent();
    await otherRunsAttempt(intent, "expired");
    const store = stalledStore({
      recordRefused: async (key, attempt, reason, detail) => {
        const recorded = await env.attempts.recordRefused(key, attempt, reason, detail);
        await env.attempts.clearFinished(key); // a person's retry lands between the two calls
        return recorded;
      },
    });
    const outcome = await signAndSend({ ...input(intent, await foreignPayer()), attempts: store });
    expect(outcome).toMatchObject({ outcome: "refused", reason: "fee_payer", attempt: 1, resumed: false });
  });
});

describe("a stale transaction", () => {
  it("after an earlier attempt of this run's own: expired at the next attempt, the record left alone", async () => {
    const intent = env.claimIntent();
    const signature = await otherRunsAttempt(intent, "expired");
    const logs = captureLogger();
    const send = vi.spyOn(env.connection, "sendRawTransaction");
    const outcome = await signAndSend(input(intent, await staleMemo(), logs.logger));
    expect(outcome).toStrictEqual({ outcome: "expired", attempt: 2, resumed: false });
    expect(send).not.toHaveBeenCalled();
    expect(await env.attempts.get(intent.key)).toMatchObject({ status: "expired", attempt: 1, signature });
    expect(logs.lines()).toContainEqual(
      expect.objectContaining({
        msg: "transaction stale before signing; asking for a fresh one",
        attempt: 2,
        detail: expect.any(String),
      }),
    );
  });

  it.each([
    [
      "past its blockhash",
      claim,
      (built: { lastValidBlockHeight: number }) =>
        env.chain.advanceSlots(built.lastValidBlockHeight - env.chain.blockHeight + 2),
      "a stale transaction of this intent is on chain, unrecorded",
    ],
    [
      "within its blockhash, where it no longer simulates",
      drainingClaim,
      () => undefined,
      "a refused transaction of this intent is on chain, unrecorded",
    ],
  ] as const)(
    "landed, its attempt record lost, run again %s: confirmed from the chain, paid once",
    async (_when, build, meanwhile, warning) => {
      const usdcBefore = env.chain.tokenAccount(env.walletUsdc)?.amount ?? 0n;
      const build1 = await build();
      const { intent, landed } = await landedThenLost(build1);
      meanwhile(build1);

      const logs = captureLogger();
      const send = vi.spyOn(env.connection, "sendRawTransaction");
      await expectConfirmedFromChain(await signAndSend(input(intent, build1, logs.logger)), intent, landed);
      expect(send).not.toHaveBeenCalled();
      expect(logs.lines()).toContainEqual(
        expect.objectContaining({ level: "warn", msg: warning, signature: landed.signature }),
      );
      // A rebuild of the intent finds it done: nothing more is signed or sent, the wallet paid once.
      expect(await signAndSend(input(intent, await claim()))).toMatchObject({
        outcome: "confirmed",
        attempt: 1,
      });
      expect(send).not.toHaveBeenCalled();
      expect(env.chain.tokenAccount(env.walletUsdc)?.amount).toBe(usdcBefore + PAYOUT);
    },
  );

  it("refused and never sent: the chain knows none, refused and recorded", async () => {
    const intent = env.claimIntent();
    const usdcBefore = env.chain.tokenAccount(env.walletUsdc)?.amount;
    const send = vi.spyOn(env.connection, "sendRawTransaction");
    const looked = vi.spyOn(env.connection, "getSignaturesForAddress");
    const sign = vi.spyOn(env.wallets, "sign");
    const outcome = await signAndSend(input(intent, await drainingClaim(PAYOUT - 1n)));
    expect(outcome).toMatchObject({
      outcome: "refused",
      reason: "simulation_failed",
      attempt: 1,
      resumed: false,
    });
    expect(send).not.toHaveBeenCalled();
    // Looked for among the wallet's transactions; refused bytes are never signed, not even to look.
    expect(looked).toHaveBeenCalledTimes(1);
    expect(sign).not.toHaveBeenCalled();
    expect(env.chain.tokenAccount(env.walletUsdc)?.amount).toBe(usdcBefore);
    expect(await env.attempts.get(intent.key)).toMatchObject({ status: "refused", attempt: 1 });
  });

  it("refused, and the chain cannot be asked whether it landed: the refusal stands, with a warning", async () => {
    const intent = env.claimIntent();
    const logs = captureLogger();
    env.chain.faults.methodErrors = { getSignaturesForAddress: { rate: 1 } };
    const outcome = await signAndSend(input(intent, await drainingClaim(PAYOUT - 1n), logs.logger));
    expect(outcome).toMatchObject({ outcome: "refused", reason: "simulation_failed", attempt: 1 });
    expect(await env.attempts.get(intent.key)).toMatchObject({ status: "refused", attempt: 1 });
    expect(logs.lines()).toContainEqual(
      expect.objectContaining({
        level: "warn",
        msg: "could not ask the chain whether refused bytes landed",
      }),
    );
  });

  it("never sent, run again past its blockhash: the chain knows none, expired", async () => {
    const intent = env.claimIntent();
    const usdcBefore = env.chain.tokenAccount(env.walletUsdc)?.amount;
    const built = await claim();
    env.chain.advanceSlots(built.lastValidBlockHeight - env.chain.blockHeight + 2);
    const send = vi.spyOn(env.connection, "sendRawTransaction");
    const outcome = await signAndSend(input(intent, built));
    expect(outcome).toStrictEqual({ outcome: "expired", attempt: 1, resumed: false });
    expect(send).not.toHaveBeenCalled();
    expect(await env.attempts.get(intent.key)).toBeUndefined();
    expect(env.chain.tokenAccount(env.walletUsdc)?.amount).toBe(usdcBefore);
  });

  it("the chain cannot be asked: the RPC error is thrown (the job retries), never read as expired", async () => {
    const intent = env.claimIntent();
    const built = await claim();
    env.chain.advanceSlots(built.lastValidBlockHeight - env.chain.blockHeight + 2);
    env.chain.faults.methodErrors = { getSignatureStatuses: { rate: 1 } };
    await expect(signAndSend(input(intent, built))).rejects.toBeInstanceOf(TransientError);
    expect(await env.attempts.get(intent.key)).toBeUndefined();
  });

  it.each([
    ["in flight", "sent", (signature: string) => ({ outcome: "sent", signature, attempt: 1, resumed: true })],
    [
      "expired",
      "expired",
      (signature: string) => ({ outcome: "expired", signature, attempt: 1, resumed: true }),
    ],
  ] as const)(
    "in a stalled run, after another run recorded the same attempt (%s): follows that attempt",
    async (_name, status, expected) => {
      const intent = env.claimIntent();
      const signature = await otherRunsAttempt(intent, status);
      const logs = captureLogger();
      const outcome = await signAndSend({
        ...input(intent, await staleMemo(), logs.logger),
        attempts: stalledStore(),
      });
      expect(outcome).toStrictEqual(expected(signature));
      expect(logs.lines()).toContainEqual(
        expect.objectContaining({
          level: "warn",
          msg: "another run recorded this intent first",
          attempt: 1,
          recorded: 1,
        }),
      );
    },
  );
});

describe("two runs signing the same attempt", () => {
  it("the run that loses the record follows the winner's attempt and sends nothing", async () => {
    const intent = env.claimIntent();
    const signature = await otherRunsAttempt(intent, "sent");
    const logs = captureLogger();
    const sends = vi.spyOn(env.connection, "sendRawTransaction");
    const outcome = await signAndSend({
      ...input(intent, await claim(), logs.logger),
      attempts: stalledStore(),
    });
    expect(outcome).toStrictEqual({ outcome: "sent", signature, attempt: 1, resumed: true });
    expect(sends).not.toHaveBeenCalled();
    expect(logs.lines()).toContainEqual(
      expect.objectContaining({
        level: "warn",
        msg: "another run recorded this attempt first",
        attempt: 1,
        recorded: 1,
      }),
    );
    expect((await env.attempts.get(intent.key))?.signature).toBe(signature);
  });

  it("a winner already finished: its outcome", async () => {
    const intent = env.claimIntent();
    const signature = await otherRunsAttempt(intent, "confirmed");
    const outcome = await signAndSend({ ...input(intent, await claim()), attempts: stalledStore() });
    expect(outcome).toStrictEqual({ outcome: "confirmed", signature, slot: 31, attempt: 1, resumed: true });
  });

  it("a record cleared by `keeper retry` in between: an error, nothing sent", async () => {
    const intent = env.claimIntent();
    await env.attempts.recordRefused(intent.key, 1, "outflow_sol", "x");
    const sends = vi.spyOn(env.connection, "sendRawTransaction");
    const store = stalledStore({
      recordSigned: async (key, signed) => {
        const claimed = await env.attempts.recordSigned(key, signed);
        await env.attempts.clearFinished(key); // a person's retry lands between the two calls
        return claimed;
      },
    });
    await expect(signAndSend({ ...input(intent, await claim()), attempts: store })).rejects.toThrow(
      `attempt record of ${intent.key} vanished`,
    );
    expect(sends).not.toHaveBeenCalled();
  });
});
