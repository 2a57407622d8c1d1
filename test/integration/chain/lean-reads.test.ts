import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  createAssociatedTokenAccountIdempotentInstruction,
  getAssociatedTokenAddressSync,
  TOKEN_PROGRAM_ID,
} from "@solana/spl-token";
import {
  Connection,
  Keypair,
  type SimulatedTransactionResponse,
  TransactionMessage,
  VersionedTransaction,
} from "@solana/web3.js";
import bs58 from "bs58";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createJsonRpc, type JsonRpcOptions } from "../../../src/chain/json-rpc.js";
import { withLeanReads } from "../../../src/chain/lean-reads.js";
import { withLeanSendAndWatch } from "../../../src/chain/lean-send-and-watch.js";
import { rpcCall } from "../../../src/chain/rpc.js";
import { PermanentError, TransientError } from "../../../src/core/errors.js";
import { fundedKeypair, type Harness, signedTransfer, startHarness, waitFor } from "./chain-harness.js";

/** Inner instructions with their keys as text, as the node sends them (web3.js makes them PublicKeys). */
function keysAsText(groups: SimulatedTransactionResponse["innerInstructions"]) {
  return groups?.map((group) => ({
    index: group.index,
    instructions: group.instructions.map((ix) => ({
      ...ix,
      programId: ix.programId.toString(),
      ...("accounts" in ix ? { accounts: ix.accounts.map((a) => a.toString()) } : {}),
    })),
  }));
}

describe("the signer's lean reads answer as web3.js does, on the local chain", () => {
  let h: Harness;
  let lean: Connection;
  beforeEach(async () => {
    h = await startHarness();
    lean = withLeanReads(h.connection, createJsonRpc(h.url));
  });
  afterEach(() => h.close());

  it("reads accounts: a wallet, a token account, one that does not exist and a program", async () => {
    const payer = fundedKeypair(h.chain, 3);
    const mint = h.chain.createMint({ address: Keypair.generate(), decimals: 6, authority: payer.publicKey });
    const tokens = h.chain.mintTo(mint, payer.publicKey, 1_234_567n);
    const keys = [payer.publicKey, tokens, Keypair.generate().publicKey, TOKEN_PROGRAM_ID, mint];
    const read = await lean.getMultipleAccountsInfo(keys, "confirmed");
    expect(read).toEqual(await h.connection.getMultipleAccountsInfo(keys, "confirmed"));
    expect(read[0]?.lamports).toBe(3_000_000_000);
    expect(read[1]?.owner.equals(TOKEN_PROGRAM_ID)).toBe(true);
    expect(read[2]).toBeNull();
    expect(read[3]?.executable).toBe(true);
  });

  it("simulates with inner instructions and the post-state of named accounts", async () => {
    const payer = fundedKeypair(h.chain);
    const mint = h.chain.createMint({ address: Keypair.generate(), decimals: 6, authority: payer.publicKey });
    const ata = getAssociatedTokenAddressSync(mint, payer.publicKey);
    const { blockhash } = await h.connection.getLatestBlockhash();
    const unsigned = new VersionedTransaction(
      new TransactionMessage({
        payerKey: payer.publicKey,
        recentBlockhash: blockhash,
        instructions: [
          createAssociatedTokenAccountIdempotentInstruction(payer.publicKey, ata, payer.publicKey, mint),
        ],
      }).compileToV0Message(),
    );
    const config = {
      sigVerify: false,
      replaceRecentBlockhash: false,
      commitment: "confirmed" as const,
      innerInstructions: true,
      accounts: { encoding: "base64" as const, addresses: [payer.publicKey.toBase58(), ata.toBase58()] },
    };
    const ours = (await lean.simulateTransaction(unsigned, config)).value;
    const theirs = (await h.connection.simulateTransaction(unsigned, config)).value;
    expect(ours.err).toBeNull();
    expect(ours.logs).toEqual(theirs.logs);
    expect(ours.unitsConsumed).toBe(theirs.unitsConsumed);
    expect(ours.accounts).toEqual(theirs.accounts);
    expect(ours.accounts?.[1]?.owner).toBe(TOKEN_PROGRAM_ID.toBase58());
    expect(ours.innerInstructions?.[0]?.instructions.length).toBeGreaterThan(0);
    expect(keysAsText(ours.innerInstructions)).toEqual(keysAsText(theirs.innerInstructions));
  });

  it("reads a landed transaction's status, an unknown one's, and the block height", async () => {
    const watch = withLeanSendAndWatch(h.connection, createJsonRpc(h.url));
    const payer = fundedKeypair(h.chain);
    const transfer = await signedTransfer(h.connection, payer, Keypair.generate().publicKey, 1_000_000_000);
    const signature = await watch.sendRawTransaction(transfer.serialize(), {
      skipPreflight: true,
      maxRetries: 0,
    });
    expect(signature).toBe(bs58.encode(transfer.signature ?? new Uint8Array()));
    const unknown = "1".repeat(64);
    const landed = await waitFor(async () => {
      const { value } = await watch.getSignatureStatuses([signature, unknown]);
      return value[0]?.confirmationStatus === "finalized" ? value : undefined;
    }, "the transfer finalized");
    expect(landed[1]).toBeNull();
    const { value: theirs } = await h.connection.getSignatureStatuses([signature, unknown]);
    expect(landed).toEqual(theirs);
    const history = await watch.getSignatureStatuses([signature], { searchTransactionHistory: true });
    expect(history.value[0]?.slot).toBe(theirs[0]?.slot);
    const before = await h.connection.getBlockHeight("confirmed");
    const height = await watch.getBlockHeight("confirmed");
    expect(height).toBeGreaterThanOrEqual(before);
    expect(height).toBeLessThanOrEqual(await h.connection.getBlockHeight("confirmed"));
  });

  it("asks whether a blockhash is still valid: a fresh one is, one never issued is not", async () => {
    const watch = withLeanSendAndWatch(h.connection, createJsonRpc(h.url));
    const { blockhash } = await h.connection.getLatestBlockhash("confirmed");
    const fresh = await watch.isBlockhashValid(blockhash, { commitment: "processed" });
    expect(fresh.value).toBe(true);
    expect(fresh.context.slot).toBeGreaterThan(0);
    const neverIssued = Keypair.generate().publicKey.toBase58();
    const ours = await watch.isBlockhashValid(neverIssued, { commitment: "processed" });
    expect(ours.value).toBe(false);
    expect(ours.value).toBe(
      (await h.connection.isBlockhashValid(neverIssued, { commitment: "processed" })).value,
    );
  });
});

