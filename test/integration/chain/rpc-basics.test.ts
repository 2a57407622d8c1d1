import { Keypair, LAMPORTS_PER_SOL } from "@solana/web3.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  fundedKeypair,
  type Harness,
  signedTransfer,
  startHarness,
  statusOf,
  waitFor,
} from "./chain-harness.js";

let h: Harness;
beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  await h.close();
});

async function rpc(body: unknown): Promise<unknown> {
  const response = await fetch(h.url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return response.json();
}

describe("local chain over JSON-RPC", () => {
  it("advances slots, block height and blockhashes", async () => {
    // One batch is answered in one go, so both answers see the same slot.
    const [latest, heightAnswer] = (await rpc([
      { jsonrpc: "2.0", id: 1, method: "getLatestBlockhash" },
      { jsonrpc: "2.0", id: 2, method: "getBlockHeight" },
    ])) as [{ result: { value: { lastValidBlockHeight: number } } }, { result: number }];
    expect(latest.result.value.lastValidBlockHeight).toBe(heightAnswer.result + 150);
    const first = await h.connection.getLatestBlockhash();
    const height = await h.connection.getBlockHeight();
    await waitFor(
      async () => ((await h.connection.getBlockHeight()) > height ? true : undefined),
      "a new block",
    );
    const later = await h.connection.getLatestBlockhash();
    expect(later.blockhash).not.toBe(first.blockhash);
    expect(later.lastValidBlockHeight).toBeGreaterThan(first.lastValidBlockHeight);
    expect(await h.connection.getSlot()).toBeGreaterThan(height);
    expect(await h.connection.isBlockhashValid(first.blockhash)).toMatchObject({ value: true });
  });

  it("lands a signed SOL transfer and reports it in statuses and history", async () => {
    const payer = fundedKeypair(h.chain);
    const to = Keypair.generate().publicKey;
    const tx = await signedTransfer(h.connection, payer, to, LAMPORTS_PER_SOL);
    const signature = await h.connection.sendRawTransaction(tx.serialize());
    const status = await waitFor(async () => {
      const s = await statusOf(h.connection, signature);
      return s?.confirmationStatus === "confirmed" ? s : undefined;
    }, "confirmed status");
    expect(status.err).toBeNull();
    expect(await h.connection.getBalance(to)).toBe(LAMPORTS_PER_SOL);
    const got = await h.connection.getTransaction(signature, { maxSupportedTransactionVersion: 0 });
    expect(got?.slot).toBe(status.slot);
    expect(got?.meta?.err).toBeNull();
    expect(got?.meta?.fee).toBe(5_000);
    expect(got?.meta?.logMessages?.[0]).toContain("11111111111111111111111111111111 invoke [1]");
    expect(got?.transaction.signatures[0]).toBe(signature);
    // The payer paid exactly the transfer and the reported fee.
    const [before = 0] = got?.meta?.preBalances ?? [];
    const [after = 0] = got?.meta?.postBalances ?? [];
    expect(before - after).toBe(LAMPORTS_PER_SOL + 5_000);
  });

  it("does not execute a duplicate send twice", async () => {
    const payer = fundedKeypair(h.chain);
    const to = Keypair.generate().publicKey;
    const tx = await signedTransfer(h.connection, payer, to, LAMPORTS_PER_SOL);
    const first = await h.connection.sendRawTransaction(tx.serialize());
    const second = await h.connection.sendRawTransaction(tx.serialize(), { skipPreflight: true });
    expect(second).toBe(first);
    await waitFor(() => statusOf(h.connection, first), "status");
    expect(await h.connection.getBalance(to)).toBe(LAMPORTS_PER_SOL);
  });

  it("refuses a bad signature in preflight and never lands it without preflight", async () => {
    const payer = fundedKeypair(h.chain);
    const tx = await signedTransfer(h.connection, payer, Keypair.generate().publicKey, 1_000_000);
    const bytes = tx.serialize();
    bytes[10] = (bytes[10] ?? 0) ^ 0xff;
    await expect(h.connection.sendRawTransaction(bytes)).rejects.toThrow(/signature verification failure/);
    const signature = await h.connection.sendRawTransaction(bytes, { skipPreflight: true });
    h.chain.advanceSlots(2);
    expect(await statusOf(h.connection, signature)).toBeUndefined();
    expect(h.chain.transaction(signature)).toBeUndefined();
  });

  it("refuses a transaction whose blockhash passed lastValidBlockHeight", async () => {
    const payer = fundedKeypair(h.chain);
    const tx = await signedTransfer(h.connection, payer, Keypair.generate().publicKey, 1_000_000);
    const { lastValidBlockHeight } = await h.connection.getLatestBlockhash();
    // A blockhash is good for 150 blocks; one block past is too late.
    h.chain.advanceSlots(lastValidBlockHeight - h.chain.blockHeight + 1);
    expect(await h.connection.isBlockhashValid(tx.recentBlockhash ?? "")).toMatchObject({ value: false });
    await expect(h.connection.sendRawTransaction(tx.serialize())).rejects.toThrow(/Blockhash not found/);
    const signature = await h.connection.sendRawTransaction(tx.serialize(), { skipPreflight: true });
    h.chain.advanceSlots(1);
    expect(await statusOf(h.connection, signature)).toBeUndefined();
  });

  it("still accepts a blockhash 100 blocks old", async () => {
    const payer = fundedKeypair(h.chain);
    const tx = await signedTransfer(h.connection, payer, Keypair.generate().publicKey, 1_000_000);
    h.chain.advanceSlots(100);
    const signature = await h.connection.sendRawTransaction(tx.serialize());
    const status = await waitFor(() => statusOf(h.connection, signature), "status");
    expect(status.err).toBeNull();
  });

  it("reports an instruction error with the RPC error shape and charges the fee", async () => {
    const payer = fundedKeypair(h.chain, 1);
    const tx = await signedTransfer(h.connection, payer, Keypair.generate().publicKey, 5 * LAMPORTS_PER_SOL);
    await expect(h.connection.sendRawTransaction(tx.serialize())).rejects.toThrow(
      /custom program error|Custom/,
    );
    const signature = await h.connection.sendRawTransaction(tx.serialize(), { skipPreflight: true });
    const status = await waitFor(() => statusOf(h.connection, signature), "status");
    expect(status.err).toEqual({ InstructionError: [0, { Custom: 1 }] });
    expect(await h.connection.getBalance(payer.publicKey)).toBe(LAMPORTS_PER_SOL - 5_000);
  });

  it("answers unknown methods with -32601, bad params with -32602, and batches", async () => {
    expect(await rpc({ jsonrpc: "2.0", id: 1, method: "getNothing" })).toMatchObject({
      id: 1,
      error: { code: -32601 },
    });
    expect(await rpc({ jsonrpc: "2.0", id: 2, method: "getBalance", params: ["not-a-key"] })).toMatchObject({
      id: 2,
      error: { code: -32602 },
    });
    const batch = (await rpc([
      { jsonrpc: "2.0", id: "a", method: "getSlot" },
      { jsonrpc: "2.0", id: "b", method: "getHealth" },
      { jsonrpc: "2.0", id: "c", method: "nope" },
    ])) as { id: string; result?: unknown; error?: { code: number } }[];
    expect(batch.map((r) => r.id)).toEqual(["a", "b", "c"]);
    expect(typeof batch[0]?.result).toBe("number");
    expect(batch[1]?.result).toBe("ok");
    expect(batch[2]?.error?.code).toBe(-32601);
    const broken = await fetch(h.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{",
    });
    expect(await broken.json()).toMatchObject({ error: { code: -32700 } });
  });

  it("answers the node info methods web3.js parses", async () => {
    expect((await h.connection.getVersion())["solana-core"]).toMatch(/^\d/);
    expect(await h.connection.getGenesisHash()).toBe(h.chain.genesisHash);
    const epoch = await h.connection.getEpochInfo();
    expect(epoch.absoluteSlot).toBeGreaterThan(0);
    expect(await h.connection.getMinimumBalanceForRentExemption(165)).toBeGreaterThan(0);
  });
});
