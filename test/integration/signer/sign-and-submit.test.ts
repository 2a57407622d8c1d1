import type { VersionedTransaction } from "@solana/web3.js";
import bs58 from "bs58";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { Intent } from "../../../src/core/intent.js";
import { type SignAndSubmitInput, signAndSubmit } from "../../../src/signer/sign-transaction.js";
import { type SignerEnv, startSignerEnv } from "./env.js";
import { captureLogger } from "./helpers.js";
import { toBase64 } from "./tx-builders.js";

const PAYOUT = 7_500_000n;
let env: SignerEnv;
const logs = captureLogger("debug");

beforeAll(async () => {
  env = await startSignerEnv("submit", { slotMs: 20 });
});
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
    const expired = await signAndSubmit(input(intent, first));
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

  it("does not rebuild a transaction that lands late: a re-run resumes it, payout once", async () => {
    env.chain.faults.landDelayMs = 1_200;
    const before = usdcOf();
    const intent = env.claimIntent();
    // The first run gives up (as a job would after its first wait) long before the transaction lands.
    const giveUp = new AbortController();
    setTimeout(() => giveUp.abort(new Error("first wait over")), 300).unref();
    await expect(
      signAndSubmit({ ...input(intent, await buildClaim()), signal: giveUp.signal }),
    ).rejects.toThrow();
    expect(usdcOf()).toBe(before);
    const recorded = await env.attempts.get(intent.key);
    expect(recorded).toMatchObject({ status: "sent", attempt: 1 });

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
    env.chain.dropFirstSends(1);
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
    env.chain.faults.landDelayMs = 300;
    const intent = env.claimIntent();
    const claim = await buildClaim();
    const vaultState = env.chain.getAccount(env.vaultUsdc);
    const run = signAndSubmit(input(intent, claim));
    setTimeout(() => {
      if (!vaultState) return;
      const data = Buffer.from(vaultState.data);
      data.writeBigUInt64LE(0n, 64); // amount
      env.chain.setAccount({
        address: env.vaultUsdc,
        lamports: vaultState.lamports,
        owner: vaultState.owner,
        data,
      });
    }, 100).unref();
    const outcome = await run;
    expect(outcome).toMatchObject({ outcome: "failed", attempt: 1 });
    if (outcome.outcome === "failed")
      expect(outcome.error).toMatch(/^instruction 0: custom program error 0x1$/);
    expect(await env.attempts.get(intent.key)).toMatchObject({ status: "failed" });
    if (vaultState)
      env.chain.setAccount({
        address: env.vaultUsdc,
        lamports: vaultState.lamports,
        owner: vaultState.owner,
        data: vaultState.data,
      });
  });

  it("refuses a fourth transaction for an intent after three expired ones", async () => {
    env.chain.dropFirstSends(1_000_000);
    const intent = env.claimIntent();
    for (let attempt = 1; attempt <= 3; attempt++) {
      const expired = await signAndSubmit({
        ...input(intent, await buildClaim()),
        send: { rebroadcastIntervalMs: 500, pollIntervalMs: 100 },
      });
      expect(expired).toMatchObject({ outcome: "expired", attempt });
    }
    const sign = vi.spyOn(env.wallets, "sign");
    const refused = await signAndSubmit(input(intent, await buildClaim()));
    expect(refused).toMatchObject({ outcome: "refused", reason: "attempts_exhausted" });
    expect(sign).not.toHaveBeenCalled();
  }, 60_000);
});