/** An RPC node outside the process that answers each call with what the test sets. */
interface FakeNode {
  url: string;
  /** The body of the last request. */
  lastBody?: string;
  answer: (request: IncomingMessage, response: ServerResponse) => void;
  close(): Promise<void>;
}

async function fakeNode(): Promise<FakeNode> {
  const node: FakeNode = {
    url: "",
    answer: (_req, res) => res.end("{}"),
    close: async () => {},
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      node.lastBody = Buffer.concat(chunks).toString();
      node.answer(req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  // The provider's key in the URL, as hosted RPCs take it: no error may show it.
  node.url = `http://127.0.0.1:${port}/rpc?api-key=PROVIDER-KEY-7f3a`;
  node.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return node;
}

const json =
  (body: unknown, status = 200) =>
  (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(typeof body === "string" ? body : JSON.stringify(body));
  };
const result = (value: unknown) => json({ jsonrpc: "2.0", id: 1, result: { context: { slot: 9 }, value } });

const KEY = "11111111111111111111111111111111";
const ACCOUNT = { lamports: 5, owner: KEY, executable: false, data: ["", "base64"], rentEpoch: 0 };

describe("the signer's lean reads from a node that answers badly", () => {
  let node: FakeNode;
  beforeAll(async () => {
    node = await fakeNode();
  });
  afterAll(() => node.close());

  const reader = (options: JsonRpcOptions = {}) =>
    withLeanReads(
      new Connection(node.url, "confirmed"),
      createJsonRpc(node.url, { timeoutMs: 500, ...options }),
    );
  const keys = [Keypair.generate().publicKey, Keypair.generate().publicKey];
  /** What rpcCall makes of an account read, as the policy calls it (no retries). */
  const readError = async (options: JsonRpcOptions = {}) => {
    const lean = reader(options);
    const error = await rpcCall("getMultipleAccountsInfo", () => lean.getMultipleAccountsInfo(keys), {
      retries: 0,
    }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error?.message).not.toContain("PROVIDER-KEY");
    return error;
  };

  it.each([
    ["not JSON", json("<html>busy</html>"), "RPC answer is not JSON"],
    ["no result", json({ jsonrpc: "2.0", id: 1 }), "RPC answer has neither result nor error"],
    ["no context", json({ jsonrpc: "2.0", id: 1, result: { value: [] } }), "the answer is not { context"],
    ["one account short", result([ACCOUNT]), "value is not an array of 2 accounts"],
    [
      "lamports as text",
      result([ACCOUNT, { ...ACCOUNT, lamports: "5" }]),
      "value[1].lamports is not a whole",
    ],
    ["negative lamports", result([{ ...ACCOUNT, lamports: -1 }, null]), "value[0].lamports is not a whole"],
    [
      "owner not a key",
      result([{ ...ACCOUNT, owner: "0OIl" }, null]),
      "value[0].owner is not a base58 public key",
    ],
    [
      "data in base58",
      result([{ ...ACCOUNT, data: ["", "base58"] }, null]),
      'value[0].data is not [base64 text, "base64"]',
    ],
    [
      "executable missing",
      result([{ ...ACCOUNT, executable: undefined }, null]),
      "value[0].executable is not a boolean",
    ],
    ["HTTP 429", json({ error: "slow down" }, 429), "RPC node answered HTTP 429"],
  ])("%s: a transient error naming what is wrong", async (_case, answer, message) => {
    node.answer = answer;
    const error = await readError();
    expect(error).toBeInstanceOf(TransientError);
    expect(error?.message).toContain(`getMultipleAccountsInfo: `);
    expect(error?.message).toContain(message);
  });

  it("names a redirect as the setting to fix, and a node it cannot reach without its host", async () => {
    node.answer = (_req, res) => {
      res.writeHead(301, { location: "https://elsewhere.example/" });
      res.end();
    };
    expect((await readError())?.message).toContain(
      "RPC node answered HTTP 301, a redirect: set rpc.url to where it leads",
    );
    // A host name that holds the provider's key (some put it there) is not repeated either.
    const lean = withLeanReads(
      new Connection("http://127.0.0.1:1"),
      createJsonRpc("http://provider-key-7f3a.invalid/", { timeoutMs: 2_000 }),
    );
    const error = (await lean.getMultipleAccountsInfo(keys).catch((e: unknown) => e)) as Error;
    expect(error.message).toMatch(/^RPC node unreachable \((ENOTFOUND|EAI_AGAIN)\)$/);
  });

  it("keeps the node's refusal code: invalid params is permanent, an unhealthy node transient", async () => {
    node.answer = json({ jsonrpc: "2.0", id: 1, error: { code: -32602, message: "Invalid param: bad key" } });
    const refused = await readError();
    expect(refused).toBeInstanceOf(PermanentError);
    expect(refused?.message).toBe("getMultipleAccountsInfo: RPC error -32602: Invalid param: bad key");
    node.answer = json({ jsonrpc: "2.0", id: 1, error: { code: -32005, message: "Node is behind" } });
    expect(await readError()).toBeInstanceOf(TransientError);
  });

  it("refuses an answer larger than its cap, and one that does not come in time", async () => {
    node.answer = result([ACCOUNT, { ...ACCOUNT, data: ["A".repeat(10_000), "base64"] }]);
    expect((await readError({ maxAnswerBytes: 4_096 }))?.message).toContain(
      "RPC answer larger than 4096 bytes",
    );
    node.answer = () => {};
    const late = await readError({ timeoutMs: 200 });
    expect(late).toBeInstanceOf(TransientError);
    expect(late?.message).toContain("no answer from the RPC node in 200 ms");
  });

  it("checks each part of a simulation the policy reads", async () => {
    const transaction = new VersionedTransaction(
      new TransactionMessage({
        payerKey: keys[0] ?? Keypair.generate().publicKey,
        recentBlockhash: KEY,
        instructions: [],
      }).compileToV0Message(),
    );
    const good = {
      err: null,
      logs: ["Program log: ok"],
      accounts: [{ lamports: 1, owner: KEY, data: ["", "base64"], executable: false, rentEpoch: 0 }],
      unitsConsumed: 150,
      innerInstructions: [{ index: 0, instructions: [{ programId: KEY, accounts: [KEY], data: "3Bxs4" }] }],
    };
    const simulate = () =>
      reader().simulateTransaction(transaction, { sigVerify: false, innerInstructions: true });
    node.answer = result(good);
    expect((await simulate()).value).toEqual(good);
    const bad: Array<[unknown, string]> = [
      [{ ...good, logs: [1] }, "value.logs is not null or a list of text lines"],
      [{ ...good, err: 7 }, "value.err is not null, an error name or an error object"],
      [{ ...good, unitsConsumed: -1 }, "value.unitsConsumed is not a whole number"],
      [
        { ...good, accounts: [{ ...good.accounts[0], data: "AA==" }] },
        'value.accounts[0].data is not [base64 text, "base64"]',
      ],
      [
        { ...good, accounts: [{ ...good.accounts[0], data: ["1", "base58"] }] },
        'value.accounts[0].data is not [base64 text, "base64"]',
      ],
      [{ ...good, accounts: [{ ...good.accounts[0], owner: 3 }] }, "value.accounts[0].owner is not a base58"],
      [
        { ...good, innerInstructions: [{ index: 0, instructions: [{ accounts: [], data: "" }] }] },
        "value.innerInstructions[0].instructions[0].programId is not a base58 public key",
      ],
      [
        {
          ...good,
          innerInstructions: [
            { index: 0, instructions: [{ programId: KEY, data: 5, parsed: {}, program: "x" }] },
          ],
        },
        "value.innerInstructions[0].instructions[0] is not a raw { accounts, data } or a parsed",
      ],
      [
        { ...good, innerInstructions: [{ instructions: [] }] },
        "value.innerInstructions[0] is not { index, instructions }",
      ],
    ];
    for (const [value, message] of bad) {
      node.answer = result(value);
      await expect(simulate()).rejects.toThrow(`RPC simulateTransaction: ${message}`);
    }
  });
});

describe("the signer's lean send and watch from a node that answers badly", () => {
  let node: FakeNode;
  beforeAll(async () => {
    node = await fakeNode();
  });
  afterAll(() => node.close());
  const watch = () =>
    withLeanSendAndWatch(new Connection(node.url, "confirmed"), createJsonRpc(node.url, { timeoutMs: 500 }));
  const SIGNATURES = ["1".repeat(64), "2".repeat(64)];
  const STATUS = { slot: 9, confirmations: 1, err: null, confirmationStatus: "confirmed" };

  it("passes a good answer through, and asks for the history only when told to", async () => {
    node.answer = result([STATUS, null]);
    expect((await watch().getSignatureStatuses(SIGNATURES)).value).toEqual([STATUS, null]);
    expect(JSON.parse(node.lastBody ?? "").params).toEqual([SIGNATURES]);
    node.answer = result([{ ...STATUS, err: { InstructionError: [0, "Custom"] } }, null]);
    const failed = await watch().getSignatureStatuses(SIGNATURES, { searchTransactionHistory: true });
    expect(failed.value[0]?.err).toEqual({ InstructionError: [0, "Custom"] });
    expect(JSON.parse(node.lastBody ?? "").params).toEqual([SIGNATURES, { searchTransactionHistory: true }]);
  });

  it.each([
    ["one status short", [STATUS], "value is not a list of 2 statuses"],
    ["a status as text", [STATUS, "confirmed"], "value[1] is not a status or null"],
    ["slot as text", [{ ...STATUS, slot: "9" }, null], "value[0].slot is not a whole number"],
    ["negative confirmations", [{ ...STATUS, confirmations: -1 }, null], "value[0].confirmations is not"],
    ["err as a number", [{ ...STATUS, err: 3 }, null], "value[0].err is not null, an error name"],
    [
      "an unknown confirmation status",
      [{ ...STATUS, confirmationStatus: "rooted" }, null],
      "value[0].confirmationStatus is not processed, confirmed or finalized",
    ],
  ])("%s: a transient error naming the field", async (_case, value, message) => {
    node.answer = result(value);
    const error = await rpcCall("getSignatureStatuses", () => watch().getSignatureStatuses(SIGNATURES), {
      retries: 0,
    }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error).toBeInstanceOf(TransientError);
    expect(error?.message).toContain(`RPC getSignatureStatuses: ${message}`);
    expect(error?.message).not.toContain("PROVIDER-KEY");
  });

  it("sends without preflight as plain JSON-RPC, and any other send through web3.js", async () => {
    const signature = "5".repeat(88);
    node.answer = json({ jsonrpc: "2.0", id: 1, result: signature });
    const bytes = new Uint8Array([1, 2, 3]);
    expect(await watch().sendRawTransaction(bytes, { skipPreflight: true, maxRetries: 0 })).toBe(signature);
    expect(JSON.parse(node.lastBody ?? "").params).toEqual([
      "AQID",
      { encoding: "base64", skipPreflight: true, maxRetries: 0, preflightCommitment: "processed" },
    ]);
    for (const bad of [null, 7, "not a signature", "0".repeat(88)]) {
      node.answer = json({ jsonrpc: "2.0", id: 1, result: bad });
      await expect(watch().sendRawTransaction(bytes, { skipPreflight: true })).rejects.toThrow(
        "RPC sendTransaction: the answer is not a base58 signature",
      );
    }
    node.answer = json({ jsonrpc: "2.0", id: 1, error: { code: -32003, message: "signature failure" } });
    const refused = await rpcCall(
      "sendTransaction",
      () => watch().sendRawTransaction(bytes, { skipPreflight: true }),
      {
        retries: 0,
      },
    ).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(refused).toBeInstanceOf(PermanentError);
    expect(refused?.message).not.toContain("PROVIDER-KEY");
    // With a preflight, web3.js sends it (its error carries the simulation's logs).
    node.answer = json({ jsonrpc: "2.0", id: "1", result: signature });
    expect(await watch().sendRawTransaction(bytes)).toBe(signature);
    expect(JSON.parse(node.lastBody ?? "").params[1]).toEqual({
      encoding: "base64",
      preflightCommitment: "confirmed",
    });
  });

  it("checks the node's word on a blockhash: true or false, asked at the commitment given", async () => {
    const blockhash = "4".repeat(44);
    node.answer = result(false);
    expect((await watch().isBlockhashValid(blockhash, { commitment: "processed" })).value).toBe(false);
    expect(JSON.parse(node.lastBody ?? "").params).toEqual([blockhash, { commitment: "processed" }]);
    for (const bad of ["true", 1, null]) {
      node.answer = result(bad);
      await expect(watch().isBlockhashValid(blockhash, { commitment: "confirmed" })).rejects.toThrow(
        "RPC isBlockhashValid: value is not true or false",
      );
    }
  });

  it("checks the block height: a whole number, asked at the commitment given", async () => {
    node.answer = json({ jsonrpc: "2.0", id: 1, result: 1234 });
    expect(await watch().getBlockHeight("finalized")).toBe(1234);
    expect(JSON.parse(node.lastBody ?? "").params).toEqual([{ commitment: "finalized" }]);
    for (const bad of [-1, "1234", 1.5, null]) {
      node.answer = json({ jsonrpc: "2.0", id: 1, result: bad });
      await expect(watch().getBlockHeight("confirmed")).rejects.toThrow(
        "RPC getBlockHeight: the answer is not a whole number",
      );
    }
  });
});
