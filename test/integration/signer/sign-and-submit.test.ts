import { NATIVE_MINT } from "@solana/spl-token";
import {
  Connection,
  Keypair,
  LAMPORTS_PER_SOL,
  PublicKey,
  SystemProgram,
  TransactionMessage,
  VersionedTransaction,
} from "@solana/web3.js";
import bs58 from "bs58";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { ValidationError } from "../../../src/api/errors.js";
import { type BuildFigures, expectedInflow } from "../../../src/chain/inflow-rules.js";
import type { Intent } from "../../../src/core/intent.js";
import { type RunningLocalChain, startLocalChain } from "../../../src/sandbox/chain/index.js";
import { orderAddress } from "../../../src/sandbox/world/order-address.js";
import type { AttemptStore } from "../../../src/signer/attempt-store.js";
import { Wallets } from "../../../src/signer/keys.js";
import { type SignAndSubmitInput, signAndSubmit } from "../../../src/signer/sign-transaction.js";
import { type SignerEnv, startSignerEnv } from "./env.js";
import { captureLogger } from "./helpers.js";
import { toBase64 } from "./tx-builders.js";

const PAYOUT = 7_500_000n;
let env: SignerEnv;
const logs = captureLogger("debug");

// Slots of 100 ms: a blockhash lives 15 s, so a busy machine's slowness never expires one by itself.
// The tests about expiry bring it on with fastForward, not by waiting.
beforeAll(async () => {
  env = await startSignerEnv("submit", { slotMs: 100 });
});

/** Moves the chain on quickly (ten slots every 20 ms) until the returned stop is called. */
function fastForward(): () => void {
  const timer = setInterval(() => env.chain.advanceSlots(10), 20);
  return () => clearInterval(timer);
}
/**
 * Every send moves the chain `blocks` on: expiry comes with the sends, whatever the machine's speed.
 * After 30 sends `giveUp` aborts (a run that keeps rebroadcasting would otherwise never end).
 */
function sendsMoveTheChain(blocks: number) {
  const send = env.connection.sendRawTransaction.bind(env.connection);
  const controller = new AbortController();
  const spy = vi.spyOn(env.connection, "sendRawTransaction").mockImplementation(async (...args) => {
    if (spy.mock.calls.length > 30) controller.abort(new Error("more than 30 sends"));
    env.chain.advanceSlots(blocks);
    return send(...args);
  });
  return Object.assign(spy, { giveUp: controller.signal });
}
afterEach(() => {
  env.chain.faults.reset();
  vi.restoreAllMocks();
});
afterAll(async () => {
  // Everything the signer logged during the suite: no form of any secret key may appear.
  expect(logs.capture.leaked(env.secretForms)).toEqual([]);
  expect(logs.lines().length).toBeGreaterThan(0);
  await env?.close();
});

/** A claim as the service builds it, with its lastValidBlockHeight. */
async function buildClaim(): Promise<{ tx: VersionedTransaction; lastValidBlockHeight: number }> {
  const bh = await env.connection.getLatestBlockhash("confirmed");
  return { tx: env.claimTransaction(PAYOUT, bh.blockhash), lastValidBlockHeight: bh.lastValidBlockHeight };
}

function input(
  intent: Intent,
  claim: { tx: VersionedTransaction; lastValidBlockHeight: number },
): SignAndSubmitInput {
  return {
    intent,
    transactionBase64: toBase64(claim.tx),
    lastValidBlockHeight: claim.lastValidBlockHeight,
    wallets: env.wallets,
    connection: env.connection,
    policyConfig: env.policy,
    attempts: env.attempts,
    logger: logs.logger,
    send: { rebroadcastIntervalMs: 150, pollIntervalMs: 50 },
  };
}

const usdcOf = () => env.chain.tokenAccount(env.walletUsdc)?.amount ?? 0n;

