import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Connection, type VersionedTransaction } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Intent } from "../../../src/core/intent.js";
import { type SignAndSubmitInput, signAndSubmit } from "../../../src/signer/sign-transaction.js";
import { type RefusingNode, startRefusingNode } from "../../helpers/refusing-rpc.js";
import { type SignerEnv, startSignerEnv } from "./env.js";
import { captureLogger } from "./helpers.js";
import { toBase64 } from "./tx-builders.js";

const PAYOUT = 2_500_000n;
let env: SignerEnv;
let refusing: RefusingNode;
const logs = captureLogger("debug");

beforeAll(async () => {
  env = await startSignerEnv("send-urls", { slotMs: 100 });
  refusing = await startRefusingNode(env.url);
});
afterAll(async () => {
  await refusing?.close();
  await env?.close();
});

async function claimInput(
  intent: Intent,
  connection: Connection,
  alsoSendTo: Connection[],
): Promise<SignAndSubmitInput> {
  const bh = await env.connection.getLatestBlockhash("confirmed");
  const tx: VersionedTransaction = env.claimTransaction(PAYOUT, bh.blockhash);
  return {
    intent,
    transactionBase64: toBase64(tx),
    lastValidBlockHeight: bh.lastValidBlockHeight,
    wallets: env.wallets,
    connection,
    policyConfig: env.policy,
    attempts: env.attempts,
    logger: logs.logger,
    send: { rebroadcastIntervalMs: 150, pollIntervalMs: 50, alsoSendTo },
  };
}

const EXTRA_KEY = "a1b2c3d4e5f6a7b8c9d0e1f2";

/** A loopback port nothing listens on any more. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const usdcOf = () => env.chain.tokenAccount(env.walletUsdc)?.amount ?? 0n;

describe("sending to every configured RPC (rpc.sendUrls)", () => {
  it("lands the transaction through an extra node when the main node refuses every send", async () => {
    const main = new Connection(refusing.url, "confirmed");
    const before = usdcOf();
    const outcome = await signAndSubmit(await claimInput(env.claimIntent(), main, [env.connection]));
    expect(outcome.outcome).toBe("confirmed");
    expect(usdcOf()).toBe(before + PAYOUT);
    // The main node was asked and refused; confirmation was still read from it.
    expect(refusing.refusedSends()).toBeGreaterThanOrEqual(1);
  });

  it("does not fail a send because an extra node is down, and says so only at debug", async () => {
    const dead = new Connection(`http://127.0.0.1:${await closedPort()}/v2/${EXTRA_KEY}`, "confirmed");
    const before = usdcOf();
    const outcome = await signAndSubmit(await claimInput(env.claimIntent(), env.connection, [dead]));
    expect(outcome.outcome).toBe("confirmed");
    expect(usdcOf()).toBe(before + PAYOUT);
    const failures = logs.lines().filter((line) => line.msg === "send to an extra RPC failed");
    expect(failures.length).toBeGreaterThanOrEqual(1);
    expect(failures.map((line) => [line.level, line.sendUrl])).toEqual(failures.map(() => ["debug", 0]));
    // The node is named by its place in rpc.sendUrls, never by its URL, which may hold a key.
    expect(logs.text()).not.toContain(EXTRA_KEY);
  });
});
