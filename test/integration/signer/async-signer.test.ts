import type { PublicKey } from "@solana/web3.js";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { type SignAndSubmitInput, signAndSend, watchAttempt } from "../../../src/signer/sign-transaction.js";
import type { Signer } from "../../../src/signer/signer.js";
import { type SignerEnv, startSignerEnv } from "./env.js";
import { captureLogger } from "./helpers.js";
import { toBase64 } from "./tx-builders.js";

const PAYOUT = 2_500_000n;
let env: SignerEnv;
const logs = captureLogger("debug");

beforeAll(async () => {
  env = await startSignerEnv("async-signer", { slotMs: 100 });
});
afterEach(() => {
  vi.restoreAllMocks();
});
afterAll(async () => {
  expect(logs.capture.leaked(env.secretForms)).toEqual([]);
  await env?.close();
});

/** A remote signer (a KMS): answers after a delay, or not at all. Holds no key itself here. */
function remoteSigner(
  answer: (wallet: PublicKey | string, message: Uint8Array) => Promise<Uint8Array>,
): Signer & {
  calls: number;
} {
  const signer = {
    calls: 0,
    has: (wallet: PublicKey | string) => env.wallets.has(wallet),
    sign: async (wallet: PublicKey | string, message: Uint8Array) => {
      signer.calls += 1;
      return answer(wallet, message);
    },
  };
  return signer;
}

async function claimInput(wallets: Signer): Promise<SignAndSubmitInput> {
  const bh = await env.connection.getLatestBlockhash("confirmed");
  return {
    intent: env.claimIntent(),
    transactionBase64: toBase64(env.claimTransaction(PAYOUT, bh.blockhash)),
    lastValidBlockHeight: bh.lastValidBlockHeight,
    wallets,
    connection: env.connection,
    policyConfig: env.policy,
    attempts: env.attempts,
    logger: logs.logger,
    send: { rebroadcastIntervalMs: 150, pollIntervalMs: 50 },
  };
}

const usdcOf = () => env.chain.tokenAccount(env.walletUsdc)?.amount ?? 0n;

describe("the signer call site awaits an asynchronous Signer", () => {
  it("a signer that answers later: the signature is recorded, sent once, and the watcher confirms it", async () => {
    const before = usdcOf();
    const slow = remoteSigner(async (wallet, message) => {
      await new Promise((resolve) => setTimeout(resolve, 200));
      return env.wallets.sign(wallet, message);
    });
    const input = await claimInput(slow);
    const heights = vi.spyOn(env.connection, "getBlockHeight");
    const sent = await signAndSend(input);
    // One read of the block height serves the lifetime cap and the policy's staleness check.
    expect(heights).toHaveBeenCalledTimes(1);
    heights.mockRestore();
    expect(sent).toMatchObject({ outcome: "sent", attempt: 1, resumed: false });
    if (sent.outcome !== "sent") return;
    expect(slow.calls).toBe(1);
    expect((await env.attempts.get(input.intent.key))?.signature).toBe(sent.signature);

    const outcome = await watchAttempt({ ...input, intentKey: input.intent.key, resumed: false });
    expect(outcome).toMatchObject({ outcome: "confirmed", signature: sent.signature, resumed: false });
    expect(usdcOf()).toBe(before + PAYOUT);
    expect(env.chain.transaction(sent.signature)?.err).toBeNull();
  });

  it("a signer that fails (the KMS is down): nothing recorded, nothing sent, the error reaches the caller", async () => {
    const before = usdcOf();
    const down = remoteSigner(async () => {
      await new Promise((resolve) => setTimeout(resolve, 50));
      throw new Error("signing service unavailable");
    });
    const input = await claimInput(down);
    await expect(signAndSend(input)).rejects.toThrow("signing service unavailable");
    expect(down.calls).toBe(1);
    expect(await env.attempts.get(input.intent.key)).toBeUndefined();
    expect(usdcOf()).toBe(before);
  });
});