describe("signAndSubmit on the local chain", () => {
  it("checks, signs, sends and confirms a claim; the payout arrives and the vault's signature is kept", async () => {
    const before = usdcOf();
    const claim = await buildClaim();
    const vaultSignature = bs58.encode(claim.tx.signatures[1] as Uint8Array);
    const intent = env.claimIntent();
    const outcome = await signAndSubmit(input(intent, claim));
    expect(outcome).toMatchObject({ outcome: "confirmed", attempt: 1, resumed: false });
    if (outcome.outcome !== "confirmed") return;
    expect(usdcOf()).toBe(before + PAYOUT);
    const landed = env.chain.transaction(outcome.signature);
    expect(landed?.err).toBeNull();
    expect(landed?.transaction.signatures.map((s) => bs58.encode(s))).toEqual([
      outcome.signature,
      vaultSignature,
    ]);
    expect(await env.attempts.get(intent.key)).toMatchObject({
      status: "confirmed",
      signature: outcome.signature,
      slot: outcome.slot,
      lastValidBlockHeight: claim.lastValidBlockHeight,
    });
    logs.logger.info({ confirmationMs: outcome.confirmationMs }, "measured: send to confirmed");
    if (process.env.SIGNER_MEASURE) process.stdout.write(`confirmationMs=${outcome.confirmationMs}\n`);
  });

  it("lands a transaction whose first two sends the chain drops, by rebroadcasting the same bytes", async () => {
    env.chain.dropFirstSends(2);
    const before = usdcOf();
    const sends = vi.spyOn(env.connection, "sendRawTransaction");
    const outcome = await signAndSubmit(input(env.claimIntent(), await buildClaim()));
    expect(outcome.outcome).toBe("confirmed");
    expect(sends.mock.calls.length).toBeGreaterThanOrEqual(3);
    // Every send carried the very same bytes.
    expect(
      new Set(sends.mock.calls.map(([bytes]) => Buffer.from(bytes as Uint8Array).toString("base64"))).size,
    ).toBe(1);
    expect(usdcOf()).toBe(before + PAYOUT);
  });

  it("reports expired only after lastValidBlockHeight, then a rebuilt transaction lands once", async () => {
    env.chain.dropFirstSends(1_000_000);
    const before = usdcOf();
    const intent = env.claimIntent();
    const first = await buildClaim();
    const stop = fastForward();
    const expired = await signAndSubmit(input(intent, first)).finally(stop);
    expect(expired).toMatchObject({ outcome: "expired", attempt: 1 });
    expect(env.chain.blockHeight).toBeGreaterThan(first.lastValidBlockHeight);
    expect(await env.attempts.get(intent.key)).toMatchObject({ status: "expired", attempt: 1 });

    env.chain.faults.reset();
    const rebuilt = await signAndSubmit(input(intent, await buildClaim()));
    expect(rebuilt).toMatchObject({ outcome: "confirmed", attempt: 2, resumed: false });
    // The expired bytes can never land now (their blockhash is gone); a send proves it.
    await env.connection
      .sendRawTransaction(first.tx.serialize(), { skipPreflight: true })
      .catch(() => undefined);
    expect(
      expired.outcome === "expired" && expired.signature && env.chain.transaction(expired.signature),
    ).toBeFalsy();
    expect(usdcOf()).toBe(before + PAYOUT);
  });

  // Issue 11: a lastValidBlockHeight from the service is not believed beyond what a blockhash can live.
  // Every send is dropped and moves the chain 40 blocks on: the blockhash's real life (150 blocks)
  // ends after four sends.
  it("a far-off lastValidBlockHeight from the service: expired soon after the real blockhash's lifetime, rebuilt once", async () => {
    env.chain.dropFirstSends(1_000_000);
    const before = usdcOf();
    const intent = env.claimIntent();
    const claim = await buildClaim();
    const farOff = { ...claim, lastValidBlockHeight: claim.lastValidBlockHeight + 100_000 };
    const sends = sendsMoveTheChain(40);
    const expired = await signAndSubmit({ ...input(intent, farOff), signal: sends.giveUp }).catch(
      (error: unknown) => ({ outcome: `still waiting after ${sends.mock.calls.length} sends: ${error}` }),
    );
    expect(expired).toMatchObject({ outcome: "expired", attempt: 1 });
    expect(sends.mock.calls.length).toBeLessThanOrEqual(8);
    expect(env.chain.blockHeight).toBeGreaterThan(claim.lastValidBlockHeight);
    // The record holds the capped height, never the service's far-off one.
    const record = await env.attempts.get(intent.key);
    expect(record).toMatchObject({ status: "expired", attempt: 1 });
    expect(record?.lastValidBlockHeight).toBeLessThanOrEqual(claim.lastValidBlockHeight + 200);

    env.chain.faults.reset();
    vi.restoreAllMocks();
    const rebuilt = await signAndSubmit(input(intent, await buildClaim()));
    expect(rebuilt).toMatchObject({ outcome: "confirmed", attempt: 2, resumed: false });
    expect(usdcOf()).toBe(before + PAYOUT);
  });

  it("past lastValidBlockHeight a blockhash the node still accepts keeps the transaction alive: it lands", async () => {
    env.chain.dropFirstSends(3);
    const before = usdcOf();
    const claim = await buildClaim();
    // A service height too low (its node behind ours): passed after the first send, the blockhash lives on.
    const tooLow = { ...claim, lastValidBlockHeight: claim.lastValidBlockHeight - 140 };
    const sends = sendsMoveTheChain(20);
    const outcome = await signAndSubmit({ ...input(env.claimIntent(), tooLow), signal: sends.giveUp });
    expect(outcome).toMatchObject({ outcome: "confirmed", attempt: 1 });
    expect(sends.mock.calls.length).toBeGreaterThanOrEqual(4);
    expect(env.chain.blockHeight).toBeGreaterThan(tooLow.lastValidBlockHeight);
    expect(usdcOf()).toBe(before + PAYOUT);
  });

  it("a resumed run whose record holds a far-off lastValidBlockHeight expires the same way", async () => {
    env.chain.dropFirstSends(1_000_000);
    const before = usdcOf();
    const intent = env.claimIntent();
    const claim = await buildClaim();
    // A run (of a version that trusted the service's height) signed and recorded, then the process died.
    const signed = VersionedTransaction.deserialize(claim.tx.serialize());
    signed.addSignature(env.wallet, env.wallets.sign(env.wallet, signed.message.serialize()));
    const signature = bs58.encode(signed.signatures[0] as Uint8Array);
    await env.attempts.recordSigned(intent.key, {
      attempt: 1,
      signature,
      lastValidBlockHeight: claim.lastValidBlockHeight + 100_000,
      recentBlockhash: signed.message.recentBlockhash,
      signedTransaction: Buffer.from(signed.serialize()).toString("base64"),
    });

    const sends = sendsMoveTheChain(40);
    const resumed = await signAndSubmit({ ...input(intent, claim), signal: sends.giveUp }).catch(
      (error: unknown) => ({ outcome: `still waiting after ${sends.mock.calls.length} sends: ${error}` }),
    );
    expect(resumed).toMatchObject({ outcome: "expired", attempt: 1, resumed: true, signature });
    expect(sends.mock.calls.length).toBeLessThanOrEqual(8);
    expect(env.chain.blockHeight).toBeGreaterThan(claim.lastValidBlockHeight);

    env.chain.faults.reset();
    vi.restoreAllMocks();
    const rebuilt = await signAndSubmit(input(intent, await buildClaim()));
    expect(rebuilt).toMatchObject({ outcome: "confirmed", attempt: 2, resumed: false });
    expect(usdcOf()).toBe(before + PAYOUT);
  });

  it("does not rebuild a transaction that lands late: a re-run resumes it, payout once", async () => {
    // The chain holds the send until the test lands it: no timer races a busy machine.
    env.chain.faults.landDelayMs = 600_000;
    const before = usdcOf();
    const intent = env.claimIntent();
    // The first run gives up (as a job would after its first wait) once its send is on record.
    const giveUp = new AbortController();
    const recordSigned = env.attempts.recordSigned.bind(env.attempts);
    vi.spyOn(env.attempts, "recordSigned").mockImplementation(async (key, signed) => {
      const ok = await recordSigned(key, signed);
      setTimeout(() => giveUp.abort(new Error("first wait over")), 10).unref();
      return ok;
    });
    await expect(
      signAndSubmit({ ...input(intent, await buildClaim()), signal: giveUp.signal }),
    ).rejects.toThrow();
    vi.restoreAllMocks();
    expect(usdcOf()).toBe(before);
    const recorded = await env.attempts.get(intent.key);
    expect(recorded).toMatchObject({ status: "sent", attempt: 1 });
    expect(env.chain.heldSends).toBe(1);
    env.chain.landHeldSends(); // it lands after the first run gave up

    // The caller comes back with a freshly built transaction; the signer must not sign it.
    const sign = vi.spyOn(env.wallets, "sign");
    const second = await signAndSubmit(input(intent, await buildClaim()));
    expect(second).toMatchObject({
      outcome: "confirmed",
      attempt: 1,
      resumed: true,
      signature: recorded?.signature,
    });
    expect(sign).not.toHaveBeenCalled();
    expect(usdcOf()).toBe(before + PAYOUT);
  });

  it("after a crash between recording and confirming, a re-run resumes the recorded signature", async () => {
    // Every send dropped until the "restart": the transaction cannot land while the first run lives.
    env.chain.dropFirstSends(1_000_000);
    const before = usdcOf();
    const intent = env.claimIntent();
    const crash = new AbortController();
    // "Crash" right after the signature is on record and the first (dropped) send went out.
    const recordSigned = env.attempts.recordSigned.bind(env.attempts);
    vi.spyOn(env.attempts, "recordSigned").mockImplementation(async (key, signed) => {
      const ok = await recordSigned(key, signed);
      setTimeout(() => crash.abort(new Error("process died")), 10).unref();
      return ok;
    });
    await expect(
      signAndSubmit({ ...input(intent, await buildClaim()), signal: crash.signal }),
    ).rejects.toThrow();
    vi.restoreAllMocks();
    const recorded = await env.attempts.get(intent.key);
    expect(recorded?.status).toBe("sent");
    expect(usdcOf()).toBe(before);
    env.chain.dropFirstSends(0);

    const sign = vi.spyOn(env.wallets, "sign");
    const resumed = await signAndSubmit(input(intent, await buildClaim()));
    expect(resumed).toMatchObject({
      outcome: "confirmed",
      resumed: true,
      attempt: 1,
      signature: recorded?.signature,
    });
    expect(sign).not.toHaveBeenCalled();
    expect(usdcOf()).toBe(before + PAYOUT);
  });

  it("hands the first send to an execute endpoint when given one, and tracks the signature itself", async () => {
    const before = usdcOf();
    const submitted: string[] = [];
    const submit = async (signedBase64: string) => {
      submitted.push(signedBase64);
      const signature = await env.connection.sendRawTransaction(Buffer.from(signedBase64, "base64"), {
        skipPreflight: true,
      });
      return { signature };
    };
    const outcome = await signAndSubmit({ ...input(env.claimIntent(), await buildClaim()), submit });
    expect(outcome.outcome).toBe("confirmed");
    expect(submitted).toHaveLength(1);
    expect(usdcOf()).toBe(before + PAYOUT);
  });

  it("an execute answer outside its schema is logged as an error naming the field, and the chain still decides", async () => {
    const before = usdcOf();
    const submit = async (signedBase64: string) => {
      await env.connection.sendRawTransaction(Buffer.from(signedBase64, "base64"), { skipPreflight: true });
      throw new ValidationError("executeTrigger", "response", [
        { field: "status", rule: "must be one of Success, Failed" },
      ]);
    };
    const seen = logs.lines().length;
    const outcome = await signAndSubmit({ ...input(env.claimIntent(), await buildClaim()), submit });
    expect(outcome.outcome).toBe("confirmed");
    expect(usdcOf()).toBe(before + PAYOUT);
    const errors = logs
      .lines()
      .slice(seen)
      .filter((line) => line.level === 50 || line.level === "error");
    expect(errors).toHaveLength(1);
    expect(JSON.stringify(errors[0])).toContain(
      "executeTrigger: response status: must be one of Success, Failed",
    );
  });

  it("returns the recorded outcome for a confirmed intent without signing again", async () => {
    const intent = env.claimIntent();
    const first = await signAndSubmit(input(intent, await buildClaim()));
    expect(first.outcome).toBe("confirmed");
    const before = usdcOf();
    const sign = vi.spyOn(env.wallets, "sign");
    const again = await signAndSubmit(input(intent, await buildClaim()));
    expect(again).toMatchObject({ outcome: "confirmed", resumed: true });
    expect(sign).not.toHaveBeenCalled();
    expect(usdcOf()).toBe(before);
  });

  it("reports a transaction that fails on chain as failed, with the decoded error", async () => {
    // Passes the simulation, then the vault is emptied before it lands: the transfer fails on chain.
    // The chain holds the send until the vault is emptied, then lands it.
    env.chain.faults.landDelayMs = 600_000;
    const intent = env.claimIntent();
    const claim = await buildClaim();
    const vaultState = env.chain.getAccount(env.vaultUsdc);
    if (!vaultState) throw new Error("the sandbox's vault has no USDC account");
    const run = signAndSubmit(input(intent, claim));
    for (let i = 0; i < 600 && env.chain.heldSends === 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(env.chain.heldSends).toBe(1);
    const data = Buffer.from(vaultState.data);
    data.writeBigUInt64LE(0n, 64); // amount
    env.chain.setAccount({
      address: env.vaultUsdc,
      lamports: vaultState.lamports,
      owner: vaultState.owner,
      data,
    });
    env.chain.landHeldSends();
    const outcome = await run;
    expect(outcome).toMatchObject({ outcome: "failed", attempt: 1 });
    if (outcome.outcome === "failed")
      expect(outcome.error).toMatch(/^instruction 0: custom program error 0x1$/);
    expect(await env.attempts.get(intent.key)).toMatchObject({ status: "failed" });
    env.chain.setAccount({
      address: env.vaultUsdc,
      lamports: vaultState.lamports,
      owner: vaultState.owner,
      data: vaultState.data,
    });
    // A claim built in this same slot would be these very bytes, whose signature already failed.
    env.chain.advanceSlots(1);
  });

  it("signs no fourth transaction for an intent after three expired ones: failed, not refused", async () => {
    env.chain.dropFirstSends(1_000_000);
    const intent = env.claimIntent();
    for (let attempt = 1; attempt <= 3; attempt++) {
      const claim = await buildClaim();
      const stop = fastForward();
      const expired = await signAndSubmit({
        ...input(intent, claim),
        send: { rebroadcastIntervalMs: 500, pollIntervalMs: 100 },
      }).finally(stop);
      expect(expired).toMatchObject({ outcome: "expired", attempt });
    }
    const sign = vi.spyOn(env.wallets, "sign");
    const exhausted = await signAndSubmit(input(intent, await buildClaim()));
    // Nothing is wrong with the transaction: the intent ran out of tries, which the ledger bounds again.
    expect(exhausted).toMatchObject({ outcome: "failed", error: "3 transactions tried, at most 3" });
    expect(exhausted).not.toHaveProperty("signature");
    expect(sign).not.toHaveBeenCalled();
  }, 60_000);
});

describe("attempt records under concurrent runs of one intent", () => {
  const signedAttempt = (attempt: number, signature: string) => ({
    attempt,
    signature,
    lastValidBlockHeight: 1_000 + attempt,
    recentBlockhash: `hash${attempt}`,
    signedTransaction: `dHg${attempt}`,
  });

  it("a refusal never overwrites an attempt in flight or confirmed, nor another run's finished one", async () => {
    const key = `claim-${Keypair.generate().publicKey.toBase58()}`;
    expect(await env.attempts.recordSigned(key, signedAttempt(1, "winner"))).toBe(true);
    expect(await env.attempts.recordRefused(key, 1, "blockhash_expired", "late")).toBe(false);
    expect(await env.attempts.recordRefused(key, 2, "blockhash_expired", "late")).toBe(false);
    expect(await env.attempts.get(key)).toMatchObject({
      status: "sent",
      attempt: 1,
      signature: "winner",
      signedTransaction: "dHg1",
    });
    await env.attempts.finish(key, "winner", { status: "confirmed", slot: 9 });
    expect(await env.attempts.recordRefused(key, 2, "blockhash_expired", "late")).toBe(false);
    expect(await env.attempts.get(key)).toMatchObject({ status: "confirmed", signature: "winner", slot: 9 });

    const other = `claim-${Keypair.generate().publicKey.toBase58()}`;
    await env.attempts.recordSigned(other, signedAttempt(1, "first"));
    await env.attempts.finish(other, "first", { status: "expired" });
    // A stalled run that also thought it was attempt 1: the finished attempt 1 is the real one.
    expect(await env.attempts.recordRefused(other, 1, "blockhash_expired", "late")).toBe(false);
    expect(await env.attempts.get(other)).toMatchObject({ status: "expired", signature: "first" });
    // The next attempt's refusal is recorded (and again, over itself).
    expect(await env.attempts.recordRefused(other, 2, "outflow_sol", "x")).toBe(true);
    expect(await env.attempts.recordRefused(other, 2, "outflow_sol", "y")).toBe(true);
    const refused = await env.attempts.get(other);
    expect(refused).toMatchObject({ status: "refused", attempt: 2, reason: "outflow_sol", error: "y" });
    expect(refused?.signature).toBeUndefined();
  });

  it("a stalled run refused after the winner recorded its send leaves the record alone and follows it", async () => {
    env.chain.faults.landDelayMs = 600;
    const before = usdcOf();
    const intent = env.claimIntent();
    const winner = signAndSubmit(input(intent, await buildClaim()));
    let recorded = await env.attempts.get(intent.key);
    for (let i = 0; i < 600 && recorded?.status !== "sent"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      recorded = await env.attempts.get(intent.key);
    }
    expect(recorded?.status).toBe("sent");

    // The stalled run read the record before the winner wrote it, and got a transaction the policy
    // refuses (a claim that also pays a stranger).
    let stale = true;
    const stalledStore: AttemptStore = {
      get: async (key) => {
        if (stale) {
          stale = false;
          return undefined;
        }
        return env.attempts.get(key);
      },
      recordSigned: (key, signed) => env.attempts.recordSigned(key, signed),
      recordRefused: (key, attempt, reason, detail) =>
        env.attempts.recordRefused(key, attempt, reason, detail),
      finish: (key, signature, finish) => env.attempts.finish(key, signature, finish),
    };
    const bh = await env.connection.getLatestBlockhash("confirmed");
    const hostile = env.claimTransaction(PAYOUT, bh.blockhash);
    const withTheft = new VersionedTransaction(
      new TransactionMessage({
        payerKey: env.wallet,
        recentBlockhash: bh.blockhash,
        instructions: [
          ...TransactionMessage.decompile(hostile.message).instructions,
          SystemProgram.transfer({ fromPubkey: env.wallet, toPubkey: env.stranger.publicKey, lamports: 1 }),
        ],
      }).compileToV0Message(),
    );
    withTheft.sign([env.vault]);
    const stalled = await signAndSubmit({
      ...input(intent, { tx: withTheft, lastValidBlockHeight: bh.lastValidBlockHeight }),
      attempts: stalledStore,
    });
    const first = await winner;
    expect(first).toMatchObject({ outcome: "confirmed", attempt: 1, resumed: false });
    expect(stalled).toMatchObject({
      outcome: "confirmed",
      attempt: 1,
      resumed: true,
      signature: recorded?.signature,
    });
    expect(await env.attempts.get(intent.key)).toMatchObject({
      status: "confirmed",
      attempt: 1,
      signature: recorded?.signature,
    });
    expect(usdcOf()).toBe(before + PAYOUT);
  });

  it("a re-run with the bytes of an attempt already expired reports expired, not refused", async () => {
    const intent = env.claimIntent();
    const claim = await buildClaim();
    // A first run signed, recorded and saw it expire, then crashed before its caller heard of it.
    const signed = VersionedTransaction.deserialize(claim.tx.serialize());
    signed.addSignature(env.wallet, env.wallets.sign(env.wallet, signed.message.serialize()));
    const signature = bs58.encode(signed.signatures[0] as Uint8Array);
    await env.attempts.recordSigned(intent.key, {
      attempt: 1,
      signature,
      lastValidBlockHeight: claim.lastValidBlockHeight,
      recentBlockhash: signed.message.recentBlockhash,
      signedTransaction: Buffer.from(signed.serialize()).toString("base64"),
    });
    await env.attempts.finish(intent.key, signature, { status: "expired" });
    env.chain.advanceSlots(claim.lastValidBlockHeight - env.chain.blockHeight + 2);

    const sign = vi.spyOn(env.wallets, "sign");
    const again = await signAndSubmit(input(intent, claim));
    expect(again).toMatchObject({ outcome: "expired", attempt: 1, resumed: true, signature });
    expect(sign).not.toHaveBeenCalled();
    expect(await env.attempts.get(intent.key)).toMatchObject({ status: "expired", attempt: 1, signature });
  });
});

/**
 * Every kind of transaction the sandbox service builds passes the policy as Keeper configures it
 * (no options beyond the compute-unit ceiling) and lands: SOL spent once, rent only into the
 * wallet's own token accounts or an order's escrow account.
 */
describe("sandbox-built transactions under the policy", () => {
  let local: RunningLocalChain;
  let owner: Keypair;
  let wallets: Wallets;
  let connection: Connection;
  let counter = 0;

  beforeAll(async () => {
    local = await startLocalChain({ seed: 23, port: 0, slotMs: 100 });
    // The catalogue's SOL entry: the vault's wrapped SOL account, as the sandbox world creates it.
    local.assets.createTokenMints([{ symbol: "sol", decimals: 9, seedLabel: "sol", address: NATIVE_MINT }]);
    owner = Keypair.generate();
    local.assets.fundWallet(owner.publicKey, { sol: 5 });
    wallets = Wallets.fromSecretKeys([owner.secretKey.slice()]);
    connection = new Connection(local.url, "confirmed");
  });
  afterAll(async () => {
    await local?.close();
  });

  const wallet = () => owner.publicKey.toBase58();
  const solOf = () => BigInt(local.chain.lamportsOf(owner.publicKey));
  const usdcBalance = () => local.chain.tokenBalance(owner.publicKey, local.assets.usdcMint);

  async function run(
    intent: Omit<Intent, "key" | "wallet" | "strategy"> & Record<string, unknown>,
    built: { transaction: string; txMeta: { lastValidBlockHeight: number } },
    figures: BuildFigures = {},
  ) {
    counter += 1;
    const full = {
      ...intent,
      key: `${intent.kind}-${counter}`,
      wallet: wallet(),
      strategy: "test",
    } as Intent;
    // The inflow the keeper's sign path expects against the sandbox: its USDC pays claims and closes,
    // and its pool pays a swap's output in the swap's own transaction.
    const inflow = expectedInflow(full, figures, {
      payoutMints: [local.assets.usdcMint.toBase58()],
      toleranceBps: 50,
    });
    return signAndSubmit({
      intent: full,
      ...(inflow ? { inflow } : {}),
      transactionBase64: built.transaction,
      lastValidBlockHeight: built.txMeta.lastValidBlockHeight,
      wallets,
      connection,
      policyConfig: {
        maxComputeUnitPriceMicroLamports: 100_000n,
        maxPriorityFeeLamports: 1_000_000n,
        // The sandbox pool's program pays swap outputs, as keeper configs for the sandbox allow it.
        extraPrograms: [local.assets.poolProgram.toBase58()],
      },
      attempts: env.attempts,
      logger: logs.logger,
      send: { rebroadcastIntervalMs: 150, pollIntervalMs: 50 },
    });
  }

  it("a claim and a close into a wallet with no USDC account yet (its rent stays the wallet's)", async () => {
    const claim = await run(
      { kind: "claim", positionPubkey: Keypair.generate().publicKey.toBase58() },
      local.txFactory.buildClaim({
        owner: owner.publicKey,
        positionPubkey: Keypair.generate().publicKey,
        payoutRaw: 3_000_000n,
      }),
      { amountMicroUsd: "3000000" },
    );
    expect(claim).toMatchObject({ outcome: "confirmed" });
    const close = await run(
      { kind: "close", positionPubkey: Keypair.generate().publicKey.toBase58() },
      local.txFactory.buildClose({
        owner: owner.publicKey,
        positionPubkey: Keypair.generate().publicKey,
        proceedsRaw: 1_000_000n,
      }),
      { minInflowRaw: "1000000" },
    );
    expect(close).toMatchObject({ outcome: "confirmed" });
    expect(usdcBalance()).toBe(4_000_000n);
  });

  it("a USDC trigger order (opening the escrow's account) and a USDC recurring order", async () => {
    const usdc = local.assets.usdcMint;
    const trigger = await run(
      {
        kind: "createTrigger",
        inputMint: usdc.toBase58(),
        outputMint: NATIVE_MINT.toBase58(),
        makingAmount: "1000000",
        takingAmount: "1",
      },
      await local.port.buildOrderEscrow({
        kind: "trigger",
        maker: owner.publicKey,
        inputMint: usdc,
        amountRaw: 1_000_000n,
        orderRef: orderAddress("trigger", `usdc-${counter}`),
      }),
    );
    expect(trigger).toMatchObject({ outcome: "confirmed" });
    const recurring = await run(
      {
        kind: "createRecurring",
        inputMint: usdc.toBase58(),
        outputMint: NATIVE_MINT.toBase58(),
        inAmount: "1000000",
        numberOfOrders: 2,
        intervalSeconds: 60,
      },
      await local.port.buildOrderEscrow({
        kind: "recurring",
        maker: owner.publicKey,
        inputMint: usdc,
        amountRaw: 1_000_000n,
        orderRef: orderAddress("recurring", `usdc-${counter}`),
      }),
    );
    expect(recurring).toMatchObject({ outcome: "confirmed" });
  });

  it("a SOL trigger order from a wallet without wrapped SOL (wrap, escrow, close), then its cancel (unwrap)", async () => {
    const making = LAMPORTS_PER_SOL / 10;
    // An order's address is a program's (off-curve), as on the live service: its escrow is no wallet's.
    const order = new PublicKey(orderAddress("trigger", `sol-${counter}`));
    const solBefore = solOf();
    const created = await run(
      {
        kind: "createTrigger",
        inputMint: NATIVE_MINT.toBase58(),
        outputMint: local.assets.usdcMint.toBase58(),
        makingAmount: String(making),
        takingAmount: "1",
      },
      await local.port.buildOrderEscrow({
        kind: "trigger",
        maker: owner.publicKey,
        inputMint: NATIVE_MINT,
        amountRaw: BigInt(making),
        orderRef: order.toBase58(),
      }),
    );
    expect(created).toMatchObject({ outcome: "confirmed" });
    const spent = solBefore - solOf();
    // The amount once, fees, and at most the escrow's new wrapped SOL account.
    expect(spent).toBeGreaterThan(BigInt(making));
    expect(spent).toBeLessThan(BigInt(making) + 2_039_280n + 20_000n);

    const solMid = solOf();
    const cancelled = await run(
      { kind: "cancelTrigger", order: order.toBase58() },
      await local.port.buildTriggerCancel({ maker: owner.publicKey, order }),
    );
    expect(cancelled).toMatchObject({ outcome: "confirmed" });
    expect(solOf() - solMid).toBeGreaterThan(BigInt(making) - 20_000n);
  });

  it("a SOL → USDC swap (wrap, pay the pool, close) and a USDC → SOL swap", async () => {
    const swap = async (inputMint: PublicKey, outputMint: PublicKey, amount: bigint) => {
      const legs = await local.port.buildSwapLegs({
        taker: owner.publicKey,
        inputMint,
        outputMint,
        inAmountRaw: amount,
        outAmountRaw: 1_000n,
        ref: Keypair.generate().publicKey.toBase58(),
      });
      const message = new TransactionMessage({
        payerKey: owner.publicKey,
        recentBlockhash: bs58.encode(legs.blockhash),
        instructions: [
          ...legs.setupInstructions,
          legs.swapInstruction,
          ...(legs.cleanupInstruction ? [legs.cleanupInstruction] : []),
          ...legs.otherInstructions,
        ],
      }).compileToV0Message();
      return run(
        {
          kind: "swap",
          inputMint: inputMint.toBase58(),
          outputMint: outputMint.toBase58(),
          amount: `${amount}`,
        },
        {
          transaction: Buffer.from(new VersionedTransaction(message).serialize()).toString("base64"),
          txMeta: { lastValidBlockHeight: legs.lastValidBlockHeight },
        },
        { minInflowRaw: "1000" },
      );
    };
    expect(await swap(NATIVE_MINT, local.assets.usdcMint, BigInt(LAMPORTS_PER_SOL / 20))).toMatchObject({
      outcome: "confirmed",
    });
    expect(await swap(local.assets.usdcMint, NATIVE_MINT, 500_000n)).toMatchObject({ outcome: "confirmed" });
  });
});
